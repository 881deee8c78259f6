/*
 * sweep_spec_lua.c: the spec table of sweep_core.run read into the run once
 * (sweep_lua.h): the bases and their deployments, the deployment axes and
 * their combinations, the request axes, the columns and their names, the
 * declarative filter's rules, and what the core's prediction reads.
 * Binding layer: checks and converts; calls none of the other sweep files.
 */
#include <stdint.h>
#include <string.h>

#include "fmtw.h"
#include "sweep_lua.h"

static const struct { const char *name; col_id id; unsigned want; } builtin[] = {
  {"row", C_ROW, 0}, {"tp", C_TP, 0}, {"pp", C_PP, 0}, {"kv", C_KV, 0},
  {"weights", C_WEIGHTS, 0}, {"context", C_CONTEXT, 0}, {"concurrency", C_CONCURRENCY, 0},
  {"gpu_bytes", C_GPU_BYTES, 0}, {"usable_bytes", C_USABLE_BYTES, 0},
  {"weights_bytes", C_WEIGHTS_BYTES, 0}, {"activation_bytes", C_ACTIVATION_BYTES, 0},
  {"overhead_bytes", C_OVERHEAD_BYTES, 0}, {"kv_budget_bytes", C_KV_BUDGET_BYTES, 0},
  {"gpu_gib", C_GPU_GIB, 0}, {"usable_gib", C_USABLE_GIB, 0}, {"weights_gib", C_WEIGHTS_GIB, 0},
  {"activation_gib", C_ACTIVATION_GIB, 0}, {"overhead_gib", C_OVERHEAD_GIB, 0},
  {"kv_budget_gib", C_KV_BUDGET_GIB, 0}, {"kv_bytes_per_token", C_KV_BYTES_PER_TOKEN, 0},
  {"seq_bytes", C_SEQ_BYTES, 0}, {"kv_blocks", C_KV_BLOCKS, 0}, {"kv_tokens", C_KV_TOKENS, 0},
  {"max_concurrency", C_MAX_CONCURRENCY, KVP_WANT_MAXCONC},
  {"max_context", C_MAX_CONTEXT, KVP_WANT_MAXCTX}, {"fits", C_FITS, KVP_WANT_FIT},
  {"limit", C_LIMIT, KVP_WANT_FIT}, {"why", C_WHY, KVP_WANT_FIT | KVP_WANT_FIT_NEED},
  {"starts", C_STARTS, KVP_WANT_START},
  {"tpot_ms", C_TPOT_MS, 0}, {"ttft_ms", C_TTFT_MS, 0}, {"tokens_per_s", C_TOKENS_PER_S, 0},
  {"bound", C_BOUND, 0}, {"kv_read_share", C_KV_READ_SHARE, 0}, {"usd_per_mtok", C_USD_PER_MTOK, 0},
  {"steps_per_token", C_STEPS_PER_TOKEN, 0}, {"kv_write_bytes_per_token", C_KV_WRITE_BYTES_PER_TOKEN, 0},
  {"tpot_ms_lo", C_TPOT_MS_LO, 0}, {"tpot_ms_hi", C_TPOT_MS_HI, 0}, {"ttft_ms_lo", C_TTFT_MS_LO, 0},
  {"ttft_ms_hi", C_TTFT_MS_HI, 0}, {"tokens_per_s_lo", C_TOKENS_PER_S_LO, 0},
  {"tokens_per_s_hi", C_TOKENS_PER_S_HI, 0},
  /* the same columns by names that say they are for one GPU (as reports name them) */
  {"usable_bytes_per_gpu", C_USABLE_BYTES, 0}, {"weights_bytes_per_gpu", C_WEIGHTS_BYTES, 0},
  {"activation_bytes_per_gpu", C_ACTIVATION_BYTES, 0}, {"overhead_bytes_per_gpu", C_OVERHEAD_BYTES, 0},
  {"kv_budget_bytes_per_gpu", C_KV_BUDGET_BYTES, 0}, {"usable_gib_per_gpu", C_USABLE_GIB, 0},
  {"weights_gib_per_gpu", C_WEIGHTS_GIB, 0}, {"activation_gib_per_gpu", C_ACTIVATION_GIB, 0},
  {"overhead_gib_per_gpu", C_OVERHEAD_GIB, 0}, {"kv_budget_gib_per_gpu", C_KV_BUDGET_GIB, 0},
  {"kv_bytes_per_token_per_gpu", C_KV_BYTES_PER_TOKEN, 0},
};
#define NBUILTIN (sizeof builtin / sizeof builtin[0])

/* An integer axis from spec[name] (absent: 0 values). */
static int64_t *int_axis(lua_State *L, int spec, const char *name, int64_t *n) {
  *n = 0;
  if (lua_getfield(L, spec, name) == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  luaL_checktype(L, -1, LUA_TTABLE);
  *n = (int64_t)luaL_len(L, -1);
  int64_t *v = xcalloc(L, (size_t)*n, sizeof *v);
  for (int64_t i = 0; i < *n; i++) {
    lua_geti(L, -1, i + 1);
    v[i] = kvl_toint(L, -1, name);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return v;
}

static kvp_format *format_axis(lua_State *L, int spec, const char *name, int64_t *n) {
  *n = 0;
  if (lua_getfield(L, spec, name) == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  luaL_checktype(L, -1, LUA_TTABLE);
  *n = (int64_t)luaL_len(L, -1);
  kvp_format *v = xcalloc(L, (size_t)*n, sizeof *v);
  for (int64_t i = 0; i < *n; i++) {
    lua_geti(L, -1, i + 1);
    v[i] = kvl_check_format(L, lua_gettop(L), name);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return v;
}

/* The dependency of a built-in column's text. */
static int column_dep(col_id id) {
  if (id >= C_TPOT_MS) return DEP_ROW; /* step times: of the row's context and concurrency */
  switch (id) {
    case C_ROW: case C_FITS: case C_LIMIT: case C_WHY: case C_LUA: case C_CONCURRENCY:
    case C_MAX_CONTEXT:
      return DEP_ROW;
    case C_CONTEXT: case C_SEQ_BYTES: case C_MAX_CONCURRENCY: return DEP_CTX;
    default: return DEP_LEDGER; /* labels, kv and weights included */
  }
}

/* Deployment axes: spec.axes[j] = {name =, field =, values =, labels =,
 * rowvals =}: field "base" (a digit of the base index; n values, labels per
 * base), "none" (labels only) or a deployment field set in C. */
static const struct { const char *name; kvp_field f; } field_names[] = {
  {"base", KVP_FIELD_BASE}, {"none", KVP_FIELD_NONE}, {"gpu_memory", KVP_FIELD_GPU_MEMORY},
  {"gpu", KVP_FIELD_GPU},
  {"tp", KVP_FIELD_TP}, {"pp", KVP_FIELD_PP}, {"weight_bytes", KVP_FIELD_WEIGHT_BYTES},
  {"utilization", KVP_FIELD_UTILIZATION}, {"activation", KVP_FIELD_ACTIVATION},
  {"overhead", KVP_FIELD_OVERHEAD}, {"block", KVP_FIELD_BLOCK},
  {"max_num_batched_tokens", KVP_FIELD_MAX_NUM_BATCHED_TOKENS},
  {"max_model_len", KVP_FIELD_MAX_MODEL_LEN},
  {"max_kv_tokens", KVP_FIELD_MAX_KV_TOKENS}, {"prefix", KVP_FIELD_PREFIX},
  {"samples", KVP_FIELD_SAMPLES}, {"prompt", KVP_FIELD_PROMPT}, {"output", KVP_FIELD_OUTPUT},
  {"max_num_seqs", KVP_FIELD_MAX_NUM_SEQS},
  {"optim", KVP_FIELD_OPTIM},
};

static void resolve(lua_State *L, int idx, label *lb);

/* An optim axis's combinations: values[p] = {spec = the deployment of the
 * sweep's first base with combination p (its spec table), set = {names of
 * the field groups its members set} (kvp_combo_bit), kv = the KV format's
 * name when it sets one}. Each becomes a kvp_combo, resolved here once. */
/* The n combinations of the table at `list` (false: one not resolved, left
 * zero) into *out (freed by holder_gc), with the KV format names in okv. */
static kvp_combo *combo_list(lua_State *L, int list, run *r, int64_t n, label *okv, void **out) {
  kvp_combo *c = *out = xcalloc(L, (size_t)n, sizeof *c);
  kvp_deploy *d = r->scratch = xcalloc(L, 1, sizeof *d); /* freed by holder_gc on error */
  for (int64_t i = 0; i < n; i++) {
    if (lua_geti(L, list, i + 1) == LUA_TBOOLEAN && !lua_toboolean(L, -1)) { /* not resolved */
      lua_pop(L, 1);
      continue;
    }
    luaL_checktype(L, -1, LUA_TTABLE);
    uint32_t set = 0;
    lua_getfield(L, -1, "set");
    luaL_checktype(L, -1, LUA_TTABLE);
    for (lua_Integer k = 1; k <= luaL_len(L, -1); k++) {
      lua_geti(L, -1, k);
      uint32_t bit = kvp_combo_bit(lua_tostring(L, -1));
      if (bit == 0)
        kvl_error(L, "sweep: optimization field '%s' is not one a combination sets in C",
                  lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
      set |= bit;
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (set != 0) { /* the empty combination (none) needs no deployment */
      lua_getfield(L, -1, "spec");
      kvl_check_deploy(L, lua_gettop(L), d);
      lua_pop(L, 1);
    }
    kvp_diag diag = {{0}};
    if (kvp_combo_take(&c[i], set, d, &diag) != KVP_OK)
      kvl_core_error(L, KVP_EINVAL, &diag, "optimization combination");
    if (okv != NULL) {
      if (lua_getfield(L, -1, "kv") == LUA_TSTRING) resolve(L, -1, &okv[i]);
      lua_pop(L, 1); /* the name stays alive in its table, which the spec keeps */
    }
    lua_pop(L, 1);
  }
  free(r->scratch);
  r->scratch = NULL;
  return c;
}

static kvp_combo *read_combos(lua_State *L, int t, run *r, int j, int64_t n) {
  r->okv = xcalloc(L, (size_t)n, sizeof *r->okv);
  r->optim_axis = j;
  lua_getfield(L, t, "values");
  luaL_checktype(L, -1, LUA_TTABLE);
  kvp_combo *c = combo_list(L, lua_gettop(L), r, n, r->okv, &r->vals[j]);
  lua_pop(L, 1);
  return c;
}

/* ---- what the core's prediction reads beyond each base's deployment ----------- */

/* A base's engine rule comes with its deployment (kvl_check_deploy); the
 * sweep adds what kvp_predict_deploy needs when an axis changes an input:
 * the non-torch rule's constants (spec.non_torch) and each GPU's facts of
 * the gpu axis (its A100 name, its MXFP4 kernel's layout). */

static void read_non_torch(lua_State *L, int spec, run *r) {
  if (lua_getfield(L, spec, "non_torch") != LUA_TNIL) {
    kvl_check_non_torch(L, lua_gettop(L), &r->non_torch);
    r->ax.non_torch = &r->non_torch;
  }
  lua_pop(L, 1);
}

/* What the engine rules read of each GPU of the gpu axis j (its memory's or
 * its facts' alone: deploy.lua gpu_facts), its table at t (leaves a value on
 * the stack). */
static void read_gpu_facts(lua_State *L, int t, run *r, int j) {
  kvp_sweep_axis *x = &r->uax[j];
  if (lua_getfield(L, t, "gpu") == LUA_TTABLE) {
    kvp_gpu_facts *v = xcalloc(L, (size_t)x->n, sizeof *v);
    r->gpu[j] = v;
    x->gpu = v;
    for (int64_t i = 0; i < x->n; i++) {
      lua_geti(L, -1, i + 1);
      kvl_check_gpu_facts(L, -1, &v[i]);
      lua_pop(L, 1);
    }
  }
}

static void read_axes(lua_State *L, int spec, run *r) {
  if (lua_getfield(L, spec, "axes") == LUA_TNIL) {
    lua_pop(L, 1);
    lua_newtable(L);
  }
  r->axes = lua_gettop(L);
  luaL_checktype(L, r->axes, LUA_TTABLE);
  lua_Integer n = luaL_len(L, r->axes);
  if (n > KVP_SWEEP_MAX_AXES) kvl_error(L, "a sweep takes at most %d axes, got %I", KVP_SWEEP_MAX_AXES, n);
  r->ax.naxis = (int32_t)n;
  r->ax.axis = r->uax;
  for (int j = 0; j < (int)n; j++) {
    kvp_sweep_axis *x = &r->uax[j];
    lua_geti(L, r->axes, j + 1);
    int t = lua_gettop(L);
    lua_getfield(L, t, "name");
    const char *name = lua_tostring(L, -1);
    lua_getfield(L, t, "field");
    const char *f = lua_tostring(L, -1);
    size_t k = 0;
    while (f && k < sizeof field_names / sizeof field_names[0] && strcmp(field_names[k].name, f)) k++;
    if (f == NULL || k == sizeof field_names / sizeof field_names[0])
      kvl_error(L, "sweep axis '%s': unknown field '%s'", name ? name : "?", f ? f : "nil");
    x->field = field_names[k].f;
    x->n = kvl_int_field(L, t, "n", 0);
    if (x->n < 1) kvl_error(L, "sweep axis '%s' is empty", name ? name : "?");
    if (x->field != KVP_FIELD_BASE) {
      lua_getfield(L, t, "labels");
      r->alab[j] = xcalloc(L, (size_t)x->n, sizeof *r->alab[j]);
      for (int64_t i = 0; i < x->n; i++) {
        lua_geti(L, -1, i + 1);
        resolve(L, -1, &r->alab[j][i]);
        lua_pop(L, 1); /* the string stays alive in the labels table */
      }
      lua_pop(L, 1);
    }
    if (x->field == KVP_FIELD_OPTIM) {
      if (r->optim_axis >= 0) kvl_error(L, "a sweep takes one optim axis");
      x->combo = read_combos(L, t, r, j, x->n);
    } else if (x->field != KVP_FIELD_BASE && x->field != KVP_FIELD_NONE &&
               x->field != KVP_FIELD_GPU) {
      lua_getfield(L, t, "values");
      luaL_checktype(L, -1, LUA_TTABLE);
      if (x->field == KVP_FIELD_UTILIZATION) {
        double *v = xcalloc(L, (size_t)x->n, sizeof *v);
        r->vals[j] = v;
        x->f = v;
        for (int64_t i = 0; i < x->n; i++) {
          lua_geti(L, -1, i + 1);
          v[i] = kvl_tonum(L, -1, name);
          lua_pop(L, 1);
        }
      } else {
        int64_t *v = xcalloc(L, (size_t)x->n, sizeof *v);
        r->vals[j] = v;
        x->i = v;
        for (int64_t i = 0; i < x->n; i++) {
          lua_geti(L, -1, i + 1);
          v[i] = kvl_toint(L, -1, name);
          lua_pop(L, 1);
        }
      }
      lua_pop(L, 1);
    }
    if (x->field == KVP_FIELD_GPU_MEMORY || x->field == KVP_FIELD_GPU)
      read_gpu_facts(L, t, r, j);
    lua_settop(L, t - 1);
  }
}

/* Columns: spec.columns[i] is a name; spec.precision[i] digits or nil;
 * spec.label_names lists the Lua-level axes (values per base in
 * spec.labels); spec.funcs[i] a Lua function column. "kv" and "weights"
 * are labels unless the sweep has a kv or weights axis. */
static void read_columns(lua_State *L, int spec, int cols, run *r) {
  int top = lua_gettop(L);
  lua_getfield(L, spec, "precision");
  int prec = lua_gettop(L);
  lua_getfield(L, spec, "label_names");
  int lnames = lua_gettop(L);
  r->ncol = (int)luaL_len(L, cols);
  r->cols = xcalloc(L, (size_t)r->ncol, sizeof *r->cols);
  for (int i = 0; i < r->ncol; i++) {
    column *c = &r->cols[i];
    lua_geti(L, cols, i + 1);
    const char *name = lua_tostring(L, -1);
    c->prec = -1;
    if (lua_geti(L, prec, i + 1) != LUA_TNIL) c->prec = (int)kvl_toint(L, -1, "precision");
    lua_pop(L, 1);
    if (r->funcs && lua_geti(L, r->funcs, i + 1) == LUA_TFUNCTION) {
      c->id = C_LUA;
      c->dep = DEP_ROW;
      c->lua = r->nlua++;
      r->needrow = 1;
      r->want |= KVP_WANT_FIT | KVP_WANT_MAXCONC;
      lua_pop(L, 2);
      continue;
    }
    if (r->funcs) lua_pop(L, 1);
    size_t k = 0;
    while (k < NBUILTIN && strcmp(builtin[k].name, name) != 0) k++;
    if (k < NBUILTIN && !(builtin[k].id == C_KV && !r->kv_names) &&
        !(builtin[k].id == C_WEIGHTS && !r->weights_names)) {
      c->id = builtin[k].id;
      c->dep = column_dep(c->id);
      if (c->id >= C_TPOT_MS) r->time = 1;
      if (c->id >= C_TPOT_MS_LO) r->range = 1;
      r->want |= builtin[k].want;
      if (c->prec < 0 && c->id >= C_GPU_GIB && c->id <= C_KV_BUDGET_GIB) c->prec = 2;
      if (c->prec > 9 && c->id >= C_GPU_GIB && c->id <= C_KV_BUDGET_GIB)
        kvl_error(L, "precision of column '%s' must be 0..9, got %d", name, c->prec);
    } else {
      int n = lua_istable(L, lnames) ? (int)luaL_len(L, lnames) : 0, j = 1;
      for (; j <= n; j++) {
        lua_geti(L, lnames, j);
        int same = strcmp(lua_tostring(L, -1), name) == 0;
        lua_pop(L, 1);
        if (same) break;
      }
      if (j > n) kvl_error(L, "unknown sweep column '%s'", name);
      c->id = C_LABEL;
      c->dep = DEP_LEDGER;
      c->label = j;
    }
    lua_pop(L, 1);
  }
  lua_settop(L, top);
}

/* Resolve the value at idx (a string or number, converted in place to a
 * string when it is a float) into lb. */
static void resolve(lua_State *L, int idx, label *lb) {
  if (lua_isinteger(L, idx)) {
    lb->len = kvp_fmt_int(lb->num, (int64_t)lua_tointeger(L, idx));
    lb->s = lb->num;
  } else {
    lb->s = lua_tolstring(L, idx, &lb->len);
    if (lb->s == NULL) lb->s = "", lb->len = 0;
    lb->quote = kvp_csv_needs_quotes(lb->s, lb->len);
  }
}

/* A base's SGLang weights at the positions of the C axes (the table at t's
 * sglang_weights, sweep.lua weights_table): integers kept in t as
 * _sglang_weights, which lives as long as the base's table, set on d. */
static void read_sweep_weights(lua_State *L, int t, kvp_deploy *d) {
  if (lua_getfield(L, t, "sglang_weights") == LUA_TTABLE) {
    lua_Integer n = luaL_len(L, -1);
    if (n < 2 || (uint64_t)n > SIZE_MAX / sizeof(int64_t))
      kvl_error(L, "sweep: a base's SGLang weights table has %I integers", n);
    int64_t *v = lua_newuserdatauv(L, (size_t)n * sizeof *v, 0);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_geti(L, -2, i);
      v[i - 1] = kvl_toint(L, -1, "sglang_weights");
      lua_pop(L, 1);
    }
    lua_setfield(L, t, "_sglang_weights");
    d->vllm.sweep_weights = v;
    d->vllm.nsweep_weights = (int64_t)n;
  }
  lua_pop(L, 1);
}

/* Make base b the current one (spec.base(b + 1), kept at r->entry while its
 * rows are written, then dropped for the GC): its deployment into
 * r->base[1], its labels into r->lab (the strings stay alive in its table),
 * its GPU's rates. */
static void load_entry(lua_State *L, run *r, int64_t b) {
  lua_pushvalue(L, r->basefn);
  lua_pushinteger(L, (lua_Integer)(b + 1));
  lua_call(L, 1, 1);
  if (!lua_istable(L, -1)) kvl_error(L, "sweep: base %I is not a table", (lua_Integer)(b + 1));
  lua_replace(L, r->entry);
  r->entry_b = b;
  /* its deployment, checked once and kept in its table (a base visited
   * again, under a C axis outside its own, is not checked again); a base
   * of a mixed optim axis with a combination of fixed built-ins: its plain
   * deployment (converted once, kept in the plain table several bases
   * share) with the combination written over it */
  if (lua_getfield(L, r->entry, "_deploy") == LUA_TUSERDATA) {
    r->base[1] = *(const kvp_deploy *)lua_touserdata(L, -1);
  } else if (lua_getfield(L, r->entry, "plain") == LUA_TTABLE) {
    int plain = lua_gettop(L);
    int64_t ci = kvl_int_field(L, r->entry, "combo_index", 0);
    if (ci < 1 || ci > r->nmcombo) kvl_error(L, "sweep: base %I: combination %I of %I",
                                             (lua_Integer)(b + 1), (lua_Integer)ci,
                                             (lua_Integer)r->nmcombo);
    if (lua_getfield(L, plain, "_deploy") == LUA_TUSERDATA) {
      r->base[1] = *(const kvp_deploy *)lua_touserdata(L, -1);
    } else {
      lua_getfield(L, plain, "spec");
      kvl_check_deploy(L, lua_gettop(L), &r->base[1]);
      read_sweep_weights(L, plain, &r->base[1]);
      *(kvp_deploy *)lua_newuserdatauv(L, sizeof(kvp_deploy), 0) = r->base[1];
      lua_setfield(L, plain, "_deploy");
      lua_pop(L, 1);
    }
    kvp_combo_apply(&((const kvp_combo *)r->mcombo)[ci - 1], &r->base[1]);
    lua_pop(L, 2);
  } else {
    lua_pop(L, 1);
    lua_getfield(L, r->entry, "spec");
    kvl_check_deploy(L, lua_gettop(L), &r->base[1]);
    read_sweep_weights(L, r->entry, &r->base[1]);
    *(kvp_deploy *)lua_newuserdatauv(L, sizeof(kvp_deploy), 0) = r->base[1];
    lua_setfield(L, r->entry, "_deploy");
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_getfield(L, r->entry, "label");
  luaL_checktype(L, -1, LUA_TTABLE);
  for (int j = 1; j <= r->nlabel; j++) {
    if (j <= r->ax.naxis && r->uax[j - 1].field != KVP_FIELD_BASE) continue;
    lua_geti(L, -1, j);
    resolve(L, -1, &r->lab[j - 1]);
    lua_pop(L, 1); /* strings stay alive in the label table (floats come as strings) */
  }
  lua_pop(L, 1);
  if (r->time) {
    /* one set of rates a weights-axis value when the entry gives them (the
     * format's compute rate and GEMM curves, kvplan.sim), else the base's */
    static const char *const one[3] = {"perf", "perf_slow", "perf_fast"};
    static const char *const each[3] = {"perfs", "perfs_slow", "perfs_fast"};
    int ends = r->range ? 3 : 1;
    for (int k = 0; k < ends; k++) {
      if (r->ax.nweights > 0 && lua_getfield(L, r->entry, each[k]) == LUA_TTABLE) {
        for (int w = 0; w < r->nperf; w++) {
          lua_rawgeti(L, -1, w + 1);
          r->perf[3 * w + k] = kvl_check_perf(L, lua_gettop(L));
          lua_pop(L, 1);
        }
      } else {
        if (r->ax.nweights > 0) lua_pop(L, 1);
        lua_getfield(L, r->entry, one[k]);
        kvp_perf p = kvl_check_perf(L, lua_gettop(L));
        for (int w = 0; w < r->nperf; w++) r->perf[3 * w + k] = p;
      }
      lua_pop(L, 1);
    }
  }
  /* the previous base's tables are garbage now (unless its group keeps
   * it, sweep.lua): Lua's collector reclaims them as it goes; a step here
   * per base would cost more than the rows of a small base */
}

/* The core's fetch: base b when its rows start. */
static kvp_err fetch_base(void *ctx, int64_t b, kvp_deploy *out, kvp_diag *d) {
  (void)d;
  run *r = ctx;
  if (b != r->entry_b) load_entry(r->L, r, b);
  *out = r->base[1];
  return KVP_OK;
}

/* Resolve the label columns' count and base 1, and the kv and weights axis
 * names. The strings stay alive in the tables, which stay on the stack for
 * the run. */
static void resolve_labels(lua_State *L, run *r) {
  r->nlabel = 0;
  for (int i = 0; i < r->ncol; i++)
    if (r->cols[i].id == C_LABEL && r->cols[i].label > r->nlabel) r->nlabel = r->cols[i].label;
  r->lab = xcalloc(L, (size_t)(r->nlabel ? r->nlabel : 1), sizeof *r->lab);
  r->nperf = r->ax.nweights > 0 ? (int)r->ax.nweights : 1;
  r->perf = xcalloc(L, 3 * (size_t)r->nperf, sizeof *r->perf);
  load_entry(L, r, 0);
  r->base[0] = r->base[1];
  label **dst[2] = {&r->kvn, &r->wn};
  int src[2] = {r->kv_names, r->weights_names};
  for (int k = 0; k < 2; k++) {
    if (!src[k]) continue;
    int n = (int)luaL_len(L, src[k]);
    *dst[k] = xcalloc(L, (size_t)n, sizeof **dst[k]);
    for (int j = 1; j <= n; j++) {
      lua_geti(L, src[k], j);
      resolve(L, -1, &(*dst[k])[j - 1]);
      lua_pop(L, 1);
    }
  }
}

/* spec.rules: {{column, op, value}, ...} as sweep.lua checked them. */
static void read_rules(lua_State *L, int idx, run *r) {
  static const char *const ops[] = {"==", "~=", "<", "<=", ">", ">="};
  r->nrule = (int)luaL_len(L, idx);
  r->rules = xcalloc(L, (size_t)r->nrule, sizeof *r->rules);
  for (int i = 0; i < r->nrule; i++) {
    rule *u = &r->rules[i];
    lua_geti(L, idx, i + 1);
    lua_geti(L, -1, 1);
    lua_geti(L, -2, 2);
    lua_geti(L, -3, 3);
    const char *name = lua_tostring(L, -3), *op = lua_tostring(L, -2);
    size_t k = 0;
    while (name && k < NBUILTIN && strcmp(builtin[k].name, name) != 0) k++;
    if (name == NULL || k == NBUILTIN) kvl_error(L, "filter: unknown column '%s'", name ? name : "?");
    u->id = builtin[k].id;
    r->want |= builtin[k].want;
    u->op = -1;
    for (int j = 0; op && j < (int)(sizeof ops / sizeof ops[0]); j++)
      if (strcmp(ops[j], op) == 0) u->op = j;
    if (u->op < 0) kvl_error(L, "filter: unknown operator '%s'", op ? op : "?");
    if (u->id == C_LIMIT) {
      const char *want = lua_tostring(L, -1);
      u->v = -1;
      for (int w = 0; want && w < KVP_NWHY; w++)
        if (strcmp(kvp_why_name((kvp_why)w), want) == 0) u->v = w;
      if (u->v < 0) {
        char names[256] = "";
        for (int w = 0; w < KVP_NWHY; w++) {
          if (w) strncat(names, ", ", sizeof names - strlen(names) - 1);
          strncat(names, kvp_why_name((kvp_why)w), sizeof names - strlen(names) - 1);
        }
        kvl_error(L, "filter: limit '%s' is not one of %s", want ? want : "?", names);
      }
    } else {
      u->v = kvl_toint(L, -1, "filter value");
    }
    u->dep = column_dep(u->id);
    lua_pop(L, 4);
  }
  /* conditions of the deployment first, then of the context, then of the
   * row: a failure of the first kinds skips the rows that share it */
  for (int i = 1; i < r->nrule; i++)
    for (int j = i; j > 0 && r->rules[j - 1].dep > r->rules[j].dep; j--) {
      rule t = r->rules[j];
      r->rules[j] = r->rules[j - 1];
      r->rules[j - 1] = t;
    }
}

/* The spec table at index 1 into r (sweep_lua.h); returns the stack index
 * of spec.columns. */
int kvl_sweep_read(lua_State *L, run *r) {
  /* base deployments */
  lua_getfield(L, 1, "nbase");
  r->ax.nbase = kvl_toint(L, -1, "nbase");
  lua_pop(L, 1);
  lua_getfield(L, 1, "base");
  luaL_checktype(L, -1, LUA_TFUNCTION);
  r->basefn = lua_gettop(L);
  lua_pushnil(L);
  r->entry = lua_gettop(L);
  r->entry_b = -1;
  r->L = L;
  r->base = xcalloc(L, 2, sizeof *r->base);
  r->ax.base = r->base;
  r->ax.fetch = fetch_base;
  r->ax.fetch_ctx = r;
  r->optim_axis = -1;
  r->kv_label = (int)kvl_int_field(L, 1, "kv_label", 0);
  read_axes(L, 1, r);
  if (lua_getfield(L, 1, "combos") == LUA_TTABLE) {
    r->nmcombo = (int64_t)luaL_len(L, -1);
    combo_list(L, lua_gettop(L), r, r->nmcombo, NULL, &r->mcombo);
  }
  lua_pop(L, 1);
  read_non_torch(L, 1, r);
  r->ax.tp = r->tp = int_axis(L, 1, "tp", &r->ax.ntp);
  r->ax.pp = r->pp = int_axis(L, 1, "pp", &r->ax.npp);
  r->ax.context = r->context = int_axis(L, 1, "context", &r->ax.ncontext);
  r->ax.concurrency = r->concurrency = int_axis(L, 1, "concurrency", &r->ax.nconcurrency);
  if (r->ax.nconcurrency > 0) {
    r->concn = xcalloc(L, (size_t)r->ax.nconcurrency, sizeof *r->concn);
    for (int64_t i = 0; i < r->ax.nconcurrency; i++) {
      r->concn[i].len = kvp_fmt_int(r->concn[i].num, r->concurrency[i]);
      r->concn[i].s = r->concn[i].num;
    }
  }
  r->ax.kv = r->kv = format_axis(L, 1, "kv", &r->ax.nkv);
  r->ax.weights = r->weights = format_axis(L, 1, "weights", &r->ax.nweights);

  r->kv_names = lua_getfield(L, 1, "kv_names") == LUA_TTABLE ? lua_gettop(L) : 0;
  r->weights_names = lua_getfield(L, 1, "weights_names") == LUA_TTABLE ? lua_gettop(L) : 0;
  r->funcs = lua_getfield(L, 1, "funcs") == LUA_TTABLE ? lua_gettop(L) : 0;
  lua_getfield(L, 1, "filter");
  r->filter = lua_isfunction(L, -1) ? lua_gettop(L) : 0;
  lua_getfield(L, 1, "each");
  r->each = lua_isfunction(L, -1) ? lua_gettop(L) : 0;
  if (r->filter || r->each) {
    r->needrow = 1;
    r->want |= KVP_WANT_FIT | KVP_WANT_MAXCONC;
  }
  lua_getfield(L, 1, "columns");
  int cols = lua_gettop(L);
  luaL_checktype(L, cols, LUA_TTABLE);
  read_columns(L, 1, cols, r);
  if (lua_getfield(L, 1, "rules") == LUA_TTABLE) read_rules(L, lua_gettop(L), r);
  lua_pop(L, 1);
  r->t.cost_id = -1;
  r->t.range_id[0] = r->t.range_id[1] = -1;
  resolve_labels(L, r);
  return cols;
}

/* sweep_core.columns() (sweep_lua.h) */
int kvl_sweep_columns(lua_State *L) {
  lua_createtable(L, (int)NBUILTIN, 0);
  for (size_t i = 0; i < NBUILTIN; i++) {
    lua_pushstring(L, builtin[i].name);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}
