/*
 * predict_lua.c: the Lua binding of an engine's reserves:
 * require "kvplan.predict_core" (used by stdlib/kvplan/deploy.lua), and the
 * engine rule and non-torch constants a sweep's deployments carry.
 * Binding layer: checks arguments, calls predict.c, turns kvp_err into a Lua
 * error. No accounting here.
 */
#include <stdint.h>
#include <string.h>

#include "kvplan_lua.h"

static const char *const keys[] = {
  "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab", "experts",
  "experts_active", "moe_intermediate", "shared_intermediate", "dense_layers",
  "kv_lora_rank", "rope_dim", "act_bytes", "eager", "moe_cache13", "flashinfer_sampler",
  "logits_only", "moe_chunk", "sampler_hidden", "blas_workspace", "dequant_mlp",
  "dequant_attn", NULL
};

static int32_t flag(lua_State *L, int idx, const char *name) {
  int v = lua_getfield(L, idx, name) != LUA_TNIL && lua_toboolean(L, -1);
  lua_pop(L, 1);
  return (int32_t)v;
}

/* The MXFP4 kernel layout's fields of the table at t (an engine rule's
 * mxfp4 or a GPU's facts) into m. */
static void mx_layout_fields(lua_State *L, int t, kvp_mxfp4 *m) {
  m->align_inter = kvl_int_field(L, t, "align_inter", 1);
  m->align_hidden = kvl_int_field(L, t, "align_hidden", 1);
  m->tile = kvl_int_field(L, t, "tile", 0);
  m->scale_rows = kvl_int_field(L, t, "scale_rows", 0);
  m->fp32_bias = flag(L, t, "fp32_bias");
  m->keeps_scales = flag(L, t, "keeps_scales");
}

/* The MXFP4 kernel layout at field `name` of the GPU facts at idx into m. */
static void read_mx_layout(lua_State *L, int idx, const char *name, kvp_mxfp4 *m) {
  static const char *const mx_keys[] = {"align_inter", "align_hidden", "tile", "scale_rows",
                                        "fp32_bias", "keeps_scales", NULL};
  if (lua_getfield(L, idx, name) != LUA_TTABLE)
    kvl_error(L, "GPU facts: field '%s' must be the MXFP4 kernel's layout, %s", name,
              kvl_got(L, -1));
  int t = lua_gettop(L);
  kvl_check_keys(L, t, mx_keys, "GPU facts mx");
  mx_layout_fields(L, t, m);
  lua_pop(L, 1);
}

void kvl_check_gpu_facts(lua_State *L, int idx, kvp_gpu_facts *g) {
  static const char *const keys_[] = {"a100", "p2p", "nvls", "mx", "mx_bundled",
                                      "blas_workspace", NULL};
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  kvl_check_keys(L, idx, keys_, "GPU facts");
  memset(g, 0, sizeof *g);
  g->a100 = flag(L, idx, "a100");
  g->p2p = flag(L, idx, "p2p");
  g->nvls = flag(L, idx, "nvls");
  read_mx_layout(L, idx, "mx", &g->mx);
  read_mx_layout(L, idx, "mx_bundled", &g->mx_bundled);
  g->blas_workspace = kvl_int_field(L, idx, "blas_workspace", 0);
}

/* The shape and profile settings of the table at idx (the profile's
 * tokens, sequences, tp and stage are the deployment's, set per call). */
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
  p->act_bytes = (int32_t)kvl_int_field(L, idx, "act_bytes", 2);
  p->moe_chunk = kvl_int_field(L, idx, "moe_chunk", 0);
  p->eager = flag(L, idx, "eager");
  p->moe_cache13 = flag(L, idx, "moe_cache13");
  p->flashinfer_sampler = flag(L, idx, "flashinfer_sampler");
  p->logits_only = flag(L, idx, "logits_only");
  p->sampler_hidden = (int32_t)kvl_int_field(L, idx, "sampler_hidden", KVP_HIDDEN_ALL);
  p->blas_workspace = kvl_int_field(L, idx, "blas_workspace", 0);
  p->dequant_mlp = flag(L, idx, "dequant_mlp");
  p->dequant_attn = flag(L, idx, "dequant_attn");
}

static double number_field(lua_State *L, int idx, const char *name, const char *what) {
  if (lua_getfield(L, idx, name) != LUA_TNUMBER) {
    if (what != NULL)
      kvl_error(L, "non_torch.%s.%s must be a number, %s", what, name, kvl_got(L, -1));
    kvl_error(L, "non_torch.%s must be a number of bytes, %s", name, kvl_got(L, -1));
  }
  double v = lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

void kvl_check_non_torch(lua_State *L, int idx, kvp_non_torch *nt) {
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  struct { const char *name; kvp_range *r; } rs[] = {
    {"base", &nt->base}, {"context", &nt->context}, {"nccl_channels", &nt->nccl_channels}};
  for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) {
    if (lua_getfield(L, idx, rs[i].name) != LUA_TTABLE)
      kvl_error(L, "non_torch.%s must be a table {lo =, point =, hi =}, %s", rs[i].name,
                kvl_got(L, -1));
    rs[i].r->lo = number_field(L, -1, "lo", rs[i].name);
    rs[i].r->point = number_field(L, -1, "point", rs[i].name);
    rs[i].r->hi = number_field(L, -1, "hi", rs[i].name);
    lua_pop(L, 1);
  }
  nt->nccl_connection = number_field(L, idx, "nccl_connection", NULL);
  nt->custom_ar = number_field(L, idx, "custom_ar", NULL);
  nt->nvls_head = number_field(L, idx, "nvls_head", NULL);
  kvp_diag diag = {{0}};
  kvp_err e = kvp_non_torch_check(nt, &diag);
  if (e != KVP_OK) kvl_core_error(L, e, &diag, "non_torch");
}

static const char *const rule_keys[] = {
  "activation", "profiled", "overhead", "seqs_cap", "seqs_given", "tokens_given", "v1", "offline",
  "gpu_a100", "gpu_p2p", "gpu_nvls", "nccl_counted", "nccl_runtime", "context_counted",
  "chunked_tokens", "big_seqs", "shape", "fractions", "trtllm", "default_tokens", "sglang_memory", "sglang_vlm", "mxfp4", "vision", NULL
};

void kvl_check_engine_rule(lua_State *L, int idx, kvp_engine_rule *r) {
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  kvl_check_keys(L, idx, rule_keys, "engine rule");
  memset(r, 0, sizeof *r);
  r->activation = flag(L, idx, "activation");
  r->profiled = flag(L, idx, "profiled");
  r->seqs_cap = flag(L, idx, "seqs_cap");
  r->seqs_given = flag(L, idx, "seqs_given");
  r->tokens_given = flag(L, idx, "tokens_given");
  r->v1 = flag(L, idx, "v1");
  r->offline = flag(L, idx, "offline");
  r->gpu_a100 = flag(L, idx, "gpu_a100");
  r->nccl_counted = flag(L, idx, "nccl_counted");
  r->context_counted = flag(L, idx, "context_counted");
  r->nccl_runtime = flag(L, idx, "nccl_runtime");
  r->gpu_nvls = flag(L, idx, "gpu_nvls");
  r->gpu_p2p = flag(L, idx, "gpu_p2p");
  r->chunked_tokens = kvl_int_field(L, idx, "chunked_tokens", 0);
  r->big_seqs = kvl_int_field(L, idx, "big_seqs", 0);
  r->trtllm = flag(L, idx, "trtllm");
  r->sglang_memory = flag(L, idx, "sglang_memory");
  r->sglang_vlm = kvl_num_field(L, idx, "sglang_vlm", 0);
  if (!(r->sglang_vlm >= 0 && r->sglang_vlm <= 1.05))
    kvl_error(L, "engine rule field 'sglang_vlm' must be in [0, 1.05], got %f", kvp_shown(r->sglang_vlm));
  if (lua_getfield(L, idx, "vision") == LUA_TTABLE) {
    static const char *const vkeys[] = {"hidden", "intermediate", "gated", "proj_hidden",
                                        "out_hidden", "patch", "merge", "max_pixels",
                                        "image_size", "class_token", "in_channels",
                                        "temporal_patch", "video", "pixel_bytes", "limit", NULL};
    int t = lua_gettop(L);
    kvl_check_keys(L, t, vkeys, "engine rule vision");
    kvp_tower *v = &r->tower;
    v->hidden = kvl_int_field(L, t, "hidden", 0);
    v->intermediate = kvl_int_field(L, t, "intermediate", 0);
    v->gated = flag(L, t, "gated");
    v->proj_hidden = kvl_int_field(L, t, "proj_hidden", 0);
    v->out_hidden = kvl_int_field(L, t, "out_hidden", 0);
    v->patch = kvl_int_field(L, t, "patch", 0);
    v->merge = kvl_int_field(L, t, "merge", 1);
    v->max_pixels = kvl_int_field(L, t, "max_pixels", 0);
    v->image_size = kvl_int_field(L, t, "image_size", 0);
    v->class_token = flag(L, t, "class_token");
    v->in_channels = kvl_int_field(L, t, "in_channels", 3);
    v->temporal_patch = kvl_int_field(L, t, "temporal_patch", 1);
    v->video = flag(L, t, "video");
    r->pixel_bytes = (int32_t)kvl_int_field(L, t, "pixel_bytes", 4);
    r->vision_limit = kvl_int_field(L, t, "limit", 0);
    r->vision = 1;
  }
  lua_pop(L, 1);
  if (lua_getfield(L, idx, "mxfp4") == LUA_TTABLE) {
    static const char *const mx_keys[] = {"experts", "hidden", "inter", "layers", "ckpt_bytes",
                                          "align_inter", "align_hidden", "tile", "scale_rows",
                                          "fp32_bias", "keeps_scales", "by_gpu", "bundled",
                                          NULL};
    int t = lua_gettop(L);
    kvl_check_keys(L, t, mx_keys, "engine rule mxfp4");
    kvp_mxfp4 *m = &r->mx;
    m->experts = kvl_int_field(L, t, "experts", 0);
    m->hidden = kvl_int_field(L, t, "hidden", 0);
    m->inter = kvl_int_field(L, t, "inter", 0);
    m->layers = kvl_int_field(L, t, "layers", 0);
    m->ckpt_bytes = kvl_int_field(L, t, "ckpt_bytes", 0);
    mx_layout_fields(L, t, m);
    r->mx_by_gpu = flag(L, t, "by_gpu");
    r->mx_bundled = flag(L, t, "bundled");
    r->mxfp4 = 1;
  }
  lua_pop(L, 1);
  r->default_tokens = kvl_int_field(L, idx, "default_tokens", 0);
  if (lua_getfield(L, idx, "overhead") != LUA_TNIL) {
    const char *e = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    if (strcmp(e, "vllm") == 0) r->overhead = KVP_NT_VLLM;
    else if (strcmp(e, "sglang") == 0) r->overhead = KVP_NT_SGLANG;
    else kvl_error(L, "engine rule: field 'overhead' must be 'vllm' or 'sglang', %s", kvl_got(L, -1));
  }
  lua_pop(L, 1);
  if (lua_getfield(L, idx, "fractions") == LUA_TTABLE) {
    /* {{smallest tp, fraction}, ...} */
    lua_Integer n = luaL_len(L, -1);
    if (n < 1 || n > KVP_MAX_FRACTIONS)
      kvl_error(L, "engine rule: 'fractions' must hold 1 to %d {tp, fraction} rows, got %I",
                KVP_MAX_FRACTIONS, n);
    for (lua_Integer i = 1; i <= n; i++) {
      if (lua_geti(L, -1, i) != LUA_TTABLE)
        kvl_error(L, "engine rule: fractions[%I] must be {tp, fraction}, %s", i, kvl_got(L, -1));
      lua_geti(L, -1, 1);
      int64_t tp = kvl_toint(L, -1, "fractions tp");
      lua_geti(L, -2, 2);
      double f = kvl_tonum(L, -1, "fraction");
      if (tp < 1 || !(f > 0 && f <= 1))
        kvl_error(L, "engine rule: fractions[%I] must be {tp >= 1, fraction in (0, 1]}, got "
                  "{%I, %f}", i, (lua_Integer)tp, kvp_shown(f));
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
    kvl_error(L, "engine rule: a predicted activation needs the model's 'shape'");
  }
  lua_pop(L, 1);
}

/* The activation of the profile: {bytes, lo, hi, largest, terms = {name =
 * {lo, hi, bytes}}, encoder_kept, forward, encoder = {parts, items, budget,
 * decoder_tokens} when a vision tower ran}. */
static void push_activation(lua_State *L, const kvp_reserves *o) {
  const kvp_activation *a = &o->act;
  lua_createtable(L, 0, 9);
  kvl_set_int(L, "bytes", a->bytes);
  kvl_set_int(L, "lo", a->lo);
  kvl_set_int(L, "hi", a->hi);
  kvl_set_int(L, "encoder_kept", a->encoder_kept);
  kvl_set_int(L, "forward", o->forward_bytes);
  lua_pushstring(L, kvp_predict_term_name(a->largest));
  lua_setfield(L, -2, "largest");
  lua_createtable(L, 0, KVP_PREDICT_NTERMS);
  for (int t = 0; t < KVP_PREDICT_NTERMS; t++) {
    lua_createtable(L, 0, 3);
    kvl_set_int(L, "lo", a->term[t][0]);
    kvl_set_int(L, "hi", a->term[t][1]);
    kvl_set_int(L, "bytes", a->bytes_of[t]);
    lua_setfield(L, -2, kvp_predict_term_name(t));
  }
  lua_setfield(L, -2, "terms");
  if (o->vision) {
    const kvp_encoder *e = &o->enc;
    lua_createtable(L, 0, 14);
    kvl_set_int(L, "block_lo", e->block[0]);
    kvl_set_int(L, "block_hi", e->block[1]);
    kvl_set_int(L, "merger", e->merger);
    kvl_set_int(L, "inputs", e->inputs);
    kvl_set_int(L, "cast", e->cast);
    kvl_set_int(L, "outputs", e->outputs);
    kvl_set_int(L, "peak_lo", e->peak[0]);
    kvl_set_int(L, "peak_hi", e->peak[1]);
    kvl_set_int(L, "kept", e->kept);
    kvl_set_int(L, "items", o->enc_items);
    kvl_set_int(L, "item_patches", o->item_patches);
    kvl_set_int(L, "item_tokens", o->item_tokens);
    kvl_set_int(L, "decoder_tokens", o->dec_tokens);
    if (o->enc_budget > 0) kvl_set_int(L, "budget", o->enc_budget);
    lua_setfield(L, -2, "encoder");
  }
}

static const char *const number_keys[] = {
  "gpu_bytes", "tp", "pp", "max_model_len", "max_context", "max_num_batched_tokens",
  "max_num_seqs", "weight_bytes", "utilization", NULL
};

/* predict_core.reserves(rule, numbers [, non_torch]): the engine rule's
 * predictions for one deployment (kvp_predict_deploy). numbers: gpu_bytes,
 * tp, pp, max_model_len, max_context, max_num_batched_tokens and
 * max_num_seqs (when given), weight_bytes, utilization. Returns {tokens,
 * seqs, max_num_seqs, activation, stages, overhead = {point, lo, hi},
 * weight_bytes, repacked, utilization, sglang = {chunked_prefill_size,
 * cuda_graph_max_bs, reserved_mib, cuda_graph_bs}}, each when the rule
 * predicts it. */
static int l_reserves(lua_State *L) {
  luaL_checktype(L, 2, LUA_TTABLE);
  kvl_check_keys(L, 2, number_keys, "reserves numbers");
  kvp_deploy d;
  memset(&d, 0, sizeof d);
  kvl_check_engine_rule(L, 1, &d.engine);
  /* the GPU's bytes may come as a float (a log's GiB figure): its floor */
  double gpu = 0;
  if (lua_getfield(L, 2, "gpu_bytes") != LUA_TNIL) gpu = kvl_tonum(L, -1, "gpu_bytes");
  lua_pop(L, 1);
  d.gpu_bytes = gpu >= 9.2e18 ? INT64_MAX : gpu > 0 ? (int64_t)gpu : 0;
  d.tp = kvl_int_field(L, 2, "tp", 1);
  d.pp = kvl_int_field(L, 2, "pp", 1);
  d.max_model_len = kvl_int_field(L, 2, "max_model_len", 0);
  d.model.max_context = kvl_int_field(L, 2, "max_context", 0);
  d.max_num_batched_tokens = kvl_int_field(L, 2, "max_num_batched_tokens", 0);
  d.vllm.max_num_seqs = kvl_int_field(L, 2, "max_num_seqs", 0);
  d.weight_bytes = kvl_int_field(L, 2, "weight_bytes", 0);
  if (lua_getfield(L, 2, "utilization") != LUA_TNIL)
    d.utilization = kvl_tonum(L, -1, "utilization");
  lua_pop(L, 1);
  kvp_non_torch nt, *ntp = NULL;
  if (!lua_isnoneornil(L, 3)) {
    kvl_check_non_torch(L, 3, &nt);
    ntp = &nt;
  }
  if (d.tp < 1 || d.pp < 1)
    return kvl_error(L, "reserves: tp and pp must be >= 1, got %I and %I", (lua_Integer)d.tp,
                     (lua_Integer)d.pp);
  kvp_reserves o;
  kvp_diag diag = {{0}};
  kvp_err err = kvp_predict_deploy(&d, ntp, &o, &diag);
  if (err != KVP_OK) return kvl_core_error(L, err, &diag, "engine rule");
  const kvp_engine_rule *r = &d.engine;
  lua_createtable(L, 0, 12);
  if (r->activation || r->seqs_cap || r->profiled) {
    kvl_set_int(L, "tokens", o.tokens);
    kvl_set_int(L, "seqs", o.seqs);
  }
  if (r->seqs_cap) kvl_set_int(L, "max_num_seqs", d.vllm.max_num_seqs);
  if (o.activation) {
    push_activation(L, &o);
    lua_setfield(L, -2, "activation");
    if (d.pp > 1) {
      lua_createtable(L, (int)d.pp, 0);
      for (int64_t s = 0; s < d.pp; s++) {
        lua_pushinteger(L, (lua_Integer)d.vllm.stage_activation_bytes[s]);
        lua_rawseti(L, -2, (lua_Integer)s + 1);
      }
      lua_setfield(L, -2, "stages");
    }
  }
  if (o.overhead) {
    lua_createtable(L, 0, 5);
    kvl_set_int(L, "point", o.non_torch.total[0]);
    kvl_set_int(L, "lo", o.non_torch.total[1]);
    kvl_set_int(L, "hi", o.non_torch.total[2]);
    /* the parts the sources size, their points */
    kvl_set_int(L, "nccl", o.non_torch.nccl[0]);
    kvl_set_int(L, "custom_ar", o.non_torch.custom_ar[0]);
    lua_setfield(L, -2, "overhead");
  }
  if (r->mxfp4) {
    kvl_set_int(L, "weight_bytes", d.weight_bytes);
    lua_pushboolean(L, o.repacked);
    lua_setfield(L, -2, "repacked");
  }
  if (r->nfraction > 0 || r->sglang_memory) {
    kvl_set_num(L, "utilization", d.utilization);
  }
  if (o.sglang) {
    lua_createtable(L, 0, 4);
    kvl_set_int(L, "chunked_prefill_size", o.chunk);
    kvl_set_int(L, "cuda_graph_max_bs", o.graph_bs);
    kvl_set_num(L, "reserved_mib", o.reserved_mib);
    lua_createtable(L, o.ngraphs, 0);
    for (int32_t i = 0; i < o.ngraphs; i++) {
      lua_pushinteger(L, o.graphs[i]);
      lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "cuda_graph_bs");
    lua_setfield(L, -2, "sglang");
  }
  return 1;
}

static const char *const torch_alloc_keys[] = {
  "min_block", "small_size", "small_buffer", "large_buffer", "min_large_alloc", "round_large",
  NULL
};

/* predict_core.torch_segments(alloc, sizes): the bytes of the segments
 * PyTorch's caching allocator holds after the allocations of the list
 * sizes (kvp_torch_segments); alloc: engines.lua torch_alloc. */
static int l_torch_segments(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  kvl_check_keys(L, 1, torch_alloc_keys, "torch_alloc");
  kvp_torch_alloc a = {
    .min_block = kvl_int_field(L, 1, "min_block", 0),
    .small_size = kvl_int_field(L, 1, "small_size", 0),
    .small_buffer = kvl_int_field(L, 1, "small_buffer", 0),
    .large_buffer = kvl_int_field(L, 1, "large_buffer", 0),
    .min_large_alloc = kvl_int_field(L, 1, "min_large_alloc", 0),
    .round_large = kvl_int_field(L, 1, "round_large", 0),
  };
  lua_Integer n = luaL_len(L, 2);
  if (n < 0 || (uint64_t)n > SIZE_MAX / (sizeof(int64_t) + sizeof(kvp_torch_block)) - 1)
    return kvl_error(L, "torch_segments: %I allocations, more than memory holds", n);
  /* the sizes and the free blocks (one per allocation at most), collected
   * with the userdata */
  size_t k = n > 0 ? (size_t)n : 1;
  int64_t *sizes = lua_newuserdatauv(L, k * sizeof *sizes, 0);
  kvp_torch_block *blocks = lua_newuserdatauv(L, k * sizeof *blocks, 0);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, 2, i);
    sizes[i - 1] = kvl_toint(L, -1, "torch_segments size");
    lua_pop(L, 1);
  }
  int64_t bytes = 0;
  kvp_diag diag = {{0}};
  kvp_err err = kvp_torch_segments(&a, sizes, (int64_t)n, blocks, (int64_t)k, &bytes, &diag);
  if (err != KVP_OK) return kvl_core_error(L, err, &diag, "torch_segments");
  lua_pushinteger(L, (lua_Integer)bytes);
  return 1;
}

static const luaL_Reg funcs[] = {{"reserves", l_reserves}, {"torch_segments", l_torch_segments},
                                 {NULL, NULL}};

int luaopen_kvplan_predict_core(lua_State *L) {
  luaL_newlib(L, funcs);
  return 1;
}
