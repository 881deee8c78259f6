/*
 * predict_lua.c: the Lua binding of the activation model:
 * require "kvplan.predict_core" (used by stdlib/kvplan/engines.lua).
 * Binding layer: checks arguments, calls predict.c, turns kvp_err into a Lua
 * error. No accounting here.
 */
#include <string.h>

#include "kvplan_lua.h"

static const char *const keys[] = {
  "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab", "experts",
  "experts_active", "moe_intermediate", "shared_intermediate", "dense_layers",
  "kv_lora_rank", "rope_dim", "tokens", "seqs", "tp", "act_bytes", "last_stage", "eager",
  "moe_cache13", "flashinfer_sampler", "moe_chunk", "vision", NULL
};

static const char *const vision_keys[] = {
  "hidden", "intermediate", "gated", "proj_hidden", "out_hidden", "merge", "patch_values",
  "patches", "tokens", "items", "pixel_bytes", NULL
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
static int l_activation(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  kvl_check_keys(L, 1, keys, "activation model");
  kvp_shape s;
  kvp_profile p;
  memset(&s, 0, sizeof s);
  memset(&p, 0, sizeof p);
  s.hidden = kvl_int_field(L, 1, "hidden", 0);
  s.heads = kvl_int_field(L, 1, "heads", 0);
  s.kv_heads = kvl_int_field(L, 1, "kv_heads", s.heads);
  s.head_dim = kvl_int_field(L, 1, "head_dim", 0);
  s.intermediate = kvl_int_field(L, 1, "intermediate", 0);
  s.vocab = kvl_int_field(L, 1, "vocab", 0);
  s.experts = kvl_int_field(L, 1, "experts", 0);
  s.experts_active = kvl_int_field(L, 1, "experts_active", 0);
  s.moe_intermediate = kvl_int_field(L, 1, "moe_intermediate", 0);
  s.shared_intermediate = kvl_int_field(L, 1, "shared_intermediate", 0);
  s.dense_layers = kvl_int_field(L, 1, "dense_layers", 0);
  s.mla_latent = kvl_int_field(L, 1, "kv_lora_rank", 0);
  s.mla_rope = kvl_int_field(L, 1, "rope_dim", 0);
  p.tokens = kvl_int_field(L, 1, "tokens", 0);
  p.seqs = kvl_int_field(L, 1, "seqs", 0);
  p.tp = kvl_int_field(L, 1, "tp", 1);
  p.act_bytes = (int32_t)kvl_int_field(L, 1, "act_bytes", 2);
  p.moe_chunk = kvl_int_field(L, 1, "moe_chunk", 0);
  p.last_stage = flag(L, 1, "last_stage");
  p.eager = flag(L, 1, "eager");
  p.moe_cache13 = flag(L, 1, "moe_cache13");
  p.flashinfer_sampler = flag(L, 1, "flashinfer_sampler");
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

static const luaL_Reg funcs[] = {{"activation", l_activation}, {NULL, NULL}};

int luaopen_kvplan_predict_core(lua_State *L) {
  luaL_newlib(L, funcs);
  return 1;
}
