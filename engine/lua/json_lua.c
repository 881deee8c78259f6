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
/* Open a safetensors file and read its 8-byte header length: on success
 * leaves the FILE box on the stack (closed by the GC on any error), the
 * file positioned at the header, and returns 1 with *n its length and *size
 * the file's; returns 0 with nil, message pushed when the file cannot be
 * opened; raises for a malformed length. */
static int open_header(lua_State *L, const char *path, FILE ***box, unsigned long long *n,
                       long long *size) {
  FILE **fb = lua_newuserdatauv(L, sizeof *fb, 0);
  *fb = NULL;
  luaL_setmetatable(L, FILE_BOX_MT);
  *box = fb;
  kvl_check_file(L, path, "r");
  *fb = fopen(path, "rb");
  if (*fb == NULL) {
    push_fail(L, "cannot open '%s': %s", path, errno);
    return 0;
  }
  struct stat st;
  int rc = fstat(fileno(*fb), &st);
  if (rc != 0 || !S_ISREG(st.st_mode)) {
    int e = rc != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    fclose(*fb);
    *fb = NULL;
    push_fail(L, "cannot read '%s': %s", path, e);
    return 0;
  }
  *size = (long long)st.st_size;
  unsigned char prefix[8];
  size_t got = fread(prefix, 1, sizeof prefix, *fb);
  if (got < sizeof prefix)
    kvl_error(L, "%s: truncated safetensors file: %d bytes, the header length alone "
              "takes 8", path, (int)got);
  *n = 0;
  for (int i = 7; i >= 0; i--) *n = *n << 8 | prefix[i];
  char num[32];
  snprintf(num, sizeof num, "%llu", *n);
  if (*n == 0) kvl_error(L, "%s: safetensors header length at byte 0 is 0", path);
  if (*n > (unsigned long long)ST_MAX_HEADER)
    kvl_error(L, "%s: safetensors header length %s at byte 0 exceeds the format's "
              "limit of %d bytes", path, num, (int)ST_MAX_HEADER);
  if ((long long)*n > *size - 8)
    kvl_error(L, "%s: safetensors header length %s at byte 0 runs past the end of the "
              "file (%I bytes follow the length)", path, num, (lua_Integer)(*size - 8));
  return 1;
}

static int l_safetensors_header(lua_State *L) {
  const char *path = kvl_path_arg(L, 1, 0);
  FILE **fb;
  unsigned long long n;
  long long size;
  if (!open_header(L, path, &fb, &n, &size)) return 2;
  size_t got;
  char num[32];
  snprintf(num, sizeof num, "%llu", n);
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

/* ---- the header read as a stream ---------------------------------------
 * json.safetensors_scan(path, bits) -> sums, data_bytes | false | nil, message
 * Reads the header in 64 KB pieces and keeps only the sums: tensors,
 * elements, bytes, bytes by dtype, and an 8-byte hash of each tensor name
 * (a name twice is an error). bits maps dtypes to bits per element. A
 * header this scanner does not take as plainly well formed (anything but
 * ASCII strings without escapes, a real number where an integer belongs, an
 * unknown dtype, offsets that do not match the shape, a key twice, ...)
 * gives false: the caller then reads it whole (safetensors_header), which
 * says exactly what is wrong. So memory is proportional to the tensors'
 * count, not to the header's bytes (a 47 MB header parsed whole peaks near
 * 700 MB). */

typedef struct scan {
  FILE *f;
  unsigned long long left;  /* header bytes not yet read */
  size_t pos, len;
  unsigned char buf[1 << 16];
} scan;

#define SC_END (-1)

static int sc_peek(scan *s) {
  if (s->pos == s->len) {
    if (s->left == 0) return SC_END;
    size_t want = s->left < sizeof s->buf ? (size_t)s->left : sizeof s->buf;
    size_t got = fread(s->buf, 1, want, s->f);
    if (got == 0) return SC_END;
    s->left -= got;
    s->pos = 0;
    s->len = got;
  }
  return s->buf[s->pos];
}

static int sc_get(scan *s) {
  int c = sc_peek(s);
  if (c != SC_END) s->pos++;
  return c;
}

static void sc_ws(scan *s) {
  int c;
  while ((c = sc_peek(s)) == ' ' || c == '\t' || c == '\n' || c == '\r') s->pos++;
}

static uint64_t fnv(uint64_t h, int c) { return (h ^ (uint64_t)(unsigned char)c) * 1099511628211ULL; }

/* A plain ASCII string (the opening quote next): its hash and length, and
 * its first cap - 1 bytes in out when out is given. -1: not plain. */
static int sc_string(scan *s, uint64_t *hash, char *out, size_t cap, size_t *len) {
  if (sc_get(s) != '"') return -1;
  uint64_t h = 14695981039346656037ULL;
  size_t n = 0;
  for (;;) {
    int c = sc_get(s);
    if (c == '"') break;
    if (c == SC_END || c == '\\' || c < 0x20 || c >= 0x80) return -1;
    h = fnv(h, c);
    if (out != NULL && n + 1 < cap) out[n] = (char)c;
    n++;
  }
  if (out != NULL) out[n < cap ? n : cap - 1] = '\0';
  if (len != NULL) *len = n;
  *hash = fnv(h, 0) ^ (uint64_t)n;
  return 0;
}

/* A JSON integer that fits in 63 bits (no fraction, no exponent). */
static int sc_int(scan *s, int64_t *v) {
  int neg = 0, c = sc_peek(s), digits = 0;
  if (c == '-') {
    neg = 1;
    s->pos++;
  }
  int64_t x = 0;
  while ((c = sc_peek(s)) >= '0' && c <= '9') {
    if (digits == 1 && x == 0) return -1; /* a leading zero */
    if (x > (INT64_MAX - (c - '0')) / 10) return -1;
    x = x * 10 + (c - '0');
    digits++;
    s->pos++;
  }
  if (digits == 0 || c == '.' || c == 'e' || c == 'E') return -1;
  *v = neg ? -x : x;
  return 0;
}

/* A key set of one object: a small table of hashes; -1 for a key twice. */
typedef struct keyset {
  uint64_t *h;
  size_t n, cap;
} keyset;

static int ks_add(keyset *k, uint64_t h) {
  if (2 * (k->n + 1) > k->cap) {
    size_t cap = k->cap ? 2 * k->cap : 64;
    uint64_t *t = calloc(cap, sizeof *t);
    if (t == NULL) return -1;
    for (size_t i = 0; i < k->cap; i++)
      if (k->h[i] != 0) {
        size_t j = (size_t)(k->h[i] % cap);
        while (t[j] != 0) j = (j + 1) % cap;
        t[j] = k->h[i];
      }
    free(k->h);
    k->h = t;
    k->cap = cap;
  }
  if (h == 0) h = 1;
  size_t j = (size_t)(h % k->cap);
  while (k->h[j] != 0) {
    if (k->h[j] == h) return -1;
    j = (j + 1) % k->cap;
  }
  k->h[j] = h;
  k->n++;
  return 0;
}

/* Skip one value of any kind, checking what jansson would reject. */
static int sc_skip(scan *s, int depth) {
  if (depth > 64) return -1;
  sc_ws(s);
  int c = sc_peek(s);
  uint64_t h;
  int64_t v;
  if (c == '"') return sc_string(s, &h, NULL, 0, NULL);
  if (c == '-' || (c >= '0' && c <= '9')) return sc_int(s, &v);
  if (c == 't' || c == 'f' || c == 'n') {
    const char *w = c == 't' ? "true" : c == 'f' ? "false" : "null";
    for (; *w; w++)
      if (sc_get(s) != *w) return -1;
    return 0;
  }
  if (c != '[' && c != '{') return -1;
  int obj = c == '{', close = obj ? '}' : ']', rc = 0;
  keyset keys = {0};
  s->pos++;
  sc_ws(s);
  if (sc_peek(s) == close) {
    s->pos++;
    return 0;
  }
  for (;;) {
    if (obj) {
      sc_ws(s);
      if (sc_string(s, &h, NULL, 0, NULL) < 0 || ks_add(&keys, h) < 0) { rc = -1; break; }
      sc_ws(s);
      if (sc_get(s) != ':') { rc = -1; break; }
    }
    if (sc_skip(s, depth + 1) < 0) { rc = -1; break; }
    sc_ws(s);
    c = sc_get(s);
    if (c == close) break;
    if (c != ',') { rc = -1; break; }
  }
  free(keys.h);
  return rc;
}

/* A list of integers: '[' int, ... ']' into v[0..max) (n of them). */
static int sc_ints(scan *s, int64_t *v, int max, int *n) {
  sc_ws(s);
  if (sc_get(s) != '[') return -1;
  *n = 0;
  sc_ws(s);
  if (sc_peek(s) == ']') {
    s->pos++;
    return 0;
  }
  for (;;) {
    sc_ws(s);
    if (*n >= max || sc_int(s, &v[*n]) < 0) return -1;
    (*n)++;
    sc_ws(s);
    int c = sc_get(s);
    if (c == ']') return 0;
    if (c != ',') return -1;
  }
}

typedef struct sums {
  int64_t tensors, elements, bytes;
} sums;

/* One tensor's object; by_dtype (a table at index bd) and the sums grow. */
static int sc_tensor(lua_State *L, scan *s, int bits_idx, int bd, int64_t data, sums *t) {
  sc_ws(s);
  if (sc_get(s) != '{') return -1;
  char dtype[32] = "";
  int64_t shape[64], off[3], count = 1;
  int nshape = -1, noff = -1, rc = 0;
  keyset keys = {0};
  sc_ws(s);
  if (sc_peek(s) == '}') {
    s->pos++;
    return -1;
  }
  for (;;) {
    char key[16];
    uint64_t h;
    size_t klen;
    sc_ws(s);
    /* keys longer than 15 bytes are none of the three: hash them alone */
    if (sc_peek(s) != '"') { rc = -1; break; }
    if (sc_string(s, &h, key, sizeof key, &klen) < 0) { rc = -1; break; }
    if (klen >= sizeof key) key[0] = '\0'; /* none of the three */
    if (ks_add(&keys, h) < 0) { rc = -1; break; }
    sc_ws(s);
    if (sc_get(s) != ':') { rc = -1; break; }
    sc_ws(s);
    if (strcmp(key, "dtype") == 0) {
      size_t dlen;
      if (sc_string(s, &h, dtype, sizeof dtype, &dlen) < 0 || dlen >= sizeof dtype) {
        rc = -1;
        break;
      }
    } else if (strcmp(key, "shape") == 0) {
      if (sc_ints(s, shape, 64, &nshape) < 0) { rc = -1; break; }
    } else if (strcmp(key, "data_offsets") == 0) {
      if (sc_ints(s, off, 3, &noff) < 0) { rc = -1; break; }
    } else if (sc_skip(s, 1) < 0) {
      rc = -1;
      break;
    }
    sc_ws(s);
    int c = sc_get(s);
    if (c == '}') break;
    if (c != ',') { rc = -1; break; }
  }
  free(keys.h);
  if (rc < 0 || dtype[0] == '\0' || nshape < 0 || noff != 2) return -1;
  lua_getfield(L, bits_idx, dtype);
  int isnum = 0;
  lua_Integer bits = lua_tointegerx(L, -1, &isnum);
  lua_pop(L, 1);
  if (!isnum || bits < 1) return -1;
  for (int i = 0; i < nshape; i++) {
    if (shape[i] < 0) return -1;
    if (shape[i] != 0 && count > INT64_MAX / shape[i]) return -1; /* hf.lua mul's bound */
    count *= shape[i];
  }
  if (off[0] < 0 || off[1] < off[0] || off[1] > data) return -1;
  if (count != 0 && bits > (INT64_MAX - 7) / count) return -1;
  int64_t want = (count * bits + 7) / 8;
  if (off[1] - off[0] != want) return -1;
  t->tensors++;
  t->elements = (int64_t)((uint64_t)t->elements + (uint64_t)count);
  t->bytes = (int64_t)((uint64_t)t->bytes + (uint64_t)want);
  lua_getfield(L, bd, dtype);
  lua_Integer prev = lua_tointeger(L, -1);
  lua_pop(L, 1);
  lua_pushinteger(L, prev + want);
  lua_setfield(L, bd, dtype);
  return 0;
}

static int l_safetensors_scan(lua_State *L) {
  const char *path = kvl_path_arg(L, 1, 0);
  luaL_checktype(L, 2, LUA_TTABLE);
  FILE **fb;
  unsigned long long n;
  long long size;
  if (!open_header(L, path, &fb, &n, &size)) return 2;
  int64_t data = (int64_t)(size - 8 - (long long)n);
  scan *s = lua_newuserdatauv(L, sizeof *s, 0); /* freed by the GC */
  s->f = *fb;
  s->left = n;
  s->pos = s->len = 0;
  lua_createtable(L, 0, 4); /* the sums */
  int res = lua_gettop(L);
  lua_newtable(L);
  int bd = lua_gettop(L);
  sums t = {0, 0, 0};
  keyset names = {0};
  int ok = 0;
  sc_ws(s);
  if (sc_get(s) == '{') {
    sc_ws(s);
    if (sc_peek(s) == '}') {
      s->pos++;
      ok = 1;
    }
    while (!ok) {
      uint64_t h;
      char name[16];
      size_t len;
      sc_ws(s);
      if (sc_peek(s) != '"') break;
      /* the name's first bytes tell __metadata__; the whole name is hashed */
      if (sc_string(s, &h, name, sizeof name, &len) < 0) break;
      if (len >= sizeof name) name[0] = '\0';
      if (ks_add(&names, h) < 0) break;
      sc_ws(s);
      if (sc_get(s) != ':') break;
      if (strcmp(name, "__metadata__") == 0 ? sc_skip(s, 1) < 0
                                              : sc_tensor(L, s, 2, bd, data, &t) < 0)
        break;
      sc_ws(s);
      int c = sc_get(s);
      if (c == '}') ok = 1;
      else if (c != ',') break;
    }
    if (ok) { /* only blanks may follow (safetensors pads the header) */
      sc_ws(s);
      ok = sc_peek(s) == SC_END && s->left == 0;
    }
  }
  free(names.h);
  int ioerr = ferror(*fb);
  fclose(*fb);
  *fb = NULL;
  if (ioerr || !ok) {
    lua_pushboolean(L, 0); /* read it whole: safetensors_header says what is wrong */
    return 1;
  }
  lua_pushinteger(L, (lua_Integer)t.tensors);
  lua_setfield(L, res, "tensors");
  lua_pushinteger(L, (lua_Integer)t.elements);
  lua_setfield(L, res, "elements");
  lua_pushinteger(L, (lua_Integer)t.bytes);
  lua_setfield(L, res, "bytes");
  lua_pushvalue(L, bd);
  lua_setfield(L, res, "by_dtype");
  lua_pushvalue(L, res);
  lua_pushinteger(L, (lua_Integer)data);
  return 2;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* json.safetensors_files(dir) -> sorted list of the *.safetensors names in
 * dir, or nil, message when dir cannot be listed (not a directory). */
static int l_safetensors_files(lua_State *L) {
  const char *dir = kvl_path_arg(L, 1, 0);
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
  {"safetensors_scan", l_safetensors_scan},
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
