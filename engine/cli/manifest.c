/*
 * manifest.c: the lines of a batch manifest read and split (manifest.h).
 * The program layer; no Lua.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

char *kvp_manifest_line(FILE *f, const char *path, int lineno, size_t *len, int *bad, char *err,
                        size_t errlen) {
  char *line = NULL;
  size_t n = 0, cap = 0;
  int c;
  *len = 0;
  while ((c = getc(f)) != EOF && c != '\n') {
    if (c == '\0') {
      snprintf(err, errlen, "%s:%d: a NUL byte at byte %zu of the line (a manifest is text)", path,
               lineno, n + 1);
      free(line);
      *bad = 1;
      return NULL;
    }
    if (n + 1 >= cap) {
      size_t want = cap ? 2 * cap : 256;
      char *p = want > cap ? realloc(line, want) : NULL;
      if (p == NULL) {
        free(line);
        *bad = -1;
        return NULL;
      }
      line = p;
      cap = want;
    }
    line[n++] = (char)c;
  }
  if (ferror(f)) {
    snprintf(err, errlen, "cannot read manifest '%s': %s", path, strerror(errno));
    free(line);
    *bad = 1;
    return NULL;
  }
  if (c == EOF && n == 0) {
    free(line);
    return NULL;
  }
  if (line == NULL && (line = malloc(1)) == NULL) {
    *bad = -1;
    return NULL;
  }
  line[n] = '\0';
  *len = n;
  return line;
}

int kvp_manifest_split(char *line, char **out, int max) {
  int n = 0;
  char *p = line;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    if (*p == '\0' || *p == '#') return n;
    if (n >= max) return -1;
    char *dst = p;
    out[n++] = dst;
    int quoted = 0;
    while (*p != '\0' && (quoted || (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n'))) {
      if (*p == '"') {
        quoted = !quoted;
        p++;
        continue;
      }
      *dst++ = *p++;
    }
    if (quoted) return -1;
    if (*p != '\0') p++;
    *dst = '\0';
  }
}

int kvp_manifest_name_ok(const char *name, size_t max) {
  size_t n = 0;
  for (const char *p = name; *p; p++, n++)
    if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '-')) return 0;
  return n > 0 && n < max;
}
