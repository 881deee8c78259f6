/*
 * harness.c: the libFuzzer entry shared by kvplan's fuzz targets.
 * Each target (fuzz_*.lua) is a Lua chunk that gets the input as a string
 * and a scratch directory, writes whatever files it needs there and calls
 * the loader under test in pcall: a Lua error is a correct answer to bad
 * input; a crash, a sanitizer report, a leak or a hang is a finding.
 *
 * Built twice: with clang -fsanitize=fuzzer (make fuzz; libFuzzer's main),
 * and with -DKVP_REPLAY and the normal compiler (make test replays every
 * input in tests/fuzz/corpus/TARGET/ through the same entry).
 * TARGET_LUA names the target's chunk, embedded at build time.
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lualib.h>

#include "kvplan_lua.h"

#include TARGET_LUA /* static const char target[] = "..." */

static char scratch[] = "/tmp/kvplan-fuzz-XXXXXX";
static int made;

/* libFuzzer ends with exit() at -max_total_time: remove the scratch then */
static void cleanup(void) {
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", scratch);
  if (made && system(cmd) != 0) fprintf(stderr, "kvplan fuzz: cannot remove %s\n", scratch);
  made = 0;
}

static void init(void) {
  if (made) return;
  if (mkdtemp(scratch) == NULL) {
    perror("kvplan fuzz: mkdtemp");
    abort();
  }
  made = 1;
  atexit(cleanup);
}

/* One state for up to 500 inputs (loading the stdlib per input would make
 * this 20 times slower), then a fresh one, so catalogs that inputs added do
 * not pile up; the target's chunk is kept in the registry. */
static lua_State *state;
static int uses;

static void drop_state(void) {
  if (state != NULL) lua_close(state);
  state = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  init();
  if (state != NULL && ++uses >= 500) drop_state();
  if (state == NULL) {
    uses = 0;
    state = luaL_newstate();
    if (state == NULL) return 0;
    luaL_openlibs(state);
    kvp_preload(state);
    if (luaL_loadbuffer(state, target, sizeof target - 1, "=target") != LUA_OK) {
      fprintf(stderr, "kvplan fuzz: the target does not load: %s\n", lua_tostring(state, -1));
      abort();
    }
    lua_setfield(state, LUA_REGISTRYINDEX, "kvplan.fuzz_target");
  }
  lua_State *L = state;
  lua_getfield(L, LUA_REGISTRYINDEX, "kvplan.fuzz_target");
  lua_pushlstring(L, (const char *)data, size);
  lua_pushstring(L, scratch);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) { /* the target's own pcall failed: a bug in it */
    fprintf(stderr, "kvplan fuzz: the target failed: %s\n", lua_tostring(L, -1));
    abort();
  }
  lua_settop(L, 0);
  return 0;
}

#ifdef KVP_REPLAY
/* replay FILE|DIR...: every input through the target; status 0 when none
 * crashed (a crash does not return) */
static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return perror(path), 1;
  size_t cap = 1 << 16, n = 0, got;
  uint8_t *buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (buf == NULL) return 1;
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int rc = 0, count = 0;
  for (int i = 1; i < argc; i++) {
    DIR *d = opendir(argv[i]);
    if (d == NULL) {
      rc |= replay_file(argv[i]);
      count++;
      continue;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      char p[4096];
      snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
      rc |= replay_file(p);
      count++;
    }
    closedir(d);
  }
  drop_state();
  printf("%d inputs\n", count);
  return rc;
}
#endif
