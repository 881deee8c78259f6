/*
 * util_lua.c: helpers shared by the Lua binding files.
 * Binding layer: checks arguments, converts, raises Lua errors. No accounting.
 */
#include <math.h>
#include <stdio.h>
#include <stdarg.h>
#include <string.h>

#include "kvplan_lua.h"

void kvl_where(lua_State *L) { kvl_where_from(L, 1); }

void kvl_where_from(lua_State *L, int level) {
  lua_Debug ar;
  for (; lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "Sl", &ar)) break;
    if (ar.currentline <= 0) continue;                  /* C function */
    if (strncmp(ar.source, "@stdlib/", 8) == 0) continue;  /* our own library */
    lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
    return;
  }
  lua_pushliteral(L, "");
}

volatile sig_atomic_t kvl_stop;
const char *kvl_stop_message = "stopped";

void kvl_poll(lua_State *L) {
  if (kvl_stop) kvl_error(L, "%s", kvl_stop_message);
}

/* Call the check function the registry holds under key, if any, on (path,
 * mode): it returns true, or nil and the message to raise. */
static void run_check(lua_State *L, const char *key, const char *path, const char *mode) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, key) != LUA_TFUNCTION) {
    lua_pop(L, 1);
    return;
  }
  lua_pushstring(L, path);
  lua_pushstring(L, mode);
  lua_call(L, 2, 2);
  if (!lua_toboolean(L, -2)) kvl_error(L, "%s", lua_tostring(L, -1));
  lua_pop(L, 2);
}

void kvl_check_file(lua_State *L, const char *path, const char *mode) {
  if (path == NULL || strcmp(path, "-") == 0) return;
  run_check(L, KVL_FILE_CHECK, path, mode);
  run_check(L, KVL_INPUT_CHECK, path, mode);
}

const char *kvl_path_arg(lua_State *L, int idx, int optional) {
  if (optional && lua_isnoneornil(L, idx)) return NULL;
  size_t len;
  const char *s = luaL_checklstring(L, idx, &len);
  size_t c = strlen(s);
  if (c != len)
    kvl_error(L, "a file name holds a NUL byte after '%s' (byte %I of %I): refused, as the file opened "
              "would be '%s'", s, (lua_Integer)(c + 1), (lua_Integer)len, s);
  return s;
}

int kvl_error(lua_State *L, const char *fmt, ...) {
  va_list ap;
  kvl_where(L);
  va_start(ap, fmt);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  lua_concat(L, 2);
  return lua_error(L);
}

int kvl_core_error(lua_State *L, kvp_err e, const kvp_diag *d, const char *what) {
  if (d != NULL && d->msg[0] != '\0') return kvl_error(L, "%s", d->msg);
  return kvl_error(L, "%s: %s", what, kvp_strerror(e));
}

const char *kvl_got(lua_State *L, int idx) {
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) return lua_pushfstring(L, "got %I", lua_tointeger(L, idx));
      {
        double v = lua_tonumber(L, idx);
        if (isnan(v)) return lua_pushliteral(L, "got nan");
        if (isinf(v)) return lua_pushstring(L, v > 0 ? "got inf" : "got -inf");
        return lua_pushfstring(L, "got %f", v);
      }
    case LUA_TSTRING: { /* every byte up to 200, control characters escaped */
      size_t len;
      const char *s = lua_tolstring(L, idx, &len);
      luaL_Buffer b;
      luaL_buffinit(L, &b);
      luaL_addstring(&b, "got string '");
      for (size_t i = 0; i < len && i < 200; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != 0x7f && c != '\\') {
          luaL_addchar(&b, (char)c);
        } else {
          char esc[8];
          snprintf(esc, sizeof esc, c == '\\' ? "\\\\" : "\\x%02x", c);
          luaL_addstring(&b, esc);
        }
      }
      luaL_addstring(&b, len > 200 ? "'..." : "'");
      luaL_pushresult(&b);
      return lua_tostring(L, -1);
    }
    default:
      return lua_pushfstring(L, "got %s", luaL_typename(L, idx));
  }
}

int64_t kvl_toint(lua_State *L, int idx, const char *name) {
  if (lua_isinteger(L, idx)) return (int64_t)lua_tointeger(L, idx);
  if (lua_type(L, idx) == LUA_TNUMBER) {
    double v = lua_tonumber(L, idx);
    /* integral and inside int64: 2^63 itself is out */
    if (v == floor(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0)
      return (int64_t)v;
  }
  kvl_error(L, "field '%s' must be an integer, %s", name, kvl_got(L, idx));
  return 0;
}

double kvl_tonum(lua_State *L, int idx, const char *name) {
  if (lua_type(L, idx) == LUA_TNUMBER) {
    double v = lua_tonumber(L, idx);
    if (isfinite(v)) return v;
  }
  kvl_error(L, "field '%s' must be a finite number, %s", name, kvl_got(L, idx));
  return 0;
}

int64_t kvl_int_field(lua_State *L, int idx, const char *name, int64_t def) {
  int64_t v = def;
  if (lua_getfield(L, idx, name) != LUA_TNIL) v = kvl_toint(L, -1, name);
  lua_pop(L, 1);
  return v;
}

double kvl_num_field(lua_State *L, int idx, const char *name, double def) {
  double v = def;
  if (lua_getfield(L, idx, name) != LUA_TNIL) v = kvl_tonum(L, -1, name);
  lua_pop(L, 1);
  return v;
}

void kvl_set_int(lua_State *L, const char *k, int64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

void kvl_set_num(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

void kvl_new_class(lua_State *L, const char *name, const luaL_Reg *meth, lua_CFunction gc) {
  if (luaL_newmetatable(L, name)) {
    int n = 0;
    while (meth[n].name != NULL) n++;
    lua_createtable(L, 0, n);
    luaL_setfuncs(L, meth, 0);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
}

/* Of several bad keys the one named is the same every run, not lua_next's
 * first (Lua seeds its string hash per state, lstate.c luai_makeseed, so
 * the order changes run to run): a key that is no string before an unknown
 * name, the smallest number among those; else the first unknown name in
 * byte order. */
void kvl_check_keys(lua_State *L, int idx, const char *const *keys, const char *what) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L); /* the unknown name so far */
  lua_pushnil(L); /* the key that is no string so far */
  int name = lua_gettop(L) - 1, other = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) {
      const char *k = lua_tostring(L, -1);
      int i = 0;
      while (keys[i] != NULL && strcmp(keys[i], k) != 0) i++;
      if (keys[i] != NULL) continue;
      if (lua_isnil(L, name) || strcmp(k, lua_tostring(L, name)) < 0) {
        lua_pushvalue(L, -1);
        lua_replace(L, name);
      }
    } else if (lua_isnil(L, other) ||
               (lua_type(L, -1) == LUA_TNUMBER &&
                (lua_type(L, other) != LUA_TNUMBER || lua_compare(L, -1, other, LUA_OPLT)))) {
      lua_pushvalue(L, -1);
      lua_replace(L, other);
    }
  }
  if (!lua_isnil(L, other))
    kvl_error(L, "unexpected key in %s (field names are strings, %s)", what, kvl_got(L, other));
  if (!lua_isnil(L, name)) kvl_error(L, "unknown field '%s' in %s", lua_tostring(L, name), what);
  lua_pop(L, 2);
}
