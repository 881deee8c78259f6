/*
 * core_lua.c: the Lua binding of the core: require "kvplan.core".
 * Binding layer: checks arguments, calls the core, turns kvp_err into a Lua
 * error. No accounting here: every number comes from the core.
 */
#include <stdlib.h>
#include <string.h>

#include "kvplan_lua.h"

#define LEDGER_MT "kvplan.Ledger"

/* ---- models (a deployment's conversion: convert_lua.c) -------------------- */

static const char *const kind_keys[] = {
  "kind", "n", "window", "kv_heads", "head_dim", "head_dim_v", "kv_lora_rank",
  "rope_dim", "state_bytes", "state_heads", "spec_state_bytes", "encoder_tokens", "sink_len", "note",
  NULL
};

/* One run of layer_kinds at idx; base gives the model-wide defaults. */
static void check_run(lua_State *L, int idx, int i, const kvp_layer *base, kvp_layer *out,
                      int64_t *n) {
  char what[32];
  snprintf(what, sizeof what, "layer_kinds[%d]", i);
  if (!lua_istable(L, idx)) kvl_error(L, "field '%s' must be a table, %s", what, kvl_got(L, idx));
  kvl_check_keys(L, idx, kind_keys, what);
  lua_getfield(L, idx, "kind");
  kvp_kind kind = kvl_check_kind(L, -1, what);
  lua_pop(L, 1);
  *out = *base;
  out->kind = kind;
  *n = kvl_int_field(L, idx, "n", 1);
  out->kv_heads = kvl_int_field(L, idx, "kv_heads", base->kv_heads);
  out->head_dim = kvl_int_field(L, idx, "head_dim", base->head_dim);
  out->head_dim_v = kvl_int_field(L, idx, "head_dim_v",
                                  kvl_int_field(L, idx, "head_dim", base->head_dim_v));
  out->window = kvl_int_field(L, idx, "window", 0);
  /* cross-attention: the encoder tokens a request caches */
  if (kind == KVP_CROSS) out->window = kvl_int_field(L, idx, "encoder_tokens", out->window);
  out->latent = kvl_int_field(L, idx, "kv_lora_rank", base->latent);
  out->rope_dim = kvl_int_field(L, idx, "rope_dim", base->rope_dim);
  out->state_bytes = kvl_int_field(L, idx, "state_bytes", 0);
  if (kind == KVP_STATE) out->kv_heads = kvl_int_field(L, idx, "state_heads", 1);
  /* keep shapes comparable: zero what the kind does not use */
  if (kind != KVP_SLIDING && kind != KVP_CHUNKED && kind != KVP_CROSS) out->window = 0;
  if (kind != KVP_MLA)
    out->latent = out->rope_dim = out->index_dim = out->index_heads = out->index_topk = 0;
  if (kind == KVP_MLA || kind == KVP_STATE || kind == KVP_NONE)
    out->head_dim = out->head_dim_v = 0;
  if (kind == KVP_MLA || kind == KVP_NONE) out->kv_heads = 0;
  if (kind != KVP_STATE) out->state_bytes = 0;
  out->sink = kind == KVP_FULL ? kvl_int_field(L, idx, "sink_len", 0) : 0;
}

static const char *const model_keys[] = {
  "layers", "hidden", "heads", "kv_heads", "head_dim", "head_dim_v", "params", "active",
  "max_context", "layer_kinds", "kv_lora_rank", "rope_dim", "index_head_dim", "index_n_heads",
  "index_topk", "linear_shards",
  "linear_cols", NULL
};

/* core.model(t): a Model from architecture fields (see stdlib models.lua). */
static int l_model(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  kvl_check_keys(L, 1, model_keys, "model");
  int64_t heads = kvl_int_field(L, 1, "heads", 0);
  int64_t hidden = kvl_int_field(L, 1, "hidden", 0);
  int64_t head_dim = kvl_int_field(L, 1, "head_dim", heads > 0 ? hidden / heads : 0);
  kvp_model *m = lua_newuserdatauv(L, sizeof *m, 0);
  kvp_diag d = {{0}};
  int64_t kv_heads = kvl_int_field(L, 1, "kv_heads", heads);
  /* heads 0: a model without attention (its layer_kinds hold states and
   * MLP-only blocks); kvp_model_check refuses it with an attention layer */
  kvp_err e = kvp_model_init(m, kvl_int_field(L, 1, "layers", 0), hidden, heads ? heads : 1,
                             heads ? kv_heads : 1, heads ? head_dim : 1, &d);
  if (e != KVP_OK) return kvl_core_error(L, e, &d, "model");
  m->heads = heads;
  m->spec[0].head_dim_v = kvl_int_field(L, 1, "head_dim_v", head_dim);
  m->params = kvl_int_field(L, 1, "params", 0);
  m->active = kvl_int_field(L, 1, "active", m->params);
  m->max_context = kvl_int_field(L, 1, "max_context", 0);
  m->linear_shards = kvl_int_field(L, 1, "linear_shards", 0);
  m->linear_cols = kvl_int_field(L, 1, "linear_cols", 0);
  kvp_layer base = m->spec[0];
  base.latent = kvl_int_field(L, 1, "kv_lora_rank", 0);
  base.rope_dim = kvl_int_field(L, 1, "rope_dim", 0);
  base.index_dim = kvl_int_field(L, 1, "index_head_dim", 0);
  if (base.index_dim < 0 || (base.index_dim > 0 && base.latent == 0))
    return kvl_error(L, "field 'index_head_dim' needs MLA (kv_lora_rank) and must be >= 0, got %I",
                     (lua_Integer)base.index_dim);
  /* its query heads and top-k (DeepSeek-V3.2 index_n_heads, index_topk): the
   * step time's (roofline.c), checked with the layer (model.c) */
  base.index_heads = kvl_int_field(L, 1, "index_n_heads", 0);
  base.index_topk = kvl_int_field(L, 1, "index_topk", 0);
  if (base.latent > 0 && lua_getfield(L, 1, "layer_kinds") == LUA_TNIL) {
    lua_pop(L, 1); /* MLA on every layer */
    m->spec[0] = base;
    m->spec[0].kind = KVP_MLA;
    m->spec[0].kv_heads = m->spec[0].head_dim = m->spec[0].head_dim_v = 0;
  } else {
    if (base.latent == 0) lua_getfield(L, 1, "layer_kinds");
    if (!lua_isnil(L, -1)) {
      luaL_argexpected(L, lua_istable(L, -1), 1, "table for field 'layer_kinds'");
      int nruns = (int)luaL_len(L, -1);
      if (nruns > 256) return kvl_error(L, "field 'layer_kinds' holds %d runs, at most 256", nruns);
      kvp_layer runs[256];
      int64_t counts[256];
      for (int i = 0; i < nruns; i++) {
        lua_geti(L, -1, i + 1);
        check_run(L, -1, i + 1, &base, &runs[i], &counts[i]);
        lua_pop(L, 1);
      }
      e = kvp_model_set_pattern(m, runs, counts, nruns, &d);
      if (e != KVP_OK) return kvl_core_error(L, e, &d, "model");
    }
    lua_pop(L, 1);
  }
  e = kvp_model_check(m, &d);
  if (e != KVP_OK) return kvl_core_error(L, e, &d, "model");
  luaL_setmetatable(L, KVL_MODEL_MT);
  return 1;
}

static kvp_model *check_model(lua_State *L, int idx) {
  return luaL_checkudata(L, idx, KVL_MODEL_MT);
}

static int64_t check_tp_arg(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) return 1;
  int64_t tp = kvl_toint(L, idx, "tp");
  if (tp < 1) return kvl_error(L, "field 'tp' must be a positive integer, got %I", (lua_Integer)tp);
  return tp;
}

/* m:token_bits(format [, tp]): bits one token adds on every KV layer of
 * one GPU (windows not yet reached). */
static int model_token_bits(lua_State *L) {
  kvp_model *m = check_model(L, 1);
  kvp_format f = kvl_check_format(L, 2, "kv");
  int64_t tp = check_tp_arg(L, 3), total = 0;
  kvp_err e = KVP_OK;
  for (int64_t i = 0; i < m->layers && e == KVP_OK; i++) {
    int64_t b;
    e = kvp_kv_token_bits(&m->spec[m->layer_spec[i]], &f, tp, &b);
    if (e == KVP_OK && __builtin_add_overflow(total, b, &total)) e = KVP_EOVERFLOW;
  }
  if (e != KVP_OK) return kvl_core_error(L, e, NULL, "token bits");
  lua_pushinteger(L, (lua_Integer)total);
  return 1;
}

/* m:seq_bytes(n, format [, tp]): unpaged KV bytes of one sequence. */
static int model_seq_bytes(lua_State *L) {
  kvp_model *m = check_model(L, 1);
  int64_t n = kvl_toint(L, 2, "tokens");
  if (n < 0) return kvl_error(L, "field 'tokens' must be a non-negative integer, got %I",
                              (lua_Integer)n);
  kvp_format f = kvl_check_format(L, 3, "kv");
  int64_t tp = check_tp_arg(L, 4), bytes;
  kvp_err e = kvp_kv_seq_bytes(m, &f, tp, 0, m->layers, n, &bytes);
  if (e != KVP_OK) return kvl_core_error(L, e, NULL, "sequence bytes");
  lua_pushinteger(L, (lua_Integer)bytes);
  return 1;
}

/* m:kinds(): {full = 32, sliding = 0, ...} layer counts by kind */
static int model_kinds(lua_State *L) {
  kvp_model *m = check_model(L, 1);
  int64_t counts[KVP_NKINDS];
  kvp_model_kind_counts(m, counts);
  lua_createtable(L, 0, KVP_NKINDS);
  for (int k = 0; k < KVP_NKINDS; k++) {
    kvl_set_int(L, kvp_kind_name((kvp_kind)k), counts[k]);
  }
  return 1;
}

/* m:layer(i): the shape of layer i (1-based) as a table */
static int model_layer(lua_State *L) {
  kvp_model *m = check_model(L, 1);
  int64_t i = kvl_toint(L, 2, "layer");
  if (i < 1 || i > m->layers)
    return kvl_error(L, "layer %I out of range 1..%I", (lua_Integer)i, (lua_Integer)m->layers);
  const kvp_layer *l = &m->spec[m->layer_spec[i - 1]];
  lua_createtable(L, 0, 8);
  lua_pushstring(L, kvp_kind_name(l->kind));
  lua_setfield(L, -2, "kind");
  const struct { const char *k; int64_t v; } f[] = {
    {"kv_heads", l->kv_heads}, {"head_dim", l->head_dim}, {"head_dim_v", l->head_dim_v},
    {"window", l->window}, {"kv_lora_rank", l->latent}, {"rope_dim", l->rope_dim},
    {"index_head_dim", l->index_dim}, {"index_n_heads", l->index_heads},
    {"index_topk", l->index_topk},
    {"state_bytes", l->state_bytes}
  };
  for (size_t j = 0; j < sizeof f / sizeof f[0]; j++)
    if (f[j].v != 0) {
      kvl_set_int(L, f[j].k, f[j].v);
    }
  return 1;
}

/* ---- ledger ---------------------------------------------------------------- */

/* ---- overflow: which input? --------------------------------------------------- */

/* The inputs an overflow can come from, by the names users give them, and
 * a value that cannot overflow anything (the default, or off). */
static const struct {
  const char *name;
  size_t off;      /* offset of the int64_t in kvp_deploy */
  int64_t neutral;
} inputs[] = {
  {"block", offsetof(kvp_deploy, block), 16},
  {"overhead", offsetof(kvp_deploy, overhead_bytes), 0},
  {"system_memory", offsetof(kvp_deploy, system_bytes), 0},
  {"activation", offsetof(kvp_deploy, activation_bytes), 0},
  {"max_model_len", offsetof(kvp_deploy, max_model_len), 1},
  {"max_num_batched_tokens", offsetof(kvp_deploy, max_num_batched_tokens), 1},
  {"weight_bytes", offsetof(kvp_deploy, weight_bytes), 0},
  {"gpu_memory", offsetof(kvp_deploy, gpu_bytes), (int64_t)1 << 30},
  {"max_kv_tokens", offsetof(kvp_deploy, max_kv_tokens), 0},
  {"prefix", offsetof(kvp_deploy, prefix), 0},
  {"host_bytes", offsetof(kvp_deploy, host_bytes), 0},
  {"params", offsetof(kvp_deploy, model.params), 1},
  {"max_context", offsetof(kvp_deploy, model.max_context), 1},
  /* vLLM's sizes that multiply the block (ledger.c: block x dcp x pcp) and the
   * overrides of the pool: a huge one was blamed on gpu_memory and params */
  {"decode_context_parallel_size", offsetof(kvp_deploy, vllm.dcp), 1},
  {"prefill_context_parallel_size", offsetof(kvp_deploy, vllm.pcp), 1},
  {"data_parallel_size", offsetof(kvp_deploy, vllm.dp), 1},
  {"num_gpu_blocks_override", offsetof(kvp_deploy, vllm.blocks_override), 0},
  {"kv_cache_memory_bytes", offsetof(kvp_deploy, vllm.kv_cache_bytes), 0},
  /* a request's own KV is samples x its tokens (ledger.c request_cost) */
  {"samples", offsetof(kvp_deploy, samples), 1},
};

/* Does the question (the ledger, then max_context at arg when want is 1,
 * max_concurrency at context arg when 2, the fit of arg2 requests of arg
 * tokens when 3, request_bytes of arg tokens in stage arg2 when 4) overflow
 * for deployment d? */
static int overflows(const kvp_deploy *d, int want, int64_t arg, int64_t arg2) {
  kvp_ledger *l = malloc(kvp_ledger_size(d));
  if (l == NULL) return 1;
  kvp_diag diag = {{0}};
  int64_t n;
  kvp_fit f;
  kvp_err e = kvp_ledger_eval(d, l, &diag);
  if (e == KVP_OK && want == 1) e = kvp_ledger_max_context(l, arg, &n, &f);
  if (e == KVP_OK && want == 2) e = kvp_ledger_max_concurrency(l, arg, &n, &f);
  if (e == KVP_OK && want == 3) {
    kvp_verdict v;
    e = kvp_verdict_fit(l, arg, arg2, &v, &diag);
  }
  if (e == KVP_OK && want == 5) { /* a sweep's row: any of its answers */
    kvp_verdict v;
    int64_t c;
    e = kvp_verdict_fit(l, arg, arg2, &v, &diag);
    if (e == KVP_OK) e = kvp_ledger_max_concurrency(l, arg, &c, &f);
    if (e == KVP_OK) e = kvp_ledger_max_context(l, arg2, &c, &f);
  }
  if (e == KVP_OK && want == 4) {
    int64_t own, shared, sum, points;
    e = arg2 < 0 || arg2 >= l->nstage ? KVP_EINVAL
        : kvp_ledger_request_bytes(l, (int32_t)arg2, arg, &own, &shared, &sum, &points);
  }
  free(l);
  return e != KVP_OK; /* another error is no answer either (context=1e18 was blamed on gpu_memory) */
}

/* Raise the error of a failed ledger question; an overflow names the inputs
 * that cause it ("arithmetic overflow" alone says nothing the user can act
 * on): the largest inputs are set to a neutral value one after another,
 * largest first, until the question is answerable; those are named with
 * their values. */
static int ledger_error(lua_State *L, kvp_err e, const kvp_diag *diag, const char *what,
                        const kvp_deploy *d, int want, int64_t arg, int64_t arg2) {
  if (e != KVP_EOVERFLOW) return kvl_core_error(L, e, diag, what);
  enum { N = sizeof inputs / sizeof inputs[0] };
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  if (diag != NULL && diag->msg[0] != '\0') luaL_addstring(&b, diag->msg);
  else lua_pushfstring(L, "%s: arithmetic overflow past 2^63", what), luaL_addvalue(&b);
  int done[N] = {0}, named = 0, fixed = 0;
  kvp_deploy t = *d;
  for (;;) {
    int best = -1;
    int64_t bv = 0;
    for (int i = 0; i < (int)N; i++) {
      int64_t v = *(int64_t *)(void *)((char *)&t + inputs[i].off);
      if (!done[i] && v > inputs[i].neutral && v > bv) best = i, bv = v;
    }
    if (best < 0) break;
    done[best] = 1;
    *(int64_t *)(void *)((char *)&t + inputs[best].off) = inputs[best].neutral;
    if (t.model.active > t.model.params) t.model.active = t.model.params; /* model.c's check */
    lua_pushfstring(L, "%s field '%s' = %I", named++ ? "," : ": caused by", inputs[best].name,
                    (lua_Integer)bv);
    luaL_addvalue(&b);
    if (!overflows(&t, want, arg, arg2)) {
      fixed = 1;
      break;
    }
  }
  if (!fixed) {
    luaL_buffsub(&b, (size_t)luaL_bufflen(&b)); /* nothing named does it alone: say the question */
    if (diag != NULL && diag->msg[0] != '\0') luaL_addstring(&b, diag->msg);
    else lua_pushfstring(L, "%s: arithmetic overflow past 2^63", what), luaL_addvalue(&b);
    if (want == 1 || want == 2) {
      lua_pushfstring(L, " at %s %I", want == 1 ? "concurrency" : "context", (lua_Integer)arg);
      luaL_addvalue(&b);
    } else if (want == 3 || want == 5) {
      lua_pushfstring(L, " at %I requests of %I tokens", (lua_Integer)arg2, (lua_Integer)arg);
      luaL_addvalue(&b);
    } else if (want == 4) {
      lua_pushfstring(L, ": the KV of one request of %I tokens exceeds 64 bits", (lua_Integer)arg);
      luaL_addvalue(&b);
    }
  } else {
    luaL_addstring(&b, " (too large to count in 64 bits)");
  }
  luaL_pushresult(&b);
  return kvl_error(L, "%s", lua_tostring(L, -1));
}

int kvl_overflow_error(lua_State *L, const char *what, const kvp_deploy *d, int64_t context,
                       int64_t concurrency) {
  return ledger_error(L, KVP_EOVERFLOW, NULL, what, d, 5, context, concurrency);
}

/* core.ledger(t [, rates]): evaluate a deployment. rates: the perf table
 * its step times use (l:time), or a string saying why it has none. */
static int l_ledger(lua_State *L) {
  kvp_deploy d;
  kvl_check_deploy(L, 1, &d);
  int rates = lua_type(L, 2);
  if (rates != LUA_TNONE && rates != LUA_TNIL && rates != LUA_TTABLE && rates != LUA_TSTRING)
    return kvl_error(L, "core.ledger: rates must be a table or a string, got %s", kvl_got(L, 2));
  /* only the stages the deployment has: a pp 1 ledger is 7 KB, not 55 */
  kvp_ledger *l = lua_newuserdatauv(L, kvp_ledger_size(&d), 1);
  kvp_diag diag = {{0}};
  kvp_err e = kvp_ledger_eval(&d, l, &diag);
  if (e != KVP_OK) return ledger_error(L, e, &diag, "ledger", &d, 0, 0, 0);
  luaL_setmetatable(L, LEDGER_MT);
  if (rates == LUA_TTABLE || rates == LUA_TSTRING) {
    lua_pushvalue(L, 2);
    lua_setiuservalue(L, -2, 1);
  }
  return 1;
}

static kvp_ledger *check_ledger(lua_State *L) {
  return luaL_checkudata(L, 1, LEDGER_MT);
}

static void push_why(lua_State *L, const kvp_fit *f) {
  char buf[256];
  kvp_fit_explain(f, buf, sizeof buf);
  lua_pushstring(L, buf);
}

/* The limiting term as a short name ("weights", "kv", ...). */
static void push_limit(lua_State *L, const kvp_fit *f) {
  lua_pushstring(L, kvp_why_name(f->why));
}

static int64_t check_count_arg(lua_State *L, int idx, const char *name) {
  int64_t v = kvl_toint(L, idx, name);
  if (v < 1) return kvl_error(L, "field '%s' must be a positive integer, got %I", name,
                              (lua_Integer)v);
  return v;
}

/* The verdict's why and limit (starts.h): the engine's error for "starts". */
static void push_verdict(lua_State *L, const kvp_ledger *l, const kvp_verdict *v) {
  char buf[KVP_START_TEXT_MAX];
  int n = kvp_verdict_explain(l, &v->fit, &v->start, buf, sizeof buf);
  lua_pushlstring(L, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
  push_limit(L, &v->fit);
}

/* l:max_concurrency(context) -> n, why, limit (why is "" when n > 0, unless
 * max_num_seqs caps n: limit "max_num_seqs", or the engine refuses to start:
 * limit "starts", n what the KV cache holds; kvp_verdict_max_concurrency) */
static int ledger_max_concurrency(lua_State *L) {
  kvp_ledger *l = check_ledger(L);
  int64_t n;
  kvp_verdict v;
  int64_t ctx = check_count_arg(L, 2, "context");
  kvp_diag diag = {{0}};
  kvp_err e = kvp_verdict_max_concurrency(l, ctx, &n, &v, &diag);
  if (e != KVP_OK && diag.msg[0] != '\0') return kvl_core_error(L, e, &diag, "max_concurrency");
  if (e != KVP_OK) return ledger_error(L, e, NULL, "max_concurrency", &l->d, 2, ctx, 0);
  lua_pushinteger(L, (lua_Integer)n);
  push_verdict(L, l, &v);
  return 3;
}

/* l:max_context(concurrency) -> n, why, limit */
static int ledger_max_context(lua_State *L) {
  kvp_ledger *l = check_ledger(L);
  int64_t n;
  kvp_fit f;
  int64_t conc = check_count_arg(L, 2, "concurrency");
  kvp_err e = kvp_ledger_max_context(l, conc, &n, &f);
  if (e != KVP_OK) return ledger_error(L, e, NULL, "max_context", &l->d, 1, conc, 0);
  lua_pushinteger(L, (lua_Integer)n);
  push_why(L, &f);
  push_limit(L, &f);
  return 3;
}

/* l:fit(context, concurrency) -> fits, why, limit: the verdict
 * (kvp_verdict_fit): "none" when the requests run, else "tp_heads",
 * "tp_kv_heads", "pp_layers", "weights", "reserved", "no_block", "context",
 * "kv", "overcommit", "max_num_seqs" or "starts" (they would fit, the engine
 * refuses to start; why its error) */
static int ledger_fit(lua_State *L) {
  kvp_ledger *l = check_ledger(L);
  kvp_verdict v;
  kvp_diag diag = {{0}};
  int64_t ctx = check_count_arg(L, 2, "context"), conc = check_count_arg(L, 3, "concurrency");
  kvp_err e = kvp_verdict_fit(l, ctx, conc, &v, &diag);
  /* an overflow names its inputs ("fit: arithmetic overflow" for samples=1e18) */
  if (e == KVP_EOVERFLOW && diag.msg[0] == '\0')
    return ledger_error(L, e, NULL, "fit", &l->d, 3, ctx, conc);
  if (e != KVP_OK) return kvl_core_error(L, e, &diag, "fit");
  lua_pushboolean(L, v.fit.why == KVP_FITS);
  push_verdict(L, l, &v);
  return 3;
}

/* l:starts() -> starts, why: whether the engine starts (starts.c) and its
 * error in words ("" when it starts as asked; a note when it starts with a
 * shorter limit than asked) */
static int ledger_starts(lua_State *L) {
  kvp_ledger *l = check_ledger(L);
  kvp_start st;
  kvp_diag diag = {{0}};
  kvp_err e = kvp_start_check(l, &st, &diag);
  if (e != KVP_OK) return kvl_core_error(L, e, &diag, "starts");
  char buf[KVP_START_TEXT_MAX];
  int n = kvp_start_explain(l, &st, buf, sizeof buf);
  lua_pushboolean(L, st.starts);
  lua_pushlstring(L, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
  return 2;
}

/* l:seq_bytes(n [, stage]) -> paged KV bytes of one sequence on one GPU */
static int ledger_seq_bytes(lua_State *L) {
  kvp_ledger *l = check_ledger(L);
  int64_t n = kvl_toint(L, 2, "tokens"), bytes;
  int64_t s = lua_isnoneornil(L, 3) ? l->tight + 1 : kvl_toint(L, 3, "stage");
  if (l->nstage == 0) return kvl_error(L, "deployment has no pipeline stage (pp > layers)");
  if (s < 1 || s > l->nstage)
    return kvl_error(L, "field 'stage' must be 1..%d, got %I", (int)l->nstage, (lua_Integer)s);
  if (n < 0) return kvl_error(L, "field 'tokens' must be >= 0, got %I", (lua_Integer)n);
  kvp_err e = kvp_ledger_seq_bytes(l, (int32_t)(s - 1), n, &bytes);
  if (e != KVP_OK) return kvl_core_error(L, e, NULL, "seq_bytes");
  lua_pushinteger(L, (lua_Integer)bytes);
  return 1;
}

/* l:request_bytes(n [, stage]) -> own, shared, expected: what one request of
 * n tokens holds beyond the shared prefix, the prefix held once, and under
 * continuous batching the expected own bytes (a float; else = own) */
static int ledger_request_bytes(lua_State *L) {
  kvp_ledger *l = check_ledger(L);
  int64_t n = kvl_toint(L, 2, "tokens"), own, shared, sum, points;
  int64_t s = lua_isnoneornil(L, 3) ? l->tight + 1 : kvl_toint(L, 3, "stage");
  if (l->nstage == 0) return kvl_error(L, "deployment has no pipeline stage (pp > layers)");
  if (s < 1 || s > l->nstage)
    return kvl_error(L, "field 'stage' must be 1..%d, got %I", (int)l->nstage, (lua_Integer)s);
  if (n < 0) return kvl_error(L, "field 'tokens' must be >= 0, got %I", (lua_Integer)n);
  kvp_err e = kvp_ledger_request_bytes(l, (int32_t)(s - 1), n, &own, &shared, &sum, &points);
  if (e == KVP_EOVERFLOW) /* was "request_bytes: arithmetic overflow: a count exceeds 64 bits" */
    return ledger_error(L, e, NULL, "request_bytes", &l->d, 4, n, s - 1);
  if (e != KVP_OK) return kvl_core_error(L, e, NULL, "request_bytes");
  lua_pushinteger(L, (lua_Integer)own);
  lua_pushinteger(L, (lua_Integer)shared);
  if (points == 1) lua_pushinteger(L, (lua_Integer)sum);
  else lua_pushnumber(L, (double)sum / (double)points);
  return 3;
}

static const kvp_stage *tight(const kvp_ledger *l) {
  static const kvp_stage none;
  return l->nstage > 0 ? &l->stage[l->tight] : &none;
}

static int64_t nonneg(int64_t v) { return v > 0 ? v : 0; }

/* Ledger fields, by name: each getter pushes one value. */
#define GETTER(name, expr) \
  static int get_##name(lua_State *L, const kvp_ledger *l) { (void)l; expr; return 1; }
GETTER(total, lua_pushinteger(L, l->total))
GETTER(usable, lua_pushinteger(L, l->usable))
GETTER(safety, lua_pushinteger(L, l->d.budget == KVP_BUDGET_VLLM ? l->total - l->usable
                                                                   : tight(l)->margin))
GETTER(weights, lua_pushinteger(L, tight(l)->weights))
GETTER(lora, lua_pushinteger(L, tight(l)->lora))
GETTER(rotary, lua_pushinteger(L, tight(l)->rotary))
GETTER(alloc, lua_pushinteger(L, tight(l)->alloc))
GETTER(weights_total, lua_pushinteger(L, l->weights_total))
GETTER(activation, lua_pushinteger(L, l->d.vllm.stage_activation_bytes[l->tight] > 0
                                           ? l->d.vllm.stage_activation_bytes[l->tight]
                                           : l->d.activation_bytes))
GETTER(overhead, lua_pushinteger(L, l->d.overhead_bytes))
GETTER(system, lua_pushinteger(L, l->d.system_bytes))
GETTER(kv_budget, lua_pushinteger(L, nonneg(tight(l)->kv_budget)))
GETTER(kv_token_bits, lua_pushinteger(L, tight(l)->token_bits))
GETTER(block_bytes, lua_pushinteger(L, tight(l)->block_bytes))
GETTER(state_bytes, lua_pushinteger(L, tight(l)->state_bytes))
GETTER(kv_blocks, lua_pushinteger(L, l->fit.why == KVP_FITS ? tight(l)->blocks : 0))
GETTER(kv_tokens, lua_pushinteger(L, kvp_ledger_kv_tokens(l)))
GETTER(fits, lua_pushboolean(L, l->fit.why == KVP_FITS))
GETTER(why, push_why(L, &l->fit))
GETTER(limit, push_limit(L, &l->fit))
GETTER(stage, lua_pushinteger(L, l->tight + 1))
GETTER(stages, lua_pushinteger(L, l->nstage))
GETTER(tp, lua_pushinteger(L, l->d.tp))
GETTER(pp, lua_pushinteger(L, l->d.pp))
GETTER(block, lua_pushinteger(L, l->d.block))
GETTER(max_model_len, lua_pushinteger(L, l->max_len))
GETTER(layers, lua_pushinteger(L, tight(l)->layers))
GETTER(budget, lua_pushstring(L, kvp_budget_name(l->d.budget)))
GETTER(allocation, lua_pushstring(L, kvp_alloc_name(l->d.alloc)))
GETTER(kv_pool, lua_pushinteger(L, nonneg(tight(l)->pool)))
GETTER(host_blocks, lua_pushinteger(L, tight(l)->host_blocks))
GETTER(null_blocks, lua_pushinteger(L, l->null_blocks))
GETTER(data_parallel_size, lua_pushinteger(L, kvp_dp_ranks(&l->d)))
#undef GETTER

/* vLLM's KV cache groups (1 for a model of one KV type) */
static int get_kv_groups(lua_State *L, const kvp_ledger *l) {
  lua_pushinteger(L, l->hybrid ? l->ngroups : 1);
  return 1;
}

/* What vLLM logs: "GPU KV cache size: N tokens" and "Maximum concurrency for
 * max_model_len tokens per request: X" (0 under another budget rule). */
static int get_vllm_kv_cache_tokens(lua_State *L, const kvp_ledger *l) {
  int64_t tokens, blocks, per;
  if (kvp_ledger_vllm_log(l, &tokens, &blocks, &per) != KVP_OK) tokens = 0;
  else if (l->d.vllm.log_tokens_mode == 1 && per > 0)
    /* the release prints int(max_concurrency x max_model_len) (engines.lua
     * tokens_from_concurrency): max_concurrency = blocks / per, as logged */
    tokens = (int64_t)((double)blocks / (double)per * (double)l->max_len);
  lua_pushinteger(L, tokens);
  return 1;
}

static int get_vllm_max_concurrency(lua_State *L, const kvp_ledger *l) {
  int64_t tokens, blocks, per;
  int ok = kvp_ledger_vllm_log(l, &tokens, &blocks, &per) == KVP_OK && per > 0;
  lua_pushnumber(L, ok ? (double)blocks / (double)per : 0.0);
  return 1;
}

/* vLLM's startup check: its estimate of the longest max_model_len that fits
 * (0 under another budget rule), the bytes one max_model_len request needs
 * on the deciding worker, and whether vLLM starts. */
static int vllm_check(const kvp_ledger *l, kvp_vllm_start *c) {
  return kvp_vllm_check(l, c) == KVP_OK;
}
static int get_vllm_max_model_len(lua_State *L, const kvp_ledger *l) {
  kvp_vllm_start c;
  lua_pushinteger(L, vllm_check(l, &c) ? c.max_model_len : 0);
  return 1;
}
static int get_vllm_kv_needed(lua_State *L, const kvp_ledger *l) {
  kvp_vllm_start c;
  lua_pushinteger(L, vllm_check(l, &c) ? c.needed : 0);
  return 1;
}
static int get_vllm_starts(lua_State *L, const kvp_ledger *l) {
  kvp_vllm_start c;
  lua_pushboolean(L, vllm_check(l, &c) && c.starts);
  return 1;
}

/* The block size of each KV cache group, in group order, "/"-joined
 * ("16/16/544"); one group: the block. */
static int get_group_blocks(lua_State *L, const kvp_ledger *l) {
  if (!l->hybrid) {
    lua_pushfstring(L, "%I", (lua_Integer)l->d.block);
    return 1;
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  int first = 1;
  for (int32_t t = 0; t < l->ntype; t++)
    for (int64_t g = 0; g < kvp_ledger_types(l)[t].groups; g++) {
      if (!first) luaL_addchar(&b, '/');
      first = 0;
      lua_pushfstring(L, "%I", (lua_Integer)kvp_ledger_types(l)[t].block);
      luaL_addvalue(&b);
    }
  luaL_pushresult(&b);
  return 1;
}

/* bits / 8: an integer when whole, else the exact binary fraction */
static int get_kv_bytes_per_token(lua_State *L, const kvp_ledger *l) {
  int64_t bits = tight(l)->token_bits;
  if (bits % 8 == 0) lua_pushinteger(L, bits / 8);
  else lua_pushnumber(L, (double)bits / 8.0);
  return 1;
}

typedef int (*getter)(lua_State *L, const kvp_ledger *l);
static const struct { const char *name; getter get; } getters[] = {
#define G(n) {#n, get_##n}
  G(total), G(usable), G(safety), G(weights), G(lora), G(rotary), G(alloc), G(weights_total), G(activation), G(overhead), G(system),
  G(kv_budget), G(kv_token_bits), G(kv_bytes_per_token), G(block_bytes), G(state_bytes),
  G(kv_blocks), G(kv_tokens), G(fits), G(why), G(limit), G(stage), G(stages), G(tp), G(pp), G(block),
  G(max_model_len), G(layers), G(kv_groups), G(vllm_kv_cache_tokens),
  G(vllm_max_concurrency), G(budget), G(allocation), G(kv_pool), G(host_blocks),
  G(null_blocks), G(data_parallel_size), G(vllm_max_model_len), G(vllm_kv_needed), G(vllm_starts), G(group_blocks),
#undef G
};

/* __index: methods first (upvalue 1), then field getters (upvalue 2, a
 * table of light userdata indexed by name) */
static int ledger_index(lua_State *L) {
  const kvp_ledger *l = check_ledger(L);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(2)) == LUA_TLIGHTUSERDATA) {
    size_t i = (size_t)(uintptr_t)lua_touserdata(L, -1);
    return getters[i].get(L, l);
  }
  return kvl_error(L, "ledger has no field '%s'", luaL_tolstring(L, 2, NULL));
}

/* core.ledger_fields: the field names in their documented order */
static void push_field_names(lua_State *L) {
  size_t n = sizeof getters / sizeof getters[0];
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushstring(L, getters[i].name);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

static int ledger_tostring(lua_State *L) {
  const kvp_ledger *l = check_ledger(L);
  lua_pushfstring(L, "kvplan.Ledger (tp %I, pp %I, %s)", (lua_Integer)l->d.tp,
                  (lua_Integer)l->d.pp, l->fit.why == KVP_FITS ? "fits" : "does not fit");
  return 1;
}

/* l:worker(stage [, gpu_bytes]) -> what one worker of the pipeline stage
 * holds and allocates (vLLM: after the minimum over workers); gpu_bytes: a
 * GPU of that stage with its own memory */
static int ledger_worker(lua_State *L) {
  kvp_ledger *l = check_ledger(L);
  int64_t s = kvl_toint(L, 2, "stage");
  int64_t g = lua_isnoneornil(L, 3) ? 0 : kvl_toint(L, 3, "gpu_bytes");
  if (s < 1 || s > l->nstage)
    return kvl_error(L, "field 'stage' must be 1..%d, got %I", (int)l->nstage, (lua_Integer)s);
  if (g < 0) return kvl_error(L, "field 'gpu_bytes' must be >= 0, got %I", (lua_Integer)g);
  kvp_vllm_stage w;
  kvp_err e = kvp_vllm_worker(l, (int32_t)(s - 1), g, &w);
  if (e != KVP_OK) return kvl_core_error(L, e, NULL, "worker");
  lua_createtable(L, 0, 14);
  kvl_set_int(L, "stage", s);
  kvl_set_int(L, "first_layer", w.first + 1);
  kvl_set_int(L, "layers", w.layers);
  kvl_set_int(L, "gpu_bytes", w.gpu_bytes);
  kvl_set_int(L, "weights", w.weights);
  kvl_set_int(L, "kv_budget", w.kv_budget);
  kvl_set_int(L, "block_bytes", w.block_bytes);
  kvl_set_int(L, "group_size", w.group_size);
  kvl_set_int(L, "own_blocks", w.own_blocks);
  kvl_set_int(L, "blocks", w.blocks);
  kvl_set_int(L, "tensors", w.tensors);
  kvl_set_int(L, "tensor_bytes", w.tensor_bytes);
  kvl_set_int(L, "pool_bytes", w.pool_bytes);
  kvl_set_int(L, "unused_bytes", w.unused_bytes);
  return 1;
}

/* l:vllm_groups() -> a list, one table per KV cache type of vLLM's hybrid
 * manager ({kind, window, layers, groups, block, page, padded, draft}); a
 * model of one KV type: one entry for all its layers */
static int ledger_vllm_groups(lua_State *L) {
  kvp_ledger *l = check_ledger(L);
  if (!l->hybrid) {
    lua_createtable(L, 1, 0);
    lua_createtable(L, 0, 6);
    lua_pushstring(L, "uniform");
    lua_setfield(L, -2, "kind");
    int64_t n = 0;
    for (int64_t i = 0; i < l->d.model.layers; i++)
      n += l->d.model.spec[l->d.model.layer_spec[i]].kind != KVP_NONE;
    kvl_set_int(L, "layers", n + l->d.spec.draft_layers);
    kvl_set_int(L, "groups", 1);
    kvl_set_int(L, "block", l->d.block);
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "padded");
    lua_rawseti(L, -2, 1);
    return 1;
  }
  lua_createtable(L, l->ntype, 0);
  for (int32_t t = 0; t < l->ntype; t++) {
    const kvp_kv_type *ty = &kvp_ledger_types(l)[t];
    lua_createtable(L, 0, 8);
    lua_pushstring(L, kvp_kind_name(ty->shape.kind));
    lua_setfield(L, -2, "kind");
    if (ty->shape.window) kvl_set_int(L, "window", ty->shape.window);
    kvl_set_int(L, "layers", ty->layers);
    kvl_set_int(L, "groups", ty->groups);
    kvl_set_int(L, "block", ty->block);
    kvl_set_int(L, "page", ty->page);
    lua_pushboolean(L, ty->padded);
    lua_setfield(L, -2, "padded");
    lua_pushboolean(L, ty->draft_only);
    lua_setfield(L, -2, "draft");
    lua_rawseti(L, -2, t + 1);
  }
  return 1;
}

/* core.min_tp(deployment, context, concurrency, max_tp) -> tp | 0, why, limit */
static int l_min_tp(lua_State *L) {
  kvp_deploy d;
  kvl_check_deploy(L, 1, &d);
  int64_t ctx = check_count_arg(L, 2, "context"), conc = check_count_arg(L, 3, "concurrency");
  int64_t max_tp = lua_isnoneornil(L, 4) ? 64 : check_count_arg(L, 4, "max_tp"), tp;
  kvp_verdict v;
  kvp_diag diag = {{0}};
  kvp_ledger *l = lua_newuserdatauv(L, kvp_ledger_size(&d), 0); /* the last tp tried */
  kvp_err e = kvp_verdict_min_tp(&d, ctx, conc, max_tp, l, &tp, &v, &diag);
  if (e != KVP_OK) return kvl_core_error(L, e, &diag, "min_tp");
  lua_pushinteger(L, (lua_Integer)tp);
  push_verdict(L, l, &v);
  return 3;
}

/* ---- formats and errors ---------------------------------------------------- */

/* core.format_bytes(format, n [, row]) -> bytes of n elements, rounded once */
static int l_format_bytes(lua_State *L) {
  kvp_format f = kvl_check_format(L, 1, "format");
  int64_t n = kvl_toint(L, 2, "elements"), row = lua_isnoneornil(L, 3) ? 0 : kvl_toint(L, 3, "row");
  int64_t bytes;
  if (n < 0) return kvl_error(L, "field 'elements' must be >= 0, got %I", (lua_Integer)n);
  kvp_err e = kvp_format_bytes(&f, n, row, &bytes);
  if (e != KVP_OK) return kvl_core_error(L, e, NULL, "format bytes");
  lua_pushinteger(L, (lua_Integer)bytes);
  return 1;
}

/* core.weight_bytes(format, params, shards, cols, model) -> bytes of a
 * model's (or a weight class's) params in the format with its tensor bits
 * over `shards` matrices and col bits over `cols` input columns
 * (kvp_format_weight_bytes); an overflow is an error naming the model */
static int l_weight_bytes(lua_State *L) {
  kvp_format f = kvl_check_format(L, 1, "weights");
  int64_t n = kvl_toint(L, 2, "params"), shards = kvl_toint(L, 3, "shards");
  int64_t cols = kvl_toint(L, 4, "cols"), bytes;
  const char *model = luaL_checkstring(L, 5);
  kvp_err e = kvp_format_weight_bytes(&f, n, shards, cols, &bytes);
  if (e != KVP_OK)
    return kvl_error(L, "model '%s': weight bytes of %I parameters, %I matrices and %I input "
                     "columns: %s", model, (lua_Integer)n, (lua_Integer)shards,
                     (lua_Integer)cols, kvp_strerror(e));
  lua_pushinteger(L, (lua_Integer)bytes);
  return 1;
}

/* core.format_bits(format) -> effective bits per element (a float) */
static int l_format_bits(lua_State *L) {
  kvp_format f = kvl_check_format(L, 1, "format");
  lua_pushnumber(L, (double)kvp_format_millibits(&f) / 1000.0);
  return 1;
}

/* core.raise(msg): error at the user's line (for the stdlib) */
static int l_raise(lua_State *L) {
  luaL_checkstring(L, 1);
  kvl_where(L);
  lua_pushvalue(L, 1); /* the whole string: "%s" would stop at a NUL */
  lua_concat(L, 2);
  return lua_error(L);
}

/* l:time(context, concurrency) -> the step times d:time gives, from the
 * GPU rates kv.deploy attached to the ledger */
static int ledger_time(lua_State *L) {
  kvp_ledger *l = check_ledger(L);
  int t = lua_getiuservalue(L, 1, 1);
  if (t == LUA_TSTRING) return kvl_error(L, "%s", lua_tostring(L, -1));
  if (t != LUA_TTABLE)
    return kvl_error(L, "this ledger has no GPU rates for step times: take it from kv.deploy "
                     "(d:ledger())");
  kvp_perf p = kvl_check_perf(L, -1);
  return kvl_time_of(L, l, &p, 2, 3);
}

/* core.params(f) -> the parameter names of Lua function f in order (self
 * included), and whether it also takes `...`; nil for a C function. What
 * util.methods reads to refuse arguments past a method's parameters (the
 * debug library is not needed, so it works under --sandbox). */
static int l_params(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  if (lua_iscfunction(L, 1)) return 0;
  lua_Debug ar;
  lua_pushvalue(L, 1);
  lua_getinfo(L, ">u", &ar);
  lua_createtable(L, ar.nparams, 0);
  for (int i = 1; i <= (int)ar.nparams; i++) {
    lua_pushvalue(L, 1);
    const char *name = lua_getlocal(L, NULL, i); /* pushes nothing */
    lua_pop(L, 1);
    lua_pushstring(L, name ? name : "?");
    lua_rawseti(L, -2, i);
  }
  lua_pushboolean(L, ar.isvararg);
  return 2;
}

/* core.where(): "file:line: " of the user's line, or "" */
static int l_where(lua_State *L) {
  kvl_where(L);
  return 1;
}

/* core.scan_literals(text, {lit, ...}) -> {[i] = true for each lits[i] text
 * holds} (kvp_scan_literals: one pass over text) */
static int l_scan_literals(lua_State *L) {
  size_t n;
  const char *text = luaL_checklstring(L, 1, &n);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_Integer count = luaL_len(L, 2);
  if (count < 0 || count > KVP_SCAN_MAX)
    return kvl_error(L, "scan_literals: %d literals (expected at most %d)", (int)count, KVP_SCAN_MAX);
  size_t c = (size_t)count;
  /* scratch the collector frees: pointers, lengths, flags */
  char *scratch = lua_newuserdatauv(L, c * (sizeof(const char *) + sizeof(size_t) + 1) + 1, 0);
  const char **lits = (const char **)(void *)scratch;
  size_t *lens = (size_t *)(void *)(scratch + c * sizeof(const char *));
  unsigned char *found = (unsigned char *)(scratch + c * (sizeof(const char *) + sizeof(size_t)));
  for (size_t i = 0; i < c; i++) {
    lua_rawgeti(L, 2, (lua_Integer)i + 1);
    if (lua_type(L, -1) != LUA_TSTRING)
      return kvl_error(L, "scan_literals: literal %d is a %s (expected a string)", (int)i + 1, luaL_typename(L, -1));
    lits[i] = lua_tolstring(L, -1, &lens[i]); /* kept alive by the table */
    lua_pop(L, 1);
  }
  kvp_diag d = {{0}};
  kvp_err e = kvp_scan_literals(text, n, lits, lens, c, found, &d);
  if (e != KVP_OK) return kvl_core_error(L, e, &d, "scan_literals");
  lua_createtable(L, 0, 8);
  for (size_t i = 0; i < c; i++) {
    if (!found[i]) continue;
    lua_pushboolean(L, 1);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* core.scan_lines(text) -> newlines, the 1-based position of the last (0: none) */
static int l_scan_lines(lua_State *L) {
  size_t n, count, last;
  const char *text = luaL_checklstring(L, 1, &n);
  kvp_scan_lines(text, n, &count, &last);
  lua_pushinteger(L, (lua_Integer)count);
  lua_pushinteger(L, last == n ? 0 : (lua_Integer)last + 1);
  return 2;
}

static const luaL_Reg funcs[] = {
  {"model", l_model}, {"ledger", l_ledger}, {"min_tp", l_min_tp},
  {"format_bytes", l_format_bytes}, {"format_bits", l_format_bits},
  {"weight_bytes", l_weight_bytes},
  {"deploy_keys", kvl_deploy_keys}, {"raise", l_raise}, {"where", l_where}, {"params", l_params},
  {"scan_literals", l_scan_literals}, {"scan_lines", l_scan_lines}, {NULL, NULL}
};

static const luaL_Reg model_meth[] = {
  {"token_bits", model_token_bits}, {"seq_bytes", model_seq_bytes},
  {"kinds", model_kinds}, {"layer", model_layer}, {NULL, NULL}
};

static const luaL_Reg ledger_meth[] = {
  {"max_concurrency", ledger_max_concurrency}, {"max_context", ledger_max_context},
  {"fit", ledger_fit}, {"starts", ledger_starts}, {"seq_bytes", ledger_seq_bytes},
  {"request_bytes", ledger_request_bytes}, {"worker", ledger_worker},
  {"vllm_groups", ledger_vllm_groups}, {"time", ledger_time}, {NULL, NULL}
};


int luaopen_kvplan_core(lua_State *L) {
  luaL_newmetatable(L, KVL_MODEL_MT);
  luaL_newlib(L, model_meth);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);

  luaL_newmetatable(L, LEDGER_MT);
  luaL_newlib(L, ledger_meth);
  lua_createtable(L, 0, (int)(sizeof getters / sizeof getters[0]));
  for (size_t i = 0; i < sizeof getters / sizeof getters[0]; i++) {
    lua_pushlightuserdata(L, (void *)(uintptr_t)i);
    lua_setfield(L, -2, getters[i].name);
  }
  lua_pushvalue(L, -2); /* core.ledger_methods below: deploy.lua checks their arguments */
  lua_setfield(L, LUA_REGISTRYINDEX, "kvplan.Ledger.methods");
  lua_pushcclosure(L, ledger_index, 2);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ledger_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);

  luaL_newlib(L, funcs);
  push_field_names(L);
  lua_setfield(L, -2, "ledger_fields");
  lua_getfield(L, LUA_REGISTRYINDEX, "kvplan.Ledger.methods");
  lua_setfield(L, -2, "ledger_methods");
  lua_pushliteral(L, KVPLAN_VERSION);
  lua_setfield(L, -2, "version");
  kvl_set_int(L, "max_layers", KVP_MAX_LAYERS);
  kvl_set_int(L, "max_pp", KVP_MAX_PP);
  return 1;
}
