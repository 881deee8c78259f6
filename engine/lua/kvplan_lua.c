/*
 * kvplan_lua.c: luaopen_kvplan, the entry of require "kvplan" both inside the
 * kvplan binary and from a stock lua5.4 loading build/kvplan.so.
 * Binding layer: registers the embedded stdlib modules and the C modules in
 * package.preload, then runs the package's init module.
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

/* preload loader for one embedded module: upvalue 1 is its kvp_stdlib index */
static int load_blob(lua_State *L) {
  const kvp_blob *b = &kvp_stdlib[lua_tointeger(L, lua_upvalueindex(1))];
  if (luaL_loadbufferx(L, b->data, b->len, b->chunk, "t") != LUA_OK) return lua_error(L);
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
