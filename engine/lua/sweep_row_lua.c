/*
 * sweep_row_lua.c: the row table a sweep's filter, Lua column or spec.each
 * sees: one table for the whole run, its fields set in place when they
 * change, the answers computed only when read (max_context, starts, why,
 * ...), and the call of a filter, column or spec.each with it
 * (sweep_lua.h).
 * Binding layer: calls the core for the lazy fields; none of the other
 * sweep files.
 */
#include <string.h>

#include "sweep_lua.h"

/* The row table a filter or Lua column sees: one table for the whole sweep
 * (r->v.rowtab), its fields updated in place when their value changes, from
 * keys interned once (r->v.key0 + RK_*): most rows differ from the previous
 * one in row and concurrency only, so a row costs a few raw sets and no
 * allocation. The built-in fields, in the order they win over axis names. */
enum {
  RK_TP, RK_PP, RK_GPU_BYTES, RK_USABLE, RK_WBYTES, RK_KVBUDGET, RK_KVBLOCKS, RK_KVTOKENS, /* ledger */
  RK_ROW, RK_CONTEXT, RK_CONCURRENCY, RK_MAXCONC, RK_FITS, RK_LIMIT, RK_KV, RK_WEIGHTS,   /* row */
  RK_N
};
_Static_assert(RK_N <= 16, "run.rowlast holds RK_N fields");
static const char *const row_keys[RK_N] = {
  "tp", "pp", "gpu_bytes", "usable_bytes", "weights_bytes", "kv_budget_bytes", "kv_blocks",
  "kv_tokens", "row", "context", "concurrency", "max_concurrency", "fits", "limit", "kv", "weights",
};

/* The row's fields computed when read (row_index), by name in the table
 * that is row_index's upvalue 2. */
enum { LZ_ROW = 1, LZ_MAX_CONTEXT, LZ_KV_BYTES_PER_TOKEN, LZ_ACTIVATION_BYTES, LZ_OVERHEAD_BYTES,
       LZ_STARTS, LZ_WHY, LZ_MC_LIMIT, LZ_MC_WHY };
static const char *const lazy_names[] = {
  "row", "max_context", "kv_bytes_per_token", "activation_bytes", "overhead_bytes", "starts", "why",
  "max_concurrency_limit", "max_concurrency_why",
};

/* __index of the row table (upvalue 1: the run's holder; 2: the lazy
 * fields' ids by name): answers computed only when a filter or column reads
 * them: max_context (a bisection over the context, once per row, kept in
 * C), kv_bytes_per_token, activation_bytes, overhead_bytes, and row (the one
 * field that changes on every row, rarely read). Nothing is stored in the
 * table: it holds the next row's fields soon. */
static int row_index(lua_State *L) {
  run *r = lua_touserdata(L, lua_upvalueindex(1)); /* the holder starts with its run */
  lua_settop(L, 2);
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(2));
  int id = (int)lua_tointeger(L, -1); /* 0: not one of them */
  if (id == 0) return 0;
  if (r->v.cur == NULL || lua_topointer(L, 1) != r->v.cur_tab)
    return kvl_error(L, "row.%s is known only while the sweep calls a filter or "
                        "column with that row", lua_tostring(L, 2));
  const kvp_ledger *l = r->v.cur->ledger;
  const kvp_stage *st = l->nstage ? &l->stage[l->tight] : NULL;
  switch (id) {
    case LZ_ROW: lua_pushinteger(L, (lua_Integer)(r->v.cur->index + 1)); break;
    case LZ_ACTIVATION_BYTES: lua_pushinteger(L, (lua_Integer)l->d.activation_bytes); break;
    case LZ_OVERHEAD_BYTES: lua_pushinteger(L, (lua_Integer)l->d.overhead_bytes); break;
    case LZ_STARTS: /* the row's, else once per ledger here */
      if (r->v.cur->start != NULL) {
        lua_pushboolean(L, r->v.cur->start->starts);
        break;
      }
      if (r->v.start_id != r->v.cur->ledger_id) {
        kvp_diag diag = {{0}};
        kvp_err e = kvp_start_check(l, &r->v.start, &diag);
        if (e != KVP_OK) return kvl_core_error(L, e, &diag, "starts");
        r->v.start_id = r->v.cur->ledger_id;
      }
      lua_pushboolean(L, r->v.start.starts);
      break;
    case LZ_WHY: case LZ_MC_LIMIT: case LZ_MC_WHY: {
      /* the verdict in words, as the why column (need and have evaluated), or
       * max_concurrency's (l:max_concurrency's limit and why) */
      kvp_verdict v;
      int64_t n;
      char buf[KVP_START_TEXT_MAX];
      kvp_diag diag = {{0}};
      kvp_err e = id == LZ_WHY ? kvp_verdict_fit(l, r->v.cur->context, r->v.cur->concurrency, &v, &diag)
                               : kvp_verdict_max_concurrency(l, r->v.cur->context, &n, &v, &diag);
      if (e != KVP_OK) return kvl_core_error(L, e, &diag, lua_tostring(L, 2));
      if (id == LZ_MC_LIMIT) {
        lua_pushstring(L, kvp_why_name(v.fit.why));
        break;
      }
      int len = kvp_verdict_explain(l, &v.fit, &v.start, buf, sizeof buf);
      lua_pushlstring(L, buf, len < 0 ? 0 : (size_t)len < sizeof buf ? (size_t)len : sizeof buf - 1);
      break;
    }
    case LZ_KV_BYTES_PER_TOKEN:
      if (st == NULL || st->token_bits % 8 == 0) lua_pushinteger(L, st ? (lua_Integer)(st->token_bits / 8) : 0);
      else lua_pushnumber(L, (double)st->token_bits / 8.0);
      break;
    default:
      if (r->v.mctx_index != r->v.cur->index) {
        kvp_fit f;
        kvp_err e = kvp_ledger_max_context(l, r->v.cur->concurrency, &r->v.mctx, &f);
        if (e != KVP_OK) return kvl_core_error(L, e, NULL, "max_context");
        r->v.mctx_index = r->v.cur->index;
      }
      lua_pushinteger(L, (lua_Integer)r->v.mctx);
  }
  return 1;
}

/* __newindex of the row table (upvalues: the holder, the list of keys a
 * script added): a key a filter or column adds lasts for its row only (the
 * next row starts without it, as a fresh table would). */
static int row_newindex(lua_State *L) {
  run *r = lua_touserdata(L, lua_upvalueindex(1));
  lua_settop(L, 3);
  if (lua_isnil(L, 3)) return 0; /* the key is absent: nothing to remove */
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 3);
  lua_rawset(L, 1); /* a nil or NaN key raises here, as in any table */
  lua_pushvalue(L, 2);
  lua_rawseti(L, lua_upvalueindex(2), ++r->v.ndirty);
  return 0;
}

/* rowtab[key RK_k] = the value on top of the stack (popped). */
static inline void row_set(lua_State *L, const run *r, int k) {
  lua_pushvalue(L, r->v.key0 + k);
  lua_insert(L, -2);
  lua_rawset(L, r->v.rowtab);
}

/* An integer field, set when its value changed (or was invalidated). */
static inline void row_seti(lua_State *L, run *r, int k, int64_t v) {
  if ((r->v.rowvalid >> k & 1u) && r->v.rowlast[k] == v) return;
  r->v.rowlast[k] = v;
  r->v.rowvalid |= 1u << k;
  lua_pushvalue(L, r->v.key0 + k);
  lua_pushinteger(L, (lua_Integer)v);
  lua_rawset(L, r->v.rowtab);
}

/* The fields that change with the deployment axes only, when they moved:
 * the base's labels by axis name (when the base changed), the axes set in
 * C by name (those that moved), then the ledger's fields. Every built-in
 * field is set again after them (they win over an axis of the same name). */
static void row_deployment(lua_State *L, run *r, const kvp_sweep_row *row) {
  const kvp_ledger *l = row->ledger;
  const kvp_stage *st = l->nstage ? &l->stage[l->tight] : NULL;
  if (r->v.named_b != r->entry_b) {
    lua_getfield(L, r->entry, "named");
    lua_pushnil(L);
    while (lua_next(L, -2)) { /* the base's labels, by axis name */
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, r->v.rowtab);
    }
    lua_pop(L, 1);
    r->v.named_b = r->entry_b;
  }
  for (int j = 0; j < r->ax.naxis; j++) { /* the axes set in C: by name */
    if (r->uax[j].field == KVP_FIELD_BASE || (r->v.rowgen_valid && r->v.rowapos[j] == row->apos[j])) continue;
    r->v.rowapos[j] = row->apos[j];
    lua_geti(L, r->axes, j + 1);
    lua_getfield(L, -1, "name");
    lua_getfield(L, -2, "rowvals");
    lua_geti(L, -1, row->apos[j] + 1);
    lua_remove(L, -2);
    lua_rawset(L, r->v.rowtab);
    lua_pop(L, 1);
  }
  if (r->optim_axis >= 0 && !r->kv_names) { /* the KV format: the combination's, else the base's */
    const label *k = &r->okv[row->apos[r->optim_axis]];
    if (k->s != NULL) {
      lua_pushlstring(L, k->s, k->len);
    } else {
      lua_getfield(L, r->entry, "named");
      lua_getfield(L, -1, "kv");
      lua_remove(L, -2);
    }
    row_set(L, r, RK_KV);
  }
  r->v.rowvalid = 0;
  row_seti(L, r, RK_TP, l->d.tp);
  row_seti(L, r, RK_PP, l->d.pp);
  row_seti(L, r, RK_GPU_BYTES, l->total);
  row_seti(L, r, RK_USABLE, l->usable);
  row_seti(L, r, RK_WBYTES, st ? st->weights : 0);
  row_seti(L, r, RK_KVBUDGET, st ? gib_num(st->kv_budget) : 0);
  row_seti(L, r, RK_KVBLOCKS, l->fit.why == KVP_FITS && st ? st->blocks : 0);
  row_seti(L, r, RK_KVTOKENS, kvp_ledger_kv_tokens(l));
  r->v.rowgen = row->gen;
  r->v.rowgen_valid = 1;
}

/* Make the row table hold this row (the slow path): its fields that
 * changed since the previous row, seen by the filter and then by the Lua
 * columns; the keys a script added to the previous row removed. */
void kvl_sweep_push_row(lua_State *L, run *r, const kvp_sweep_row *row) {
  if (r->v.ndirty > 0) {
    for (lua_Integer i = 1; i <= r->v.ndirty; i++) {
      lua_rawgeti(L, r->v.dirty, i);
      lua_pushnil(L);
      lua_rawset(L, r->v.rowtab);
    }
    r->v.ndirty = 0;
  }
  if (!r->v.rowgen_valid || r->v.rowgen != row->gen) row_deployment(L, r, row);
  if (r->v.row_eager) {
    lua_pushvalue(L, r->v.key0 + RK_ROW);
    lua_pushinteger(L, (lua_Integer)(row->index + 1));
    lua_rawset(L, r->v.rowtab);
  }
  row_seti(L, r, RK_CONTEXT, row->context);
  row_seti(L, r, RK_CONCURRENCY, row->concurrency);
  row_seti(L, r, RK_MAXCONC, row->max_concurrency);
  int64_t why = (int64_t)row->fit.why;
  if (!(r->v.rowvalid >> RK_FITS & 1u) || r->v.rowlast[RK_FITS] != why) {
    r->v.rowlast[RK_FITS] = why;
    r->v.rowvalid |= 1u << RK_FITS;
    lua_pushboolean(L, row->fit.why == KVP_FITS);
    row_set(L, r, RK_FITS);
    lua_pushvalue(L, r->v.why0 + (int)why);
    row_set(L, r, RK_LIMIT);
  }
  if (r->kv_names && (!(r->v.rowvalid >> RK_KV & 1u) || r->v.rowlast[RK_KV] != row->pos[KVP_AX_KV])) {
    r->v.rowlast[RK_KV] = row->pos[KVP_AX_KV];
    r->v.rowvalid |= 1u << RK_KV;
    lua_rawgeti(L, r->kv_names, row->pos[KVP_AX_KV] + 1);
    row_set(L, r, RK_KV);
  }
  if (r->weights_names &&
      (!(r->v.rowvalid >> RK_WEIGHTS & 1u) || r->v.rowlast[RK_WEIGHTS] != row->pos[KVP_AX_WEIGHTS])) {
    r->v.rowlast[RK_WEIGHTS] = row->pos[KVP_AX_WEIGHTS];
    r->v.rowvalid |= 1u << RK_WEIGHTS;
    lua_rawgeti(L, r->weights_names, row->pos[KVP_AX_WEIGHTS] + 1);
    row_set(L, r, RK_WEIGHTS);
  }
  r->v.cur = row;
}

/* The row table, its metatable and the interned keys (sweep_lua.h). */
void kvl_sweep_rowtab(lua_State *L, run *r) {
  luaL_checkstack(L, RK_N + KVP_NWHY + 8, "sweep");
  lua_newtable(L);
  r->v.dirty = lua_gettop(L);
  lua_createtable(L, 0, 2); /* the rows' metatable */
  lua_pushvalue(L, 2);      /* the holder */
  lua_createtable(L, 0, (int)(sizeof lazy_names / sizeof lazy_names[0]));
  for (size_t k = 0; k < sizeof lazy_names / sizeof lazy_names[0]; k++)
    kvl_set_int(L, lazy_names[k], (int64_t)k + LZ_ROW);
  lua_pushcclosure(L, row_index, 2);
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, 2);
  lua_pushvalue(L, r->v.dirty);
  lua_pushcclosure(L, row_newindex, 2);
  lua_setfield(L, -2, "__newindex");
  lua_createtable(L, 0, RK_N + 8);
  lua_insert(L, -2);
  lua_setmetatable(L, -2);
  r->v.rowtab = lua_gettop(L);
  r->v.cur_tab = lua_topointer(L, -1);
  r->v.key0 = r->v.rowtab + 1;
  for (int k = 0; k < RK_N; k++) lua_pushstring(L, row_keys[k]);
  r->v.why0 = lua_gettop(L) + 1;
  for (int w = 0; w < KVP_NWHY; w++) lua_pushstring(L, kvp_why_name((kvp_why)w));
  luaL_checkstack(L, r->nlua + 4, "sweep");
  r->v.fn0 = lua_gettop(L) + 1; /* the Lua columns' functions, in order */
  for (int i = 0; i < r->ncol; i++)
    if (r->cols[i].id == C_LUA) lua_rawgeti(L, r->funcs, i + 1);
  /* row is computed when read, unless an axis of that name would hide it */
  for (int j = 1; j <= r->ax.naxis; j++) {
    lua_geti(L, r->axes, j);
    lua_getfield(L, -1, "name");
    if (lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "row") == 0) r->v.row_eager = 1;
    lua_pop(L, 2);
  }
  r->v.named_b = -1;
  r->v.mctx_index = -1;
  r->v.start_id = -1;
}

/* The error object on the top as text, in its place: a string or number as it
 * is, else its __tostring (if it gives a string without raising), else what lua.c's message handler says ("(error
 * object is a table value)"; lua_tostring gave NULL, shown "(null)"). */
static void error_text(lua_State *L) {
  int t = lua_type(L, -1);
  if (t == LUA_TSTRING || t == LUA_TNUMBER) {
    lua_tostring(L, -1); /* a number becomes its text in place */
    return;
  }
  /* its __tostring called protected: one that raises gave its own error in
   * place of the callback's */
  if (luaL_getmetafield(L, -1, "__tostring") != LUA_TNIL) {
    lua_pushvalue(L, -2);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING) {
      lua_replace(L, -2);
      return;
    }
    lua_pop(L, 1);
  }
  lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, -1));
  lua_replace(L, -2);
}

/* Call the function at fn with the row table at rowidx (sweep_lua.h). */
void kvl_sweep_call(lua_State *L, int fn, int rowidx, int cols, int col) {
  lua_pushvalue(L, fn);
  lua_pushvalue(L, rowidx);
  if (lua_pcall(L, 1, 1, 0) == LUA_OK) return;
  error_text(L);
  int err = lua_gettop(L);
  if (cols <= 0) lua_pushstring(L, cols < 0 ? "sweep each" : "sweep filter");
  else lua_geti(L, cols, col + 1);
  int what = lua_gettop(L);
  /* a place inside the stdlib ("stdlib/kvplan/util.lua:162: C stack
   * overflow") is left out: the message is placed at the user's line */
  const char *text = lua_tostring(L, err);
  if (strncmp(text, "stdlib/", 7) == 0) {
    const char *p = strchr(text, ':');
    if (p != NULL && p[1] >= '0' && p[1] <= '9') {
      p++;
      while (*p >= '0' && *p <= '9') p++;
      if (p[0] == ':' && p[1] == ' ') text = p + 2;
    }
  }
  /* the same callback's error from a nested sweep is raised as it is: a
   * filter that runs a sweep of its own again and again said "sweep filter:"
   * at the same line once a level, 4 KB of it; and so is the error of the
   * stdlib's own callback (kv.best's each), already at the user's line,
   * which said "LINE: sweep each: LINE: ..." */
  lua_Debug ar;
  lua_pushvalue(L, fn);
  int own = lua_getinfo(L, ">S", &ar) && strncmp(ar.source, "@stdlib/", 8) == 0;
  kvl_where(L);
  if (own) lua_pushliteral(L, "");
  else lua_pushvalue(L, what);
  lua_pushstring(L, own ? "" : ": ");
  lua_concat(L, 3);
  size_t plen;
  const char *prefix = lua_tolstring(L, -1, &plen);
  if (plen > 0 && strncmp(text, prefix, plen) == 0) {
    lua_pushstring(L, text);
    lua_error(L);
  }
  kvl_error(L, "%s: %s", lua_tostring(L, what), text);
}
