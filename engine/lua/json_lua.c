/*
 * json_lua.c: JSON text to Lua values, and the headers of .safetensors files:
 * require "kvplan.json".
 * Binding layer: file reading and conversion only; the parser is jansson.
 *
 *   json.decode(text [, name])       -> value   (errors "name:line:column: text")
 *   json.safetensors_header(path)    -> header, data_bytes | nil, message
 *   json.safetensors_files(dir)      -> {"a.safetensors", ...} | nil, message
 *   json.null                        the value of a JSON null (a light userdata)
 *
 * A key twice in one object is an error (jansson's JSON_REJECT_DUPLICATES):
 * which of the two a reader takes differs between parsers.
 * Objects become tables, arrays sequences (1-based), integers Lua integers,
 * reals floats, null json.null (so that [1, null, 3] keeps its length).
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kvplan_lua.h"

#define JSON_BOX_MT "kvplan.JsonBox"
#define FILE_BOX_MT "kvplan.JsonFile"

/* The safetensors format caps the header at 100 MB (safetensors,
 * safetensors/src/tensor.rs: MAX_HEADER_SIZE = 100_000_000). */
#define ST_MAX_HEADER 100000000LL

/* A parsed document is held in a userdata until converted, so that a Lua
 * error in the middle of the conversion (out of memory) cannot leak it. */
static json_t **new_box(lua_State *L) {
  json_t **box = lua_newuserdatauv(L, sizeof *box, 0);
  *box = NULL;
  luaL_setmetatable(L, JSON_BOX_MT);
  return box;
}

static int box_gc(lua_State *L) {
  json_t **box = luaL_checkudata(L, 1, JSON_BOX_MT);
  if (*box != NULL) {
    json_decref(*box);
    *box = NULL;
  }
  return 0;
}

/* Push the Lua value of j. jansson bounds the nesting depth at parse time
 * (JSON_PARSER_MAX_DEPTH, 2048), so the recursion is bounded too. */
static void push_value(lua_State *L, json_t *j) {
  luaL_checkstack(L, 3, "JSON nested too deeply");
  switch (json_typeof(j)) {
    case JSON_OBJECT: {
      const char *key;
      json_t *v;
      lua_createtable(L, 0, (int)json_object_size(j));
      json_object_foreach(j, key, v) {
        push_value(L, v);
        lua_setfield(L, -2, key);
      }
      break;
    }
    case JSON_ARRAY: {
      size_t n = json_array_size(j);
      lua_createtable(L, n < 1u << 20 ? (int)n : 0, 0);
      for (size_t i = 0; i < n; i++) {
        push_value(L, json_array_get(j, i));
        lua_rawseti(L, -2, (lua_Integer)i + 1);
      }
      break;
    }
    case JSON_STRING:
      lua_pushlstring(L, json_string_value(j), json_string_length(j));
      break;
    case JSON_INTEGER:
      lua_pushinteger(L, (lua_Integer)json_integer_value(j));
      break;
    case JSON_REAL:
      lua_pushnumber(L, (lua_Number)json_real_value(j));
      break;
    case JSON_TRUE:
      lua_pushboolean(L, 1);
      break;
    case JSON_FALSE:
      lua_pushboolean(L, 0);
      break;
    case JSON_NULL:
    default:
      lua_pushlightuserdata(L, NULL);
      break;
  }
}

/* Convert the document in box (on top of the stack) and free it: leaves the
 * value in place of the box. */
static void push_document(lua_State *L, json_t **box) {
  push_value(L, *box);
  json_decref(*box);
  *box = NULL;
  lua_remove(L, -2);
}

/* json.decode(text [, name]): the value of a JSON text; a syntax error is
 * raised as "name:line:column: jansson's message" at the user's line. */
static int l_decode(lua_State *L) {
  size_t len;
  const char *text = luaL_checklstring(L, 1, &len);
  const char *name = luaL_optstring(L, 2, "json");
  json_t **box = new_box(L);
  json_error_t err;
  *box = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);
  if (*box == NULL) return kvl_error(L, "%s:%d:%d: %s", name, err.line, err.column, err.text);
  push_document(L, box);
  return 1;
}

/* __gc of the FILE box of safetensors_header (liolib's pattern) */
static int file_gc(lua_State *L) {
  FILE **fb = luaL_checkudata(L, 1, FILE_BOX_MT);
  if (*fb != NULL) {
    fclose(*fb);
    *fb = NULL;
  }
  return 0;
}

static int push_fail(lua_State *L, const char *fmt, const char *path, int errnum) {
  luaL_pushfail(L);
  lua_pushfstring(L, fmt, path, strerror(errnum));
  return 2;
}

/* json.safetensors_header(path) -> header, data_bytes. A safetensors file is
 * an 8-byte little-endian header length N, N bytes of JSON, then the tensor
 * data (huggingface/safetensors, README "Format"). Only the header is read.
 * data_bytes is the size of the data section (file size - 8 - N). A file that
 * cannot be opened gives nil, message; a malformed one raises an error that
 * names the file and the byte where it goes wrong. */
static int l_safetensors_header(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  FILE **fb = lua_newuserdatauv(L, sizeof *fb, 0); /* closed by the GC on any error */
  *fb = NULL;
  luaL_setmetatable(L, FILE_BOX_MT);
  kvl_check_file(L, path, "r");
  *fb = fopen(path, "rb");
  if (*fb == NULL) return push_fail(L, "cannot open '%s': %s", path, errno);
  struct stat st;
  int rc = fstat(fileno(*fb), &st);
  if (rc != 0 || !S_ISREG(st.st_mode)) {
    int e = rc != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    fclose(*fb);
    *fb = NULL;
    return push_fail(L, "cannot read '%s': %s", path, e);
  }
  long long size = (long long)st.st_size;
  unsigned char prefix[8];
  size_t got = fread(prefix, 1, sizeof prefix, *fb);
  if (got < sizeof prefix)
    return kvl_error(L, "%s: truncated safetensors file: %d bytes, the header length alone "
                     "takes 8", path, (int)got);
  unsigned long long n = 0;
  for (int i = 7; i >= 0; i--) n = n << 8 | prefix[i];
  char num[32];
  snprintf(num, sizeof num, "%llu", n);
  if (n == 0) return kvl_error(L, "%s: safetensors header length at byte 0 is 0", path);
  if (n > (unsigned long long)ST_MAX_HEADER)
    return kvl_error(L, "%s: safetensors header length %s at byte 0 exceeds the format's "
                     "limit of %d bytes", path, num, (int)ST_MAX_HEADER);
  if ((long long)n > size - 8)
    return kvl_error(L, "%s: safetensors header length %s at byte 0 runs past the end of the "
                     "file (%I bytes follow the length)", path, num, (lua_Integer)(size - 8));
  char *buf = lua_newuserdatauv(L, (size_t)n, 0);
  got = fread(buf, 1, (size_t)n, *fb);
  int ioerr = ferror(*fb);
  fclose(*fb);
  *fb = NULL;
  if (got < (size_t)n)
    return kvl_error(L, "%s: cannot read the %s-byte safetensors header%s", path, num,
                     ioerr ? " (read error)" : " (the file shrank)");
  json_t **box = new_box(L);
  json_error_t err;
  *box = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, &err);
  if (*box == NULL)
    return kvl_error(L, "%s: bad safetensors header at byte %d: %s", path, err.position + 8,
                     err.text);
  if (!json_is_object(*box))
    return kvl_error(L, "%s: the safetensors header must be a JSON object", path);
  push_document(L, box);
  lua_pushinteger(L, (lua_Integer)(size - 8 - (long long)n));
  return 2;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* json.safetensors_files(dir) -> sorted list of the *.safetensors names in
 * dir, or nil, message when dir cannot be listed (not a directory). */
static int l_safetensors_files(lua_State *L) {
  const char *dir = luaL_checkstring(L, 1);
  kvl_check_file(L, dir, "r");
  DIR *d = opendir(dir);
  if (d == NULL) return push_fail(L, "cannot list '%s': %s", dir, errno);
  lua_newtable(L);
  lua_Integer n = 0;
  struct dirent *e;
  static const char ext[] = ".safetensors";
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len > sizeof ext - 1 && strcmp(e->d_name + len - (sizeof ext - 1), ext) == 0) {
      lua_pushstring(L, e->d_name); /* may raise: only on memory errors */
      lua_rawseti(L, -2, ++n);
    }
  }
  closedir(d);
  /* sort by name: readdir order is unspecified */
  const char **names = lua_newuserdatauv(L, sizeof *names * (size_t)(n > 0 ? n : 1), 0);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, -2, i);
    names[i - 1] = lua_tostring(L, -1);
    lua_pop(L, 1); /* the strings stay alive in the list */
  }
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  lua_createtable(L, (int)n, 0);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_pushstring(L, names[i - 1]);
    lua_rawseti(L, -2, i);
  }
  return 1;
}

static const luaL_Reg funcs[] = {
  {"decode", l_decode}, {"safetensors_header", l_safetensors_header},
  {"safetensors_files", l_safetensors_files}, {NULL, NULL}
};


int luaopen_kvplan_json(lua_State *L) {
  luaL_newmetatable(L, JSON_BOX_MT);
  lua_pushcfunction(L, box_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_newmetatable(L, FILE_BOX_MT);
  lua_pushcfunction(L, file_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_newlib(L, funcs);
  lua_pushlightuserdata(L, NULL);
  lua_setfield(L, -2, "null");
  return 1;
}
