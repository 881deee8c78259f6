/*
 * kvplan_lua.c: luaopen_kvplan, the entry of require "kvplan" both inside the
 * kvplan binary and from a stock lua5.4 loading build/kvplan.so.
 * Binding layer: registers the embedded stdlib modules and the C modules in
 * package.preload, then runs the package's init module. Each stdlib module
 * runs in an environment of its own where an undeclared global is an error.
 */
#include <string.h>

#include "embed.h"
#include "kvplan_lua.h"

/* The C modules of the package, one line each. */
static const luaL_Reg cmods[] = {
  {"kvplan.core", luaopen_kvplan_core},
  {"kvplan.csv", luaopen_kvplan_csv},
  {"kvplan.optim_core", luaopen_kvplan_optim_core},
  {"kvplan.json", luaopen_kvplan_json},
  {"kvplan.sweep_core", luaopen_kvplan_sweep_core},
  {"kvplan.sim_core", luaopen_kvplan_sim_core},
  {"kvplan.predict_core", luaopen_kvplan_predict_core},
  {NULL, NULL}
};

/* A stdlib module that reads or assigns a global the globals table lacks is
 * an error naming the module (upvalue 1) and the name, at the module's line. */
static int undeclared(lua_State *L, const char *what) {
  return luaL_error(L, "stdlib module '%s' %s the undeclared global '%s'",
                    lua_tostring(L, lua_upvalueindex(1)), what, luaL_tolstring(L, 2, NULL));
}

/* __index of a module's environment: a global the globals table holds is
 * copied in at its first read, so every later read is a plain table hit. */
static int env_index(lua_State *L) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, -2) == LUA_TNIL) return undeclared(L, "reads");
  lua_pushvalue(L, 2);
  lua_pushvalue(L, -2);
  lua_rawset(L, 1);
  return 1;
}

static int env_newindex(lua_State *L) { return undeclared(L, "assigns"); }

/* preload loader for one embedded module: upvalue 1 is its kvp_stdlib index.
 * The chunk's _ENV is a table of its own (env_index, env_newindex), so a
 * stdlib module cannot write a global; users' chunks keep the globals. */
static int load_blob(lua_State *L) {
  const kvp_blob *b = &kvp_stdlib[lua_tointeger(L, lua_upvalueindex(1))];
  if (luaL_loadbufferx(L, b->data, b->len, b->chunk, "t") != LUA_OK) return lua_error(L);
  lua_newtable(L);
  lua_createtable(L, 0, 2);
  lua_pushstring(L, b->name);
  lua_pushcclosure(L, env_index, 1);
  lua_setfield(L, -2, "__index");
  lua_pushstring(L, b->name);
  lua_pushcclosure(L, env_newindex, 1);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, -2);
  lua_setupvalue(L, -2, 1); /* a main chunk's only upvalue is _ENV */
  lua_pushstring(L, b->name);
  lua_call(L, 1, 1); /* within require: errors propagate to its caller */
  return 1;
}

int kvp_preload(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  for (const luaL_Reg *c = cmods; c->name != NULL; c++) {
    lua_pushcfunction(L, c->func);
    lua_setfield(L, -2, c->name);
  }
  int init = -1;
  for (int i = 0; kvp_stdlib[i].name != NULL; i++) {
    if (strcmp(kvp_stdlib[i].name, "kvplan") == 0) {
      init = i;
      continue;
    }
    lua_pushinteger(L, i);
    lua_pushcclosure(L, load_blob, 1);
    lua_setfield(L, -2, kvp_stdlib[i].name);
  }
  if (init >= 0) {
    lua_pushinteger(L, init);
    lua_pushcclosure(L, load_blob, 1);
    lua_setfield(L, -2, "kvplan");
  }
  lua_pop(L, 1);
  return init;
}

int luaopen_kvplan(lua_State *L) {
  int init = kvp_preload(L);
  if (init < 0) return luaL_error(L, "kvplan: the embedded stdlib has no init module");
  lua_pushinteger(L, init);
  lua_pushcclosure(L, load_blob, 1);
  lua_call(L, 0, 1);
  return 1;
}
