/*
 * tests/bench/lua_call.c: the floor of calling Lua once per row, for
 * `make bench`: what one lua_pcall of an empty Lua function with a table
 * argument costs on this machine, and what building a 16-field table per call
 * (and collecting it) adds. A sweep with a filter or a Lua column pays at
 * least the first for every row it shows Lua. CPU time of this process,
 * best of 3 rounds of 2,000,000 calls. Usage: lua_call
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <time.h>

#define CALLS 2000000

static double cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ns per call of fn(row), with a new 16-field row table per call if fresh */
static double round_ns(lua_State *L, int fn, int row, int keys, int fresh) {
  double best = 1e30;
  for (int round = 0; round < 3; round++) {
    double t0 = cpu();
    for (int i = 0; i < CALLS; i++) {
      lua_pushvalue(L, fn);
      if (fresh) {
        lua_createtable(L, 0, 16);
        for (int k = 0; k < 16; k++) {
          lua_pushvalue(L, keys + k);
          lua_pushinteger(L, i + k);
          lua_rawset(L, -3);
        }
      } else {
        lua_pushvalue(L, row);
      }
      if (lua_pcall(L, 1, 1, 0) != LUA_OK) return -1;
      lua_pop(L, 1);
    }
    double ns = (cpu() - t0) / CALLS * 1e9;
    if (ns < best) best = ns;
  }
  return best;
}

int main(void) {
  lua_State *L = luaL_newstate();
  if (L == NULL) return 1;
  luaL_openlibs(L);
  if (luaL_dostring(L, "return function(r) end") != LUA_OK) return 1;
  int fn = lua_gettop(L);
  lua_newtable(L);
  int row = lua_gettop(L);
  luaL_checkstack(L, 20, "keys");
  int keys = lua_gettop(L) + 1;
  for (int k = 0; k < 16; k++) lua_pushfstring(L, "field_%d", k);
  double call = round_ns(L, fn, row, keys, 0), table = round_ns(L, fn, row, keys, 1);
  if (call < 0 || table < 0) return 1;
  printf("lua_pcall of an empty function %.1f ns a call; with a 16-field table made per call %.1f ns\n",
         call, table);
  lua_close(L);
  return 0;
}
