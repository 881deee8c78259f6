/*
 * sweep_lua.c: the Lua binding of sweeps: require "kvplan.sweep_core".
 * Binding layer: reads the spec once (sweep_spec_lua.c), runs the core's
 * row loop (sweep.c) and streams each row to the CSV writer (csvw.c) as
 * sweep_text_lua.c writes it, or hands it to spec.each. Lua is entered per
 * row only for a filter, a Lua column or spec.each (the slow path: the row
 * table of sweep_row_lua.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmtw.h"
#include "sweep_lua.h"

/* Userdata holding the run's C arrays, freed by __gc even after an error. */
typedef struct holder {
  run r;
  kvp_sweep *s;
  kvp_csv *w;
} holder;

static int holder_gc(lua_State *L) {
  holder *h = lua_touserdata(L, 1);
  free(h->r.base);
  free(h->r.tp);
  free(h->r.pp);
  free(h->r.context);
  free(h->r.concurrency);
  free(h->r.kv);
  free(h->r.weights);
  for (int i = 0; h->r.cols && i < h->r.ncol; i++) free(h->r.cols[i].memo);
  free(h->r.cols);
  free(h->r.rules);
  free(h->r.perf);
  for (int j = 0; h->r.t.segs && j < h->r.t.nseg; j++) free(h->r.t.segs[j].txt);
  free(h->r.t.segs);
  free(h->r.t.rowbuf);
  for (int j = 0; h->r.t.chunks && j < h->r.t.nchunk; j++) free(h->r.t.chunks[j].txt);
  free(h->r.t.chunks);
  free(h->r.t.items);
  for (int j = 0; h->r.t.luatxt && j < h->r.nlua; j++) free(h->r.t.luatxt[j].txt);
  free(h->r.t.luatxt);
  free(h->r.lab);
  free(h->r.kvn);
  free(h->r.wn);
  free(h->r.okv);
  free(h->r.scratch);
  free(h->r.mcombo);
  free(h->r.concn);
  for (int j = 0; j < KVP_SWEEP_MAX_AXES; j++) {
    free(h->r.vals[j]);
    free(h->r.gpu[j]);
    free(h->r.alab[j]);
  }
  if (h->s) {
    kvp_sweep_free(h->s);
    free(h->s);
  }
  if (h->w) kvp_csv_discard(h->w);
  memset(h, 0, sizeof *h);
  return 0;
}

/* sweep_core.run(spec) -> rows written, total rows of the whole sweep (spec.each: the
 * rows given to it) */
static int l_run(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  holder *h = lua_newuserdatauv(L, sizeof *h, 0);
  memset(h, 0, sizeof *h);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, holder_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  run *r = &h->r;

  int cols = kvl_sweep_read(L, r);
  if (r->needrow) kvl_sweep_rowtab(L, r);
  kvl_sweep_plan(L, r);

  /* the slice: shard k of n */
  int64_t first = 0, end = 0, k = 1, n = 1, total;
  if (lua_getfield(L, 1, "shard") == LUA_TTABLE) {
    lua_geti(L, -1, 1);
    lua_geti(L, -2, 2);
    k = kvl_toint(L, -2, "shard");
    n = kvl_toint(L, -1, "shard");
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  kvp_diag d = {{0}};
  kvp_err e = kvp_sweep_total(&r->ax, &total);
  if (e != KVP_OK) return kvl_error(L, "the sweep has more than 2^63 rows");
  if (kvp_sweep_shard(total, k, n, &first, &end) != KVP_OK)
    return kvl_error(L, "shard %I/%I: expected K/N with 1 <= K <= N", (lua_Integer)k, (lua_Integer)n);
  h->s = xcalloc(L, 1, sizeof *h->s);
  e = kvp_sweep_init(h->s, &r->ax, first, end, r->want, &d);
  if (e != KVP_OK) {
    free(h->s);
    h->s = NULL;
    return kvl_core_error(L, e, &d, "sweep");
  }
  if (lua_getfield(L, 1, "check") != LUA_TNIL) return 0; /* checked: write nothing */
  lua_pop(L, 1);

  /* the writer: header now, rows streamed, renamed into place at the end;
   * with spec.each every row the filters keep goes to it, nothing written */
  char err[512];
  if (!r->each) {
    lua_getfield(L, 1, "path");
    const char *path = lua_isnil(L, -1) ? NULL : kvl_path_arg(L, -1, 0);
    kvl_check_file(L, path, "w");
    int fmt = KVP_FMT_AUTO; /* spec.format: csv, table, json, markdown, html, vertical (fmtw.h) */
    if (lua_getfield(L, 1, "format") == LUA_TSTRING && (fmt = kvp_fmt_named(lua_tostring(L, -1))) < 0)
      return kvl_error(L, "field 'format' must be csv, table, vertical, json, markdown or html, got '%s'",
                       lua_tostring(L, -1));
    lua_pop(L, 1);
    h->w = kvp_csv_open_as(path, fmt, err, sizeof err);
    if (h->w == NULL) return kvl_error(L, "%s", err);
    lua_getfield(L, 1, "page"); /* an HTML page's description (kvl_html_page) */
    kvl_html_page(L, -1, h->w);
    lua_pop(L, 1);
    for (int i = 0; i < r->ncol; i++) {
      lua_geti(L, cols, i + 1);
      size_t len;
      const char *s = lua_tolstring(L, -1, &len);
      kvp_csv_str(h->w, s, len);
      lua_pop(L, 1);
    }
    kvp_csv_endrow(h->w);
  }

  int64_t written = 0;
  int got = kvl_sweep_rows(L, r, h->s, h->w, cols, first, end, &written, &d);
  if (got == -(int)KVP_EOVERFLOW && d.msg[0] == '\0') {
    /* the failing row's deployment names the inputs ("sweep: arithmetic
     * overflow: a count exceeds 64 bits" for samples=1e18 before) */
    const kvp_sweep *s = h->s;
    int64_t ctx = s->ax.ncontext ? s->ax.context[s->ci] : s->ledger_ok ? s->ledger.max_len : 0;
    int64_t conc = s->ax.nconcurrency ? s->ax.concurrency[s->qi] : 1;
    return kvl_overflow_error(L, "sweep", &s->dep, ctx, conc);
  }
  if (got < 0) return kvl_core_error(L, (kvp_err)-got, &d, "sweep");
  if (r->each) { /* the rows given to it */
    lua_pushinteger(L, (lua_Integer)written);
    return 1;
  }
  kvp_csv *w = h->w;
  h->w = NULL;
  if (kvp_csv_close(w, err, sizeof err) < 0) return kvl_error(L, "%s", err);
  lua_pushinteger(L, (lua_Integer)written);
  lua_pushinteger(L, (lua_Integer)total);
  return 2;
}

/* sweep_core.shard(total, k, n) -> first, end (0-based, end exclusive) */
static int l_shard(lua_State *L) {
  int64_t first, end;
  if (kvp_sweep_shard(kvl_toint(L, 1, "total"), kvl_toint(L, 2, "shard"), kvl_toint(L, 3, "shard"),
                      &first, &end) != KVP_OK)
    return kvl_error(L, "bad shard %s/%s", lua_tostring(L, 2), lua_tostring(L, 3));
  lua_pushinteger(L, (lua_Integer)first);
  lua_pushinteger(L, (lua_Integer)end);
  return 2;
}

static const luaL_Reg funcs[] = {
  {"run", l_run}, {"columns", kvl_sweep_columns}, {"shard", l_shard}, {NULL, NULL}
};


int luaopen_kvplan_sweep_core(lua_State *L) {
  luaL_newlib(L, funcs);
  return 1;
}
