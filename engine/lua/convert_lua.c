/*
 * convert_lua.c: the Lua tables of a deployment and of a GPU's performance
 * parameters into the core's structs (formats, layer kinds, the deployment
 * with its optimizations and vLLM's switches, perf rates), every field
 * checked, and step times back into a table. The other binding files call
 * these; this file calls none of them but the helpers (util_lua.c) and the
 * engine rule's conversion (predict_lua.c).
 * Binding layer: checks and converts; the numbers come from the core.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kvplan_lua.h"

/* ---- formats and layer kinds ------------------------------------------------ */

/* tensor and col: bits a matrix and bits an input column of a linear layer,
 * counted over a model's linear layers or a weight class's
 * (kvp_format_weight_bytes: kvp_deploy_weight_bytes, core.weight_bytes) */
static const char *const format_keys[] = {"bits", "group", "scale", "zero", "rope",
                                          "tq_key", "tq_value", "group2", "scale2", "name",
                                          "tensor", "col", NULL};

/* Member `key` of the format table at idx as the core's int32_t, or an
 * error naming it: the value was cast, so a group of 2^32 + 128 (an HF
 * quantization_config's group_size, int4-g4294967424) was group 128, 2^40
 * group 0 ("scale or zero bits need a group size"), bits 2^32 + 4 bits 4. */
static int32_t format_int(lua_State *L, int idx, const char *field, const char *key) {
  int64_t v = kvl_int_field(L, idx, key, 0);
  if (v < INT32_MIN || v > INT32_MAX)
    kvl_error(L, "field '%s.%s' must be an integer of at most %I, got %I", field, key,
              (lua_Integer)INT32_MAX, (lua_Integer)v);
  return (int32_t)v;
}

/* The format table at idx ({bits=, group=, scale=, zero=}); field names the
 * option it came from (kvplan_lua.h). */
kvp_format kvl_check_format(lua_State *L, int idx, const char *field) {
  if (!lua_istable(L, idx))
    kvl_error(L, "field '%s' must be a format table, %s", field, kvl_got(L, idx));
  kvl_check_keys(L, idx, format_keys, field);
  kvp_format f;
  f.bits = format_int(L, idx, field, "bits");
  f.group = format_int(L, idx, field, "group");
  f.scale_bits = format_int(L, idx, field, "scale");
  f.zero_bits = format_int(L, idx, field, "zero");
  f.rope_bits = format_int(L, idx, field, "rope");
  f.tq_key_bits = format_int(L, idx, field, "tq_key");
  f.tq_value_bits = format_int(L, idx, field, "tq_value");
  f.group2 = format_int(L, idx, field, "group2");
  f.scale2_bits = format_int(L, idx, field, "scale2");
  f.tensor_bits = format_int(L, idx, field, "tensor");
  f.col_bits = format_int(L, idx, field, "col");
  kvp_diag d = {{0}};
  kvp_err e = kvp_format_check(&f, field, &d);
  if (e != KVP_OK) kvl_core_error(L, e, &d, field);
  return f;
}

static kvp_format opt_format(lua_State *L, int idx, const char *field, kvp_format def) {
  if (lua_getfield(L, idx, field) != LUA_TNIL) def = kvl_check_format(L, -1, field);
  lua_pop(L, 1);
  return def;
}

/* The layer kind named at idx (kvplan_lua.h). */
kvp_kind kvl_check_kind(lua_State *L, int idx, const char *what) {
  const char *s = lua_tostring(L, idx);
  for (int k = 0; s != NULL && k < KVP_NKINDS; k++)
    if (strcmp(s, kvp_kind_name((kvp_kind)k)) == 0) return (kvp_kind)k;
  kvl_error(L, "field '%s.kind' must be one of full, sliding, chunked, mla, state, none, %s",
            what, kvl_got(L, idx));
  return KVP_FULL;
}

/* ---- the deployment ----------------------------------------------------------- */

static const char *const deploy_keys[] = {
  "model", "gpu_memory", "tp", "pp", "kv", "weights", "weight_bytes", "utilization",
  "activation", "overhead", "system_memory", "block", "max_num_batched_tokens", "max_model_len",
  /* optimizations (stdlib optim.lua; zero or absent is off) */
  "budget", "max_kv_tokens", "allocation", "kv_recent", "kv_full", "evict", "speculative",
  "prefix", "samples", "prompt", "output", "host_bytes", "lengths",
  /* vLLM's switches and overrides (engine/core/vllm_kv.c) */
  "disable_hybrid_kv_cache_manager", "num_gpu_blocks_override", "kv_cache_memory_bytes",
  "max_num_seqs", "decode_context_parallel_size", "stage_gpu_bytes", "stage_activation_bytes",
  "data_parallel_size",
  "enable_expert_parallel", "moe_experts", "expert_bytes", "block_stride_alignment",
  "mamba_cache_mode", "mamba_block_size", "prefill_context_parallel_size",
  "vllm_log_tokens_from_concurrency", "vllm_check_override", "vllm_check_null_block", "vllm_system_rule",
  "vllm_block_grain",
  "vllm_max_model_len_auto", "vllm_mamba_seqs_check", "kv_cache_group_of", "kv_cache_group_blocks",
  "vllm_lora", "vllm_v0_blocks", "vllm_mla_entry_align", "vllm_rotary_bytes",
  "sglang_alloc_bytes",
  /* SGLang's attention DP and EP (engine/core/vllm_kv.c) */
  "sglang_attn_dp", "sglang_ep", "attn_bytes", "whole_bytes", "sglang_replicas",
  /* the weights whole on every TP rank (vllm_kv.c kvp_vllm_stage_weights) */
  "replicated_params", "replicated_shards", "replicated_cols", "replicated_bytes",
  "replicated_matmul",
  /* the engine's startup (starts.c) */
  "engine_named", "fail_fast_on_attention_window_too_large",
  /* how activation and overhead were predicted (sweeps predict them again) */
  "engine_rule", NULL
};

/* core.deploy_keys(): the keys a deployment table may hold, in order (the
 * stdlib's field registry, stdlib/kvplan/fields.lua, is checked against them). */
int kvl_deploy_keys(lua_State *L) {
  lua_newtable(L);
  for (int i = 0; deploy_keys[i] != NULL; i++) {
    lua_pushstring(L, deploy_keys[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* The name at idx among names[0..n), else an error listing them. */
static int check_name(lua_State *L, int idx, const char *field, const char *(*name)(int),
                      int n) {
  idx = lua_absindex(L, idx);
  const char *s = lua_tostring(L, idx);
  for (int i = 0; s != NULL && i < n; i++)
    if (strcmp(s, name(i)) == 0) return i;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 0; i < n; i++) {
    luaL_addstring(&b, i ? (i == n - 1 ? " or " : ", ") : "");
    luaL_addstring(&b, name(i));
  }
  luaL_pushresult(&b);
  const char *names = lua_tostring(L, -1);
  const char *got = kvl_got(L, idx); /* pushed above the names, which stay alive */
  return kvl_error(L, "field '%s' must be %s, %s", field, names, got);
}

static const char *budget_name(int i) { return kvp_budget_name((kvp_budget)i); }
static const char *alloc_name(int i) { return kvp_alloc_name((kvp_alloc)i); }

/* The subtable `field` of the table at idx, pushed, or 0 (nothing pushed). */
static int opt_table(lua_State *L, int idx, const char *field, const char *const *keys) {
  if (lua_getfield(L, idx, field) == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  if (!lua_istable(L, -1))
    kvl_error(L, "field '%s' must be a table, %s", field, kvl_got(L, -1));
  kvl_check_keys(L, -1, keys, field);
  return 1;
}

/* A list of integers at the top of the stack into v[0..max); returns n. */
static int64_t int_list(lua_State *L, const char *field, int64_t *v, int64_t max) {
  if (!lua_istable(L, -1)) kvl_error(L, "field '%s' must be a list, %s", field, kvl_got(L, -1));
  int64_t n = (int64_t)luaL_len(L, -1);
  if (n > max) kvl_error(L, "field '%s' holds %I values, at most %I", field, (lua_Integer)n,
                         (lua_Integer)max);
  for (int64_t i = 0; i < n; i++) {
    lua_geti(L, -1, (lua_Integer)i + 1);
    v[i] = kvl_toint(L, -1, field);
    lua_pop(L, 1);
  }
  return n;
}

static const char *const evict_keys[] = {"sinks", "recent", "keep_ppm", "layers", NULL};
static const char *const spec_keys[] = {"tokens", "draft_layers", "draft", "draft_weight_bytes",
                                        "draft_hidden", "hidden_cache", NULL};
static const char *const draft_keys[] = {"kind", "kv_heads", "head_dim", "head_dim_v",
                                         "kv_lora_rank", "rope_dim", "kv_auto", NULL};

/* A field true, false or absent (false). */
static int32_t bool_field(lua_State *L, int idx, const char *name) {
  int t = lua_getfield(L, idx, name);
  if (t != LUA_TNIL && t != LUA_TBOOLEAN)
    kvl_error(L, "field '%s' must be true or false, %s", name, kvl_got(L, -1));
  int32_t v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* The optimization fields of the deployment table at idx. */
static void check_optim(lua_State *L, int idx, kvp_deploy *d) {
  kvp_diag diag = {{0}};
  if (lua_getfield(L, idx, "budget") != LUA_TNIL)
    d->budget = (kvp_budget)check_name(L, -1, "budget", budget_name, KVP_NBUDGETS);
  lua_pop(L, 1);
  d->max_kv_tokens = kvl_int_field(L, idx, "max_kv_tokens", 0);
  if (lua_getfield(L, idx, "allocation") != LUA_TNIL)
    d->alloc = (kvp_alloc)check_name(L, -1, "allocation", alloc_name, KVP_NALLOCS);
  lua_pop(L, 1);
  d->kv_recent = kvl_int_field(L, idx, "kv_recent", 0);
  d->kv_full = opt_format(L, idx, "kv_full", d->kv_full);
  if (opt_table(L, idx, "evict", evict_keys)) {
    d->evict.sinks = kvl_int_field(L, -1, "sinks", 0);
    d->evict.recent = kvl_int_field(L, -1, "recent", 0);
    int64_t keep = kvl_int_field(L, -1, "keep_ppm", 0);
    if (keep < 0 || keep > KVP_PPM)
      kvl_error(L, "field 'keep' must be in (0, 1], got %f", (double)keep / KVP_PPM);
    d->evict.keep_ppm = (int32_t)keep;
    if (lua_getfield(L, -1, "layers") != LUA_TNIL) {
      int64_t budgets[KVP_MAX_LAYERS];
      int64_t n = int_list(L, "evict.layers", budgets, KVP_MAX_LAYERS);
      if (kvp_evict_set_layers(&d->evict, budgets, n, &diag) != KVP_OK)
        kvl_core_error(L, KVP_EINVAL, &diag, "evict.layers");
    }
    lua_pop(L, 2);
  }
  if (opt_table(L, idx, "speculative", spec_keys)) {
    d->spec.tokens = kvl_int_field(L, -1, "tokens", 0);
    d->spec.draft_layers = kvl_int_field(L, -1, "draft_layers", 0);
    d->spec.draft_weight_bytes = kvl_int_field(L, -1, "draft_weight_bytes", 0);
    d->spec.draft_hidden = kvl_int_field(L, -1, "draft_hidden", 0);
    d->spec.hidden_cache = bool_field(L, lua_gettop(L), "hidden_cache");
    if (opt_table(L, lua_gettop(L), "draft", draft_keys)) {
      kvp_layer *ly = &d->spec.draft;
      lua_getfield(L, -1, "kind");
      ly->kind = kvl_check_kind(L, -1, "speculative.draft");
      lua_pop(L, 1);
      ly->kv_heads = kvl_int_field(L, -1, "kv_heads", 0);
      ly->head_dim = kvl_int_field(L, -1, "head_dim", 0);
      ly->head_dim_v = kvl_int_field(L, -1, "head_dim_v", ly->head_dim);
      ly->latent = kvl_int_field(L, -1, "kv_lora_rank", 0);
      ly->rope_dim = kvl_int_field(L, -1, "rope_dim", 0);
      ly->kv_auto = kvl_int_field(L, -1, "kv_auto", 0) != 0;
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  d->prefix = kvl_int_field(L, idx, "prefix", 0);
  d->samples = kvl_int_field(L, idx, "samples", 0);
  d->prompt = kvl_int_field(L, idx, "prompt", 0);
  d->output = kvl_int_field(L, idx, "output", 0);
  d->host_bytes = kvl_int_field(L, idx, "host_bytes", 0);
  if (lua_getfield(L, idx, "lengths") != LUA_TNIL)
    d->nlen = (int32_t)int_list(L, "lengths", d->len, KVP_LEN_POINTS);
  lua_pop(L, 1);
}

/* vLLM's switches and overrides of the deployment table at idx. */
static void check_vllm(lua_State *L, int idx, kvp_deploy *d) {
  kvp_vllm *v = &d->vllm;
  v->disable_hybrid = bool_field(L, idx, "disable_hybrid_kv_cache_manager");
  v->blocks_override = kvl_int_field(L, idx, "num_gpu_blocks_override", 0);
  v->kv_cache_bytes = kvl_int_field(L, idx, "kv_cache_memory_bytes", 0);
  v->max_num_seqs = kvl_int_field(L, idx, "max_num_seqs", 0);
  v->dcp = kvl_int_field(L, idx, "decode_context_parallel_size", 0);
  v->pcp = kvl_int_field(L, idx, "prefill_context_parallel_size", 0);
  v->dp = kvl_int_field(L, idx, "data_parallel_size", 0);
  v->ep = bool_field(L, idx, "enable_expert_parallel");
  v->experts = kvl_int_field(L, idx, "moe_experts", 0);
  v->expert_bytes = kvl_int_field(L, idx, "expert_bytes", 0);
  d->sglang.attn_dp = kvl_int_field(L, idx, "sglang_attn_dp", 0);
  d->sglang.ep = kvl_int_field(L, idx, "sglang_ep", 0);
  d->sglang.attn_bytes = kvl_int_field(L, idx, "attn_bytes", 0);
  d->sglang.whole_bytes = kvl_int_field(L, idx, "whole_bytes", 0);
  d->sglang.replicas = kvl_int_field(L, idx, "sglang_replicas", 0);
  d->replicated.params = kvl_int_field(L, idx, "replicated_params", 0);
  d->replicated.shards = kvl_int_field(L, idx, "replicated_shards", 0);
  d->replicated.cols = kvl_int_field(L, idx, "replicated_cols", 0);
  d->replicated.bytes = kvl_int_field(L, idx, "replicated_bytes", 0);
  d->replicated.matmul = kvl_int_field(L, idx, "replicated_matmul", 0);
  v->stride_align = kvl_int_field(L, idx, "block_stride_alignment", 0);
  if (lua_getfield(L, idx, "mamba_cache_mode") != LUA_TNIL) {
    static const char *const modes[] = {"none", "align", "all"};
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    int found = -1;
    for (int i = 0; s && i < 3; i++)
      if (strcmp(s, modes[i]) == 0) found = i;
    if (found < 0)
      kvl_error(L, "field 'mamba_cache_mode' must be 'none', 'align' or 'all', %s", kvl_got(L, -1));
    v->mamba_mode = found;
  }
  lua_pop(L, 1);
  v->mamba_chunk = kvl_int_field(L, idx, "mamba_block_size", 0);
  if (lua_getfield(L, idx, "vllm_log_tokens_from_concurrency") != LUA_TNIL)
    v->log_tokens_mode = lua_toboolean(L, -1) ? 1 : 0;
  lua_pop(L, 1);
  if (lua_getfield(L, idx, "kv_cache_group_of") != LUA_TNIL) {
    int64_t of[KVP_MAX_LAYERS];
    int64_t n = int_list(L, "kv_cache_group_of", of, KVP_MAX_LAYERS);
    for (int64_t i = 0; i < n; i++) {
      if (of[i] < 0 || of[i] > KVP_MAX_SPECS)
        kvl_error(L, "field 'kv_cache_groups': layer %I is in group %I, expected at most %d groups",
                  (lua_Integer)i + 1, (lua_Integer)of[i], KVP_MAX_SPECS);
      v->group_of[i] = (uint8_t)of[i];
    }
  }
  lua_pop(L, 1);
  if (lua_getfield(L, idx, "kv_cache_group_blocks") != LUA_TNIL)
    v->ngiven = (int32_t)int_list(L, "kv_cache_group_blocks", v->given_block, KVP_MAX_SPECS);
  lua_pop(L, 1);
  v->check_override = bool_field(L, idx, "vllm_check_override");
  v->check_null_block = bool_field(L, idx, "vllm_check_null_block");
  v->block_grain = bool_field(L, idx, "vllm_block_grain");
  v->system_rule = (int32_t)kvl_int_field(L, idx, "vllm_system_rule", KVP_SYS_CHECK);
  v->auto_fit = bool_field(L, idx, "vllm_max_model_len_auto");
  v->mamba_seqs_check = bool_field(L, idx, "vllm_mamba_seqs_check");
  v->v0_blocks = bool_field(L, idx, "vllm_v0_blocks");
  v->mla_entry_align = kvl_int_field(L, idx, "vllm_mla_entry_align", 0);
  v->rotary_bytes = kvl_int_field(L, idx, "vllm_rotary_bytes", 0);
  v->alloc_bytes = kvl_int_field(L, idx, "sglang_alloc_bytes", 0);
  if (lua_getfield(L, idx, "stage_gpu_bytes") != LUA_TNIL)
    int_list(L, "stage_gpu_bytes", v->stage_gpu_bytes, KVP_MAX_PP);
  lua_pop(L, 1);
  if (lua_getfield(L, idx, "stage_activation_bytes") != LUA_TNIL)
    int_list(L, "stage_activation_bytes", v->stage_activation_bytes, KVP_MAX_PP);
  lua_pop(L, 1);
  if (lua_getfield(L, idx, "vllm_lora") != LUA_TNIL) {
    static const char *const keys[] = {"max_loras", "max_rank", "dtype_bytes", "fully_sharded",
                                       "hidden", "heads", "kv_heads", "head_dim",
                                       "intermediate", NULL};
    int lt = lua_gettop(L);
    luaL_checktype(L, lt, LUA_TTABLE);
    kvl_check_keys(L, lt, keys, "vllm_lora");
    kvp_lora *lo = &v->lora;
    lo->max_loras = kvl_int_field(L, lt, "max_loras", 0);
    lo->max_rank = kvl_int_field(L, lt, "max_rank", 0);
    lo->dtype_bytes = (int32_t)kvl_int_field(L, lt, "dtype_bytes", 0);
    lo->fully_sharded = bool_field(L, lt, "fully_sharded");
    lo->hidden = kvl_int_field(L, lt, "hidden", 0);
    lo->heads = kvl_int_field(L, lt, "heads", 0);
    lo->kv_heads = kvl_int_field(L, lt, "kv_heads", 0);
    lo->head_dim = kvl_int_field(L, lt, "head_dim", 0);
    lo->intermediate = kvl_int_field(L, lt, "intermediate", 0);
  }
  lua_pop(L, 1);
}

/* Fill d from the deployment table at idx (the stdlib resolves names). */
void kvl_check_deploy(lua_State *L, int idx, kvp_deploy *d) {
  luaL_checktype(L, idx, LUA_TTABLE);
  idx = lua_absindex(L, idx);
  kvl_check_keys(L, idx, deploy_keys, "deployment");
  kvp_deploy_defaults(d);
  lua_getfield(L, idx, "model");
  d->model = *(kvp_model *)luaL_checkudata(L, -1, KVL_MODEL_MT);
  lua_pop(L, 1);
  d->gpu_bytes = kvl_int_field(L, idx, "gpu_memory", 0);
  d->tp = kvl_int_field(L, idx, "tp", 1);
  d->pp = kvl_int_field(L, idx, "pp", 1);
  d->kv = opt_format(L, idx, "kv", d->kv);
  d->weights = opt_format(L, idx, "weights", d->weights);
  d->weight_bytes = kvl_int_field(L, idx, "weight_bytes", 0);
  d->utilization = kvl_num_field(L, idx, "utilization", d->utilization);
  d->activation_bytes = kvl_int_field(L, idx, "activation", 0);
  d->overhead_bytes = kvl_int_field(L, idx, "overhead", 0);
  d->system_bytes = kvl_int_field(L, idx, "system_memory", 0);
  d->block = kvl_int_field(L, idx, "block", d->block);
  d->max_num_batched_tokens =
      kvl_int_field(L, idx, "max_num_batched_tokens", d->max_num_batched_tokens);
  d->max_model_len = kvl_int_field(L, idx, "max_model_len", 0);
  check_optim(L, idx, d);
  check_vllm(L, idx, d);
  d->engine_named = bool_field(L, idx, "engine_named");
  d->fail_fast = bool_field(L, idx, "fail_fast_on_attention_window_too_large");
  if (lua_getfield(L, idx, "engine_rule") != LUA_TNIL)
    kvl_check_engine_rule(L, lua_gettop(L), &d->engine);
  lua_pop(L, 1);
  kvp_diag diag = {{0}};
  kvp_err e = kvp_deploy_check(d, &diag);
  if (e != KVP_OK) kvl_core_error(L, e, &diag, "deployment");
}

/* ---- performance parameters and step times ------------------------------------ */

static const char *const perf_keys[] = {
  "hbm_gbps", "tflops", "link_gbps", "mem_eff", "flop_eff", "link_eff", "link_latency_us",
  "step_overhead_ms", "acceptance", "price_per_hour", "launch_us", "seq_host_us", "loop_host_us",
  "host_overlap", "expert_eff",
  "expert_share", "idle_share", "body_flops", "head_flops", "act_rep_bytes", "act_split_bytes",
  "kernels", "experts", "experts_active", "moe_layers", "attn_share", "kernel_floor_us",
  "gemm_kernels", "attn_kernels", "attn_floor_us", "quant_kernels", "quant_floor_us",
  "sampler_bytes", "graphs", "graph_max", "graph_seq_max",
  "eager_launch_us", "gemm_tile_m",
  "gemm_memory", "gemm_compute", "piecewise_kernels", "attn_tflops", "attn_mem_eff",
  "attn16_tflops", "attn16_eff", "index_tflops", "attn_compute", "expert_tpe", "expert_frac", "expert_flops",
  "nccl_bytes", "nccl_busbw", "ar_custom_below",
  /* not the step's: kv.simulate's client time a request (sim.lua request_ms,
   * passed to the simulator as its request_s) and the API server's serial
   * work a request (sim.lua api_ms, its api_s) */
  "request_ms", "api_ms", NULL
};

/* perf[name]: nil (no curve) or a list of {M, efficiency} points, into c;
 * the core checks their order and range. */
static void curve_field(lua_State *L, int idx, const char *name, kvp_curve *c) {
  c->n = 0;
  if (lua_getfield(L, idx, name) == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (!lua_istable(L, -1))
    kvl_error(L, "field 'perf.%s' must be a list of {M, efficiency} points, got %s", name,
              luaL_typename(L, -1));
  lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
  if (n > KVP_CURVE_PTS)
    kvl_error(L, "field 'perf.%s' has %I points, expected at most %I", name, n,
              (lua_Integer)KVP_CURVE_PTS);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, -1, i);
    int ok = lua_istable(L, -1) && lua_rawgeti(L, -1, 1) == LUA_TNUMBER &&
             lua_rawgeti(L, -2, 2) == LUA_TNUMBER;
    if (!ok)
      kvl_error(L, "field 'perf.%s' point %I must be {M, efficiency}, two numbers", name, i);
    c->m[i - 1] = lua_tonumber(L, -2);
    c->e[i - 1] = lua_tonumber(L, -1);
    lua_pop(L, 3);
  }
  c->n = (int32_t)n;
  lua_pop(L, 1);
}

/* A curve given as two lists of numbers of the same length, fields xname and
 * yname of the table at idx (at most max points), or neither: into xs, ys
 * and *points. The routed experts' efficiency (perf.expert_tpe,
 * expert_frac) and NCCL's AllReduce bus bandwidth by message size
 * (perf.nccl_bytes, nccl_busbw). */
static void point_lists(lua_State *L, int idx, const char *xname, const char *yname, int max,
                        double *xs, double *ys, int32_t *points) {
  int tx = lua_getfield(L, idx, xname);
  int ty = lua_getfield(L, idx, yname);
  if (tx == LUA_TNIL && ty == LUA_TNIL) {
    lua_pop(L, 2);
    return;
  }
  if (tx != LUA_TTABLE || ty != LUA_TTABLE)
    kvl_error(L, "fields '%s' and '%s' must both be lists of numbers, got %s and %s", xname,
              yname, luaL_typename(L, -2), luaL_typename(L, -1));
  lua_Integer n = (lua_Integer)lua_rawlen(L, -2);
  if (n != (lua_Integer)lua_rawlen(L, -1) || n < 1 || n > max)
    kvl_error(L, "fields '%s' and '%s' must be lists of the same length, 1 to %I, got %I and %I",
              xname, yname, (lua_Integer)max, n, (lua_Integer)lua_rawlen(L, -1));
  for (lua_Integer i = 1; i <= n; i++) {
    for (int k = 0; k < 2; k++) {
      if (lua_rawgeti(L, k == 0 ? -2 : -1, i) != LUA_TNUMBER)
        kvl_error(L, "field '%s' point %I must be a number, got %s", k == 0 ? xname : yname, i,
                  luaL_typename(L, -1));
      (k == 0 ? xs : ys)[i - 1] = lua_tonumber(L, -1);
      lua_pop(L, 1);
    }
  }
  *points = (int32_t)n;
  lua_pop(L, 2);
}

/* The perf table at idx, checked (kvplan_lua.h). */
kvp_perf kvl_check_perf(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  kvl_check_keys(L, idx, perf_keys, "perf");
  kvp_perf p = {
    .hbm_gbps = kvl_num_field(L, idx, "hbm_gbps", 0.0),
    .tflops = kvl_num_field(L, idx, "tflops", 0.0),
    .link_gbps = kvl_num_field(L, idx, "link_gbps", 0.0),
    .mem_eff = kvl_num_field(L, idx, "mem_eff", 1.0),
    .flop_eff = kvl_num_field(L, idx, "flop_eff", 1.0),
    .link_eff = kvl_num_field(L, idx, "link_eff", 1.0),
    .link_latency_us = kvl_num_field(L, idx, "link_latency_us", 0.0),
    .step_overhead_ms = kvl_num_field(L, idx, "step_overhead_ms", 0.0),
    .acceptance = kvl_num_field(L, idx, "acceptance", 0.0),
    .price_per_hour = kvl_num_field(L, idx, "price_per_hour", 0.0),
    .launch_us = kvl_num_field(L, idx, "launch_us", 0.0),
    .expert_eff = kvl_num_field(L, idx, "expert_eff", 0.0),
    .host_overlap = bool_field(L, idx, "host_overlap"),
    .seq_host_us = kvl_num_field(L, idx, "seq_host_us", 0.0),
    .loop_host_us = kvl_num_field(L, idx, "loop_host_us", 0.0),
    .expert_share = kvl_num_field(L, idx, "expert_share", 0.0),
    .idle_share = kvl_num_field(L, idx, "idle_share", 0.0),
    .body_flops = kvl_num_field(L, idx, "body_flops", 0.0),
    .head_flops = kvl_num_field(L, idx, "head_flops", 0.0),
    .act_rep_bytes = kvl_num_field(L, idx, "act_rep_bytes", 0.0),
    .act_split_bytes = kvl_num_field(L, idx, "act_split_bytes", 0.0),
    .kernels = kvl_num_field(L, idx, "kernels", 0.0),
    .experts = kvl_int_field(L, idx, "experts", 0),
    .experts_active = kvl_int_field(L, idx, "experts_active", 0),
    .moe_layers = kvl_int_field(L, idx, "moe_layers", 0),
    .attn_share = kvl_num_field(L, idx, "attn_share", 0.0),
    .kernel_floor_us = kvl_num_field(L, idx, "kernel_floor_us", 0.0),
    .gemm_kernels = kvl_num_field(L, idx, "gemm_kernels", 0.0),
    .attn_kernels = kvl_num_field(L, idx, "attn_kernels", 0.0),
    .attn_floor_us = kvl_num_field(L, idx, "attn_floor_us", 0.0),
    .quant_kernels = kvl_num_field(L, idx, "quant_kernels", 0.0),
    .quant_floor_us = kvl_num_field(L, idx, "quant_floor_us", 0.0),
    .sampler_bytes = kvl_num_field(L, idx, "sampler_bytes", 0.0),
    .graphs = KVP_GRAPHS_NONE,
    .graph_max = kvl_int_field(L, idx, "graph_max", 0),
    .graph_seq_max = kvl_int_field(L, idx, "graph_seq_max", 0),
    .eager_launch_us = kvl_num_field(L, idx, "eager_launch_us", 0.0),
    .piecewise_kernels = kvl_num_field(L, idx, "piecewise_kernels", 0.0),
    .gemm_tile_m = kvl_num_field(L, idx, "gemm_tile_m", 0.0),
  };
  int64_t graphs = kvl_int_field(L, idx, "graphs", 0);
  if (graphs < KVP_GRAPHS_NONE || graphs > KVP_GRAPHS_EXACT)
    kvl_error(L, "field 'graphs' must be an integer in [%d, %d] (kvp_graphs), got %I",
              KVP_GRAPHS_NONE, KVP_GRAPHS_EXACT, (lua_Integer)graphs);
  p.graphs = (int32_t)graphs;
  curve_field(L, idx, "gemm_memory", &p.gemm_mem);
  curve_field(L, idx, "gemm_compute", &p.gemm_flop);
  p.attn_tflops = kvl_num_field(L, idx, "attn_tflops", 0.0);
  p.attn_mem_eff = kvl_num_field(L, idx, "attn_mem_eff", 0.0);
  p.attn16_tflops = kvl_num_field(L, idx, "attn16_tflops", 0.0);
  p.attn16_eff = kvl_num_field(L, idx, "attn16_eff", 0.0);
  p.index_tflops = kvl_num_field(L, idx, "index_tflops", 0.0);
  curve_field(L, idx, "attn_compute", &p.attn_flop);
  p.expert_flops = kvl_num_field(L, idx, "expert_flops", 0.0);
  point_lists(L, idx, "expert_tpe", "expert_frac", KVP_EXPERT_POINTS, p.expert_tpe,
              p.expert_frac, &p.expert_points);
  point_lists(L, idx, "nccl_bytes", "nccl_busbw", KVP_NCCL_POINTS, p.nccl_bytes, p.nccl_busbw,
              &p.nccl_points);
  p.ar_custom_below = kvl_num_field(L, idx, "ar_custom_below", 0.0);
  kvp_diag d = {{0}};
  if (kvp_perf_check(&p, &d) != KVP_OK) kvl_core_error(L, KVP_EINVAL, &d, "perf");
  return p;
}

/* Push the step times t as a table. */
static void push_time(lua_State *L, const kvp_time *t) {
  lua_createtable(L, 0, 20);
  kvl_set_num(L, "tpot_ms", t->tpot_s * 1e3);
  kvl_set_num(L, "ttft_ms", t->ttft_s * 1e3);
  kvl_set_num(L, "tokens_per_s", t->tokens_per_s);
  lua_pushstring(L, t->compute_bound ? "compute" : "memory");
  lua_setfield(L, -2, "bound");
  kvl_set_num(L, "kv_read_share", t->kv_read_share);
  kvl_set_num(L, "usd_per_mtok", t->usd_per_mtok);
  kvl_set_num(L, "steps_per_token", t->steps_per_token);
  kvl_set_num(L, "kv_writes_per_token", t->kv_writes_per_token);
  kvl_set_num(L, "kv_write_bytes_per_token", t->kv_write_bytes_per_token);
  kvl_set_num(L, "step_ms", t->decode.seconds * 1e3);
  kvl_set_num(L, "memory_ms", t->decode.mem_s * 1e3);
  kvl_set_num(L, "compute_ms", t->decode.compute_s * 1e3);
  kvl_set_num(L, "comm_ms", t->decode.comm_s * 1e3);
  kvl_set_num(L, "a2a_ms", t->decode.a2a_s * 1e3);
  kvl_set_num(L, "nccl_ms", t->decode.nccl_s * 1e3);
  kvl_set_num(L, "gemm_ms", t->decode.gemm_s * 1e3);
  kvl_set_num(L, "experts_ms", t->decode.expert_s * 1e3);
  kvl_set_num(L, "tokens_per_expert", t->decode.tokens_per_expert);
  kvl_set_num(L, "attention_ms", t->decode.attn_s * 1e3);
  kvl_set_num(L, "activation_ms", t->decode.act_s * 1e3);
  kvl_set_num(L, "host_ms", t->decode.host_s * 1e3);
  kvl_set_num(L, "floor_ms", t->decode.floor_s * 1e3);
  lua_pushboolean(L, t->decode.graph);
  lua_setfield(L, -2, "graph");
  kvl_set_num(L, "run_tokens", (double)t->decode.run_tokens);
}

/* The step times of ledger l under perf p at (context, concurrency) at the
 * given stack positions, pushed as a table (kvplan_lua.h). */
int kvl_time_error(lua_State *L, const kvp_cost *c, const kvp_time *t, int64_t ctx, int64_t conc) {
  if (isfinite(t->tpot_s) && isfinite(t->tokens_per_s) && isfinite(t->ttft_s))
    return kvl_error(L, "field 'price_per_hour' = %f: usd_per_mtok at context %I and concurrency %I "
                     "exceeds the largest double (expected USD per GPU hour)", c->p.price_per_hour,
                     (lua_Integer)ctx, (lua_Integer)conc);
  /* which inputs: perf.tflops = 1e-320 said "overflows" alone; and issue
   * 18's rates and tile (index_tflops = 1e-320, gemm_tile_m = 1e308, a
   * busbw of 1e-320 GB/s named the rates above alone) */
  const kvp_perf *p = &c->p;
  if (p->nccl_points > 0) {
    double lo = p->nccl_busbw[0];
    for (int32_t k = 1; k < p->nccl_points; k++) lo = fmin(lo, p->nccl_busbw[k]);
    lua_pushfstring(L, ", nccl_busbw from %f GB/s", lo);
  } else {
    lua_pushliteral(L, "");
  }
  return kvl_error(L, "step time at context %I and concurrency %I overflows (expected step-time "
                   "inputs that give a finite time: hbm_gbps = %f at efficiency %f, tflops = %f at "
                   "efficiency %f, step_overhead_ms = %f, launch_us = %f, seq_host_us = %f, "
                   "loop_host_us = %f, index_tflops = %f, gemm_tile_m = %f%s)", (lua_Integer)ctx,
                   (lua_Integer)conc, p->hbm_gbps, p->mem_eff, p->tflops, p->flop_eff,
                   p->step_overhead_ms, p->launch_us, p->seq_host_us, p->loop_host_us,
                   p->index_tflops, p->gemm_tile_m, lua_tostring(L, -1));
}

int kvl_time_of(lua_State *L, const kvp_ledger *l, const kvp_perf *p, int cidx, int nidx) {
  int64_t ctx = kvl_toint(L, cidx, "context"), conc = kvl_toint(L, nidx, "concurrency");
  if (ctx < 1) return kvl_error(L, "field 'context' must be an integer >= 1, got %I", (lua_Integer)ctx);
  if (conc < 1)
    return kvl_error(L, "field 'concurrency' must be an integer >= 1, got %I", (lua_Integer)conc);
  kvp_cost c;
  kvp_diag diag = {{0}};
  kvp_err e = kvp_cost_init(&c, l, p, &diag);
  if (e != KVP_OK) kvl_core_error(L, e, &diag, "step time");
  kvp_time t;
  if (kvp_time_at(&c, ctx, conc, &t) != KVP_OK) return kvl_time_error(L, &c, &t, ctx, conc);
  push_time(L, &t);
  return 1;
}
