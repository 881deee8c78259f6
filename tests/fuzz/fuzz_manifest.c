/*
 * fuzz_manifest.c: kvplan batch's manifest reader (engine/cli/manifest.c)
 * on hostile manifests, as cmd_batch reads them: each line whatever its
 * length, split into words in place, a first word 'NAME:' checked. A line
 * must come back whole (its bytes, no NUL), every word inside its line and
 * free of quotes, a name accepted only when it is a
 * report name. A finding is a crash, a sanitizer report, a leak or a failed
 * check (abort). Built like the Lua targets: with -fsanitize=fuzzer (make
 * fuzz), and with -DKVP_REPLAY for make test's replay of
 * tests/fuzz/corpus/manifest/.
 */
#define _DEFAULT_SOURCE /* fmemopen */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_manifest: %s\n", #c); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  FILE *f = fmemopen((void *)(uintptr_t)data, size, "rb");
  if (f == NULL) return 0;
  size_t at = 0; /* where the next line starts in data */
  int lineno = 0, bad = 0;
  char *line, err[512];
  size_t len;
  while ((line = kvp_manifest_line(f, "m", ++lineno, &len, &bad, err, sizeof err)) != NULL) {
    /* the line whole: data's bytes up to the newline, none of them NUL */
    CHECK(strlen(line) == len && at + len <= size && memcmp(line, data + at, len) == 0);
    CHECK(at + len == size || data[at + len] == '\n');
    at += len + 1;
    char *copy = malloc(len + 1), *ws[256];
    CHECK(copy != NULL);
    memcpy(copy, line, len + 1);
    int n = kvp_manifest_split(copy, ws, 256);
    for (int i = 0; i < n; i++) {
      CHECK(ws[i] >= copy && ws[i] + strlen(ws[i]) <= copy + len);
      CHECK(strchr(ws[i], '"') == NULL); /* quotes dropped (blanks inside them kept) */
    }
    if (n > 0) {
      size_t l0 = strlen(ws[0]);
      if (l0 > 1 && ws[0][l0 - 1] == ':') {
        ws[0][l0 - 1] = '\0';
        if (kvp_manifest_name_ok(ws[0], 256))
          CHECK(strspn(ws[0], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
                == l0 - 1 && l0 - 1 < 256 && strstr(ws[0], "/") == NULL);
      }
    }
    free(copy);
    free(line);
  }
  if (bad > 0) CHECK(strstr(err, "a NUL byte") != NULL && memchr(data + at, 0, size - at) != NULL);
  else CHECK(bad == 0 && at >= size);
  fclose(f);
  return 0;
}

#ifdef KVP_REPLAY
/* replay FILE|DIR...: every input through the target (as harness.c's) */
static void replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    exit(1);
  }
  size_t cap = 1 << 16, n = 0, got;
  uint8_t *buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (buf == NULL) exit(1);
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
}

int main(int argc, char **argv) {
  int count = 0;
  for (int i = 1; i < argc; i++) {
    DIR *d = opendir(argv[i]);
    if (d == NULL) {
      replay_file(argv[i]);
      count++;
      continue;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      char p[4096];
      snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
      replay_file(p);
      count++;
    }
    closedir(d);
  }
  printf("%d inputs\n", count);
  return 0;
}
#endif
