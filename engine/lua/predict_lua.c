/*
 * predict_lua.c: the Lua binding of the activation model:
 * require "kvplan.predict_core" (used by stdlib/kvplan/engines.lua).
 * Binding layer: checks arguments, calls predict.c, turns kvp_err into a Lua
 * error. No accounting here.
 */
#include <stdint.h>
#include <string.h>

#include "kvplan_lua.h"

static const char *const keys[] = {
  "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab", "experts",
  "experts_active", "moe_intermediate", "shared_intermediate", "dense_layers",
  "kv_lora_rank", "rope_dim", "tokens", "seqs", "tp", "act_bytes", "last_stage", "eager",
  "moe_cache13", "flashinfer_sampler", "logits_only", "moe_chunk", "vision", NULL
};

static const char *const vision_keys[] = {
  "hidden", "intermediate", "gated", "proj_hidden", "out_hidden", "merge", "patch_values",
  "patches", "tokens", "items", "pixel_bytes", "calls", NULL
};

static int32_t flag(lua_State *L, int idx, const char *name) {
  int v = lua_getfield(L, idx, name) != LUA_TNIL && lua_toboolean(L, -1);
  lua_pop(L, 1);
  return (int32_t)v;
}

static void setint(lua_State *L, const char *k, int64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* The encoder run of field 'vision' (a table at idx): folded into a, its
 * parts pushed as a table. */
static void encoder_run(lua_State *L, int idx, int32_t act_bytes, kvp_activation *a) {
  kvl_check_keys(L, idx, vision_keys, "vision tower");
  kvp_vision v;
  kvp_encoder_run r;
  memset(&v, 0, sizeof v);
  memset(&r, 0, sizeof r);
  v.hidden = kvl_int_field(L, idx, "hidden", 0);
  v.intermediate = kvl_int_field(L, idx, "intermediate", 0);
  v.gated = flag(L, idx, "gated");
  v.proj_hidden = kvl_int_field(L, idx, "proj_hidden", 0);
  v.out_hidden = kvl_int_field(L, idx, "out_hidden", 0);
  v.merge = kvl_int_field(L, idx, "merge", 1);
  v.patch_values = kvl_int_field(L, idx, "patch_values", 0);
  v.patches = kvl_int_field(L, idx, "patches", 0);
  v.tokens = kvl_int_field(L, idx, "tokens", 0);
  r.items = kvl_int_field(L, idx, "items", 0);
  r.act_bytes = act_bytes;
  r.pixel_bytes = (int32_t)kvl_int_field(L, idx, "pixel_bytes", 4);
  r.calls = kvl_int_field(L, idx, "calls", 1);
  kvp_encoder e;
  kvp_diag diag = {{0}};
  kvp_err err = kvp_predict_encoder(&v, &r, &e, &diag);
  if (err == KVP_OK) err = kvp_predict_add_encoder(a, &e, &diag);
  if (err != KVP_OK) kvl_core_error(L, err, &diag, "encoder model");
  lua_createtable(L, 0, 9);
  setint(L, "block_lo", e.block[0]);
  setint(L, "block_hi", e.block[1]);
  setint(L, "merger", e.merger);
  setint(L, "inputs", e.inputs);
  setint(L, "cast", e.cast);
  setint(L, "outputs", e.outputs);
  setint(L, "peak_lo", e.peak[0]);
  setint(L, "peak_hi", e.peak[1]);
  setint(L, "kept", e.kept);
}

/* predict_core.activation{shape and profile fields, vision = {...}} ->
 * {bytes, lo, hi, largest, terms = {name = {lo, hi, bytes}}, encoder_kept,
 * encoder = {parts} when a vision tower is given} */
/* The shape and profile fields of the table at idx (tokens, seqs, tp as
 * given, 0 / 1 when absent; a vision tower is read by encoder_run). */
static void read_shape(lua_State *L, int idx, kvp_shape *s, kvp_profile *p) {
  kvl_check_keys(L, idx, keys, "activation model");
  memset(s, 0, sizeof *s);
  memset(p, 0, sizeof *p);
  s->hidden = kvl_int_field(L, idx, "hidden", 0);
  s->heads = kvl_int_field(L, idx, "heads", 0);
  s->kv_heads = kvl_int_field(L, idx, "kv_heads", s->heads);
  s->head_dim = kvl_int_field(L, idx, "head_dim", 0);
  s->intermediate = kvl_int_field(L, idx, "intermediate", 0);
  s->vocab = kvl_int_field(L, idx, "vocab", 0);
  s->experts = kvl_int_field(L, idx, "experts", 0);
  s->experts_active = kvl_int_field(L, idx, "experts_active", 0);
  s->moe_intermediate = kvl_int_field(L, idx, "moe_intermediate", 0);
  s->shared_intermediate = kvl_int_field(L, idx, "shared_intermediate", 0);
  s->dense_layers = kvl_int_field(L, idx, "dense_layers", 0);
  s->mla_latent = kvl_int_field(L, idx, "kv_lora_rank", 0);
  s->mla_rope = kvl_int_field(L, idx, "rope_dim", 0);
  p->tokens = kvl_int_field(L, idx, "tokens", 0);
  p->seqs = kvl_int_field(L, idx, "seqs", 0);
  p->tp = kvl_int_field(L, idx, "tp", 1);
  p->act_bytes = (int32_t)kvl_int_field(L, idx, "act_bytes", 2);
  p->moe_chunk = kvl_int_field(L, idx, "moe_chunk", 0);
  p->last_stage = flag(L, idx, "last_stage");
  p->eager = flag(L, idx, "eager");
  p->moe_cache13 = flag(L, idx, "moe_cache13");
  p->flashinfer_sampler = flag(L, idx, "flashinfer_sampler");
  p->logits_only = flag(L, idx, "logits_only");
}

static int l_activation(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  kvp_shape s;
  kvp_profile p;
  read_shape(L, 1, &s, &p);
  kvp_activation a;
  kvp_diag diag = {{0}};
  kvp_err e = kvp_predict_activation(&s, &p, &a, &diag);
  if (e != KVP_OK) return kvl_core_error(L, e, &diag, "activation model");
  int has_vision = lua_getfield(L, 1, "vision") != LUA_TNIL;
  if (has_vision) {
    luaL_argexpected(L, lua_istable(L, -1), 1, "field 'vision' a table");
    encoder_run(L, lua_gettop(L), p.act_bytes, &a); /* pushes the parts */
  }
  lua_createtable(L, 0, 7);
  if (has_vision) {
    lua_insert(L, -2);
    lua_setfield(L, -2, "encoder");
  }
  setint(L, "encoder_kept", a.encoder_kept);
  lua_pushinteger(L, (lua_Integer)a.bytes);
  lua_setfield(L, -2, "bytes");
  lua_pushinteger(L, (lua_Integer)a.lo);
  lua_setfield(L, -2, "lo");
  lua_pushinteger(L, (lua_Integer)a.hi);
  lua_setfield(L, -2, "hi");
  lua_pushstring(L, kvp_predict_term_name(a.largest));
  lua_setfield(L, -2, "largest");
  lua_createtable(L, 0, KVP_PREDICT_NTERMS);
  for (int t = 0; t < KVP_PREDICT_NTERMS; t++) {
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)a.term[t][0]);
    lua_setfield(L, -2, "lo");
    lua_pushinteger(L, (lua_Integer)a.term[t][1]);
    lua_setfield(L, -2, "hi");
    lua_pushinteger(L, (lua_Integer)a.bytes_of[t]);
    lua_setfield(L, -2, "bytes");
    lua_setfield(L, -2, kvp_predict_term_name(t));
  }
  lua_setfield(L, -2, "terms");
  return 1;
}

static double range_field(lua_State *L, int idx, const char *name, const char *what) {
  if (lua_getfield(L, idx, name) != LUA_TNUMBER)
    kvl_error(L, "non_torch.%s.%s must be a number of bytes, %s", what, name, kvl_got(L, -1));
  double v = lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

void kvl_check_non_torch(lua_State *L, int idx, kvp_non_torch *nt) {
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  struct { const char *name; kvp_range *r; } rs[] = {
    {"tp1", &nt->tp1}, {"tpn", &nt->tpn}, {"context", &nt->context}};
  for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) {
    if (lua_getfield(L, idx, rs[i].name) != LUA_TTABLE)
      kvl_error(L, "non_torch.%s must be a table {lo =, point =, hi =}, %s", rs[i].name,
                kvl_got(L, -1));
    rs[i].r->lo = range_field(L, -1, "lo", rs[i].name);
    rs[i].r->point = range_field(L, -1, "point", rs[i].name);
    rs[i].r->hi = range_field(L, -1, "hi", rs[i].name);
    lua_pop(L, 1);
  }
  kvp_diag diag = {{0}};
  kvp_err e = kvp_non_torch_check(nt, &diag);
  if (e != KVP_OK) kvl_core_error(L, e, &diag, "non_torch");
}

static const char *const rule_keys[] = {
  "activation", "overhead", "seqs_cap", "seqs_given", "tokens_given", "v1", "offline",
  "gpu_a100", "nccl_counted", "context_counted", "chunked_tokens", "big_seqs", "shape",
  "fractions", "trtllm", "default_tokens", "sglang_memory", "mxfp4", "vision", NULL
};

void kvl_check_predict(lua_State *L, int idx, kvp_predict_rule *r) {
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  kvl_check_keys(L, idx, rule_keys, "predict rule");
  memset(r, 0, sizeof *r);
  r->activation = flag(L, idx, "activation");
  r->seqs_cap = flag(L, idx, "seqs_cap");
  r->seqs_given = flag(L, idx, "seqs_given");
  r->tokens_given = flag(L, idx, "tokens_given");
  r->v1 = flag(L, idx, "v1");
  r->offline = flag(L, idx, "offline");
  r->gpu_a100 = flag(L, idx, "gpu_a100");
  r->nccl_counted = flag(L, idx, "nccl_counted");
  r->context_counted = flag(L, idx, "context_counted");
  r->chunked_tokens = kvl_int_field(L, idx, "chunked_tokens", 0);
  r->big_seqs = kvl_int_field(L, idx, "big_seqs", 0);
  r->trtllm = flag(L, idx, "trtllm");
  r->sglang_memory = flag(L, idx, "sglang_memory");
  if (lua_getfield(L, idx, "vision") == LUA_TTABLE) {
    static const char *const vkeys[] = {"hidden", "intermediate", "gated", "proj_hidden",
                                        "out_hidden", "merge", "patch_values", "patches",
                                        "tokens", "calls", "pixel_bytes", "limit", NULL};
    int t = lua_gettop(L);
    kvl_check_keys(L, t, vkeys, "predict rule vision");
    kvp_vision *v = &r->tower;
    v->hidden = kvl_int_field(L, t, "hidden", 0);
    v->intermediate = kvl_int_field(L, t, "intermediate", 0);
    v->gated = flag(L, t, "gated");
    v->proj_hidden = kvl_int_field(L, t, "proj_hidden", 0);
    v->out_hidden = kvl_int_field(L, t, "out_hidden", 0);
    v->merge = kvl_int_field(L, t, "merge", 1);
    v->patch_values = kvl_int_field(L, t, "patch_values", 0);
    v->patches = kvl_int_field(L, t, "patches", 0);
    v->tokens = kvl_int_field(L, t, "tokens", 0);
    r->vision_calls = kvl_int_field(L, t, "calls", 1);
    r->pixel_bytes = (int32_t)kvl_int_field(L, t, "pixel_bytes", 4);
    r->vision_limit = kvl_int_field(L, t, "limit", 0);
    r->vision = 1;
  }
  lua_pop(L, 1);
  if (lua_getfield(L, idx, "mxfp4") == LUA_TTABLE) {
    static const char *const mx_keys[] = {"experts", "hidden", "inter", "layers", "ckpt_bytes",
                                          "align_inter", "align_hidden", "tile", "scale_rows",
                                          "fp32_bias", "keeps_scales", NULL};
    int t = lua_gettop(L);
    kvl_check_keys(L, t, mx_keys, "predict rule mxfp4");
    kvp_mxfp4 *m = &r->mx;
    m->experts = kvl_int_field(L, t, "experts", 0);
    m->hidden = kvl_int_field(L, t, "hidden", 0);
    m->inter = kvl_int_field(L, t, "inter", 0);
    m->layers = kvl_int_field(L, t, "layers", 0);
    m->ckpt_bytes = kvl_int_field(L, t, "ckpt_bytes", 0);
    m->align_inter = kvl_int_field(L, t, "align_inter", 1);
    m->align_hidden = kvl_int_field(L, t, "align_hidden", 1);
    m->tile = kvl_int_field(L, t, "tile", 0);
    m->scale_rows = kvl_int_field(L, t, "scale_rows", 0);
    m->fp32_bias = flag(L, t, "fp32_bias");
    m->keeps_scales = flag(L, t, "keeps_scales");
    r->mxfp4 = 1;
  }
  lua_pop(L, 1);
  r->default_tokens = kvl_int_field(L, idx, "default_tokens", 0);
  if (lua_getfield(L, idx, "overhead") != LUA_TNIL) {
    const char *e = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    if (strcmp(e, "vllm") == 0) r->overhead = KVP_NT_VLLM;
    else if (strcmp(e, "sglang") == 0) r->overhead = KVP_NT_SGLANG;
    else kvl_error(L, "predict rule: field 'overhead' must be 'vllm' or 'sglang', %s", kvl_got(L, -1));
  }
  lua_pop(L, 1);
  if (lua_getfield(L, idx, "fractions") == LUA_TTABLE) {
    /* {{smallest tp, fraction}, ...} */
    lua_Integer n = luaL_len(L, -1);
    if (n < 1 || n > KVP_MAX_FRACTIONS)
      kvl_error(L, "predict rule: 'fractions' must hold 1 to %d {tp, fraction} rows, got %I",
                KVP_MAX_FRACTIONS, n);
    for (lua_Integer i = 1; i <= n; i++) {
      if (lua_geti(L, -1, i) != LUA_TTABLE)
        kvl_error(L, "predict rule: fractions[%I] must be {tp, fraction}, %s", i, kvl_got(L, -1));
      lua_geti(L, -1, 1);
      int64_t tp = kvl_toint(L, -1, "fractions tp");
      lua_geti(L, -2, 2);
      double f = kvl_tonum(L, -1, "fraction");
      if (tp < 1 || !(f > 0 && f <= 1))
        kvl_error(L, "predict rule: fractions[%I] must be {tp >= 1, fraction in (0, 1]}, got "
                  "{%I, %f}", i, (lua_Integer)tp, f);
      r->fraction_tp[i - 1] = tp;
      r->fraction[i - 1] = f;
      lua_pop(L, 3);
    }
    r->nfraction = (int32_t)n;
  }
  lua_pop(L, 1);
  if (lua_getfield(L, idx, "shape") == LUA_TTABLE) {
    read_shape(L, lua_gettop(L), &r->shape, &r->profile);
  } else if (r->activation) {
    kvl_error(L, "predict rule: a predicted activation needs the model's 'shape'");
  }
  lua_pop(L, 1);
}

/* predict_core.non_torch(constants, engine, tp, nccl_counted, context_counted)
 * -> point, lo, hi: the non-torch memory of one GPU (engine "vllm" or
 * "sglang"). */
static int l_non_torch(lua_State *L) {
  kvp_non_torch nt;
  kvl_check_non_torch(L, 1, &nt);
  const char *e = luaL_checkstring(L, 2);
  int engine = strcmp(e, "vllm") == 0 ? KVP_NT_VLLM : strcmp(e, "sglang") == 0 ? KVP_NT_SGLANG : -1;
  if (engine < 0) return kvl_error(L, "non-torch memory: engine must be 'vllm' or 'sglang', got '%s'", e);
  int64_t tp = kvl_toint(L, 3, "tp");
  int64_t out[3];
  kvp_diag diag = {{0}};
  kvp_err err = kvp_predict_non_torch(&nt, engine, tp, lua_toboolean(L, 4), lua_toboolean(L, 5), out,
                                      &diag);
  if (err != KVP_OK) return kvl_core_error(L, err, &diag, "non-torch memory");
  for (int i = 0; i < 3; i++) lua_pushinteger(L, (lua_Integer)out[i]);
  return 3;
}

/* predict_core.sglang_memory(gpu_bytes, tp, pp [, chunked_prefill_size [,
 * cuda_graph_max_bs]]) -> chunk, bs, reserved MiB, mem_fraction_static */
static int l_sglang_memory(lua_State *L) {
  /* the GPU's bytes may come as a float (a log's GiB figure): divided as given */
  double gpu = kvl_tonum(L, 1, "gpu_bytes");
  int64_t tp = kvl_toint(L, 2, "tp"), pp = kvl_toint(L, 3, "pp");
  int has_chunk = !lua_isnoneornil(L, 4), has_bs = !lua_isnoneornil(L, 5);
  int64_t cg = has_chunk ? kvl_toint(L, 4, "chunked_prefill_size") : 0;
  int64_t bg = has_bs ? kvl_toint(L, 5, "cuda_graph_max_bs") : 0;
  int64_t c, b;
  double reserved, frac;
  kvp_sglang_memory_defaults(gpu, tp, pp, has_chunk, cg, has_bs, bg, &c, &b, &reserved, &frac);
  lua_pushinteger(L, (lua_Integer)c);
  lua_pushinteger(L, (lua_Integer)b);
  lua_pushnumber(L, reserved);
  lua_pushnumber(L, frac);
  return 4;
}

/* vllm_defaults(v1, chunked_tokens, big_seqs, offline, a100, gpu_bytes,
 * max_model_len, tokens, seqs) -> max_num_batched_tokens, max_num_seqs:
 * kvp_predict_vllm_defaults (0 for a length or count not given) */
static int l_vllm_defaults(lua_State *L) {
  kvp_predict_rule r;
  memset(&r, 0, sizeof r);
  r.v1 = lua_toboolean(L, 1);
  r.chunked_tokens = kvl_toint(L, 2, "chunked_tokens");
  r.big_seqs = kvl_toint(L, 3, "big_seqs");
  r.offline = lua_toboolean(L, 4);
  r.gpu_a100 = lua_toboolean(L, 5);
  /* the GPU's bytes may come as a float (a log's GiB figure); compared with
   * a whole number of bytes, its floor decides the same */
  double gpu = kvl_tonum(L, 6, "gpu_bytes");
  int64_t gb = gpu >= 9.2e18 ? INT64_MAX : gpu > 0 ? (int64_t)gpu : 0;
  int64_t t, q;
  kvp_predict_vllm_defaults(&r, gb, kvl_toint(L, 7, "max_model_len"),
                            kvl_toint(L, 8, "max_num_batched_tokens"),
                            kvl_toint(L, 9, "max_num_seqs"), &t, &q);
  lua_pushinteger(L, (lua_Integer)t);
  lua_pushinteger(L, (lua_Integer)q);
  return 2;
}

static const luaL_Reg funcs[] = {{"activation", l_activation}, {"non_torch", l_non_torch},
                                 {"sglang_memory", l_sglang_memory},
                                 {"vllm_defaults", l_vllm_defaults}, {NULL, NULL}};

int luaopen_kvplan_predict_core(lua_State *L) {
  luaL_newlib(L, funcs);
  return 1;
}
