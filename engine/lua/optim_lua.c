/*
 * optim_lua.c: the Lua binding of the optimization models:
 * require "kvplan.optim_core" (used by stdlib/kvplan/optim.lua and workload.lua).
 * Binding layer: checks arguments, calls optim.c, turns kvp_err into a Lua
 * error. No accounting here.
 */
#include <string.h>

#include "kvplan_lua.h"

static const char *const dist_keys[] = {"kind", "lo", "hi", "mu", "sigma", "values", NULL};

static const char *dist_kind_name(int i) { return kvp_dist_name((kvp_dist_kind)i); }

/* A list of n >= 1 lengths at idx, copied into a userdata left on the stack
 * (freed with it) and sorted. */
static int64_t *length_list(lua_State *L, int idx, const char *field, int64_t *n) {
  if (!lua_istable(L, idx)) kvl_error(L, "field '%s' must be a list of lengths, %s", field,
                                      kvl_got(L, idx));
  *n = (int64_t)luaL_len(L, idx);
  if (*n < 1) kvl_error(L, "field '%s' must hold at least one length", field);
  int64_t *v = lua_newuserdatauv(L, (size_t)*n * sizeof *v, 0);
  for (int64_t i = 0; i < *n; i++) {
    lua_geti(L, idx, (lua_Integer)i + 1);
    v[i] = kvl_toint(L, -1, field);
    lua_pop(L, 1);
  }
  return v;
}

/* The distribution table at idx (kvplan_lua.h). */
kvp_dist kvl_check_dist(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  kvl_check_keys(L, idx, dist_keys, "distribution");
  kvp_dist d;
  memset(&d, 0, sizeof d);
  lua_getfield(L, idx, "kind");
  const char *k = lua_tostring(L, -1);
  d.kind = KVP_NDISTS;
  for (int i = 0; k != NULL && i < KVP_NDISTS; i++)
    if (strcmp(k, dist_kind_name(i)) == 0) d.kind = (kvp_dist_kind)i;
  if (d.kind == KVP_NDISTS)
    kvl_error(L, "field 'kind' must be fixed, uniform, normal, lognormal or empirical, %s",
              kvl_got(L, -1));
  lua_pop(L, 1);
  d.lo = kvl_int_field(L, idx, "lo", 1);
  d.hi = kvl_int_field(L, idx, "hi", 0);
  d.mu = kvl_num_field(L, idx, "mu", 0.0);
  d.sigma = kvl_num_field(L, idx, "sigma", 0.0);
  if (d.kind == KVP_DIST_EMPIRICAL) {
    lua_getfield(L, idx, "values");
    int64_t *v = length_list(L, lua_gettop(L), "values", &d.n);
    lua_remove(L, -2); /* keep the buffer, drop the list */
    kvp_lengths_sort(v, d.n);
    d.values = v;
  }
  kvp_diag diag = {{0}};
  if (kvp_dist_check(&d, &diag) != KVP_OK) kvl_core_error(L, KVP_EINVAL, &diag, "distribution");
  return d;
}

static void push_list(lua_State *L, const int64_t *v, int64_t n) {
  lua_createtable(L, (int)n, 0);
  for (int64_t i = 0; i < n; i++) {
    lua_pushinteger(L, (lua_Integer)v[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

/* optim_core.dist_points(dist [, k]) -> k equally likely lengths, ascending */
static int l_dist_points(lua_State *L) {
  kvp_dist d = kvl_check_dist(L, 1);
  int64_t k = lua_isnoneornil(L, 2) ? KVP_LEN_POINTS : kvl_toint(L, 2, "points");
  if (k < 1 || k > KVP_LEN_POINTS)
    return kvl_error(L, "field 'points' must be 1..%d, got %I", KVP_LEN_POINTS, (lua_Integer)k);
  int64_t p[KVP_LEN_POINTS];
  kvp_diag diag = {{0}};
  if (kvp_dist_points(&d, (int32_t)k, p, &diag) != KVP_OK)
    return kvl_core_error(L, KVP_EINVAL, &diag, "distribution");
  push_list(L, p, k);
  return 1;
}

/* optim_core.dist_mean(dist) -> the exact mean */
static int l_dist_mean(lua_State *L) {
  kvp_dist d = kvl_check_dist(L, 1);
  double mean;
  kvp_diag diag = {{0}};
  if (kvp_dist_mean(&d, &mean, &diag) != KVP_OK)
    return kvl_core_error(L, KVP_EINVAL, &diag, "distribution");
  lua_pushnumber(L, mean);
  return 1;
}

/* optim_core.dist_sample(dist, n, seed) -> n lengths drawn with the seeded
 * generator (xoshiro256**, splitmix64-seeded) */
static int l_dist_sample(lua_State *L) {
  kvp_dist d = kvl_check_dist(L, 1);
  int64_t n = kvl_toint(L, 2, "n"), seed = kvl_toint(L, 3, "seed");
  if (n < 1 || n > 100000000)
    return kvl_error(L, "field 'n' must be an integer in 1..10^8, got %I", (lua_Integer)n);
  kvp_rng r;
  kvp_rng_seed(&r, (uint64_t)seed);
  lua_createtable(L, (int)n, 0);
  for (int64_t i = 0; i < n; i++) {
    int64_t len;
    if (kvp_dist_sample(&d, &r, &len) != KVP_OK) return kvl_core_error(L, KVP_EINVAL, NULL, "sample");
    lua_pushinteger(L, (lua_Integer)len);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static kvp_alloc check_alloc_arg(lua_State *L, int idx) {
  const char *s = luaL_checkstring(L, idx);
  for (int a = 0; a < KVP_NALLOCS; a++)
    if (strcmp(s, kvp_alloc_name((kvp_alloc)a)) == 0) return (kvp_alloc)a;
  kvl_error(L, "field 'allocation' must be paged or contiguous, got string '%s'", s);
  return KVP_ALLOC_PAGED;
}

/* optim_core.alloc_usage(policy, block, max_len, lengths) -> real, allocated */
static int l_alloc_usage(lua_State *L) {
  kvp_alloc a = check_alloc_arg(L, 1);
  int64_t block = kvl_toint(L, 2, "block"), max_len = kvl_toint(L, 3, "max_model_len"), n;
  const int64_t *v = length_list(L, 4, "lengths", &n);
  int64_t real, allocated;
  kvp_diag diag = {{0}};
  kvp_err e = kvp_alloc_usage(a, block, max_len, v, n, &real, &allocated, &diag);
  if (e != KVP_OK) return kvl_core_error(L, e, &diag, "alloc_usage");
  lua_pushinteger(L, (lua_Integer)real);
  lua_pushinteger(L, (lua_Integer)allocated);
  return 2;
}

/* optim_core.spec_rates(acceptance, tokens) -> {tokens_per_step, ...} */
static int l_spec_rates(lua_State *L) {
  double a = lua_type(L, 1) == LUA_TNUMBER ? lua_tonumber(L, 1) : kvl_tonum(L, 1, "acceptance");
  int64_t g = kvl_toint(L, 2, "tokens");
  kvp_spec_rates r;
  kvp_diag diag = {{0}};
  if (kvp_spec_rates_of(a, g, &r, &diag) != KVP_OK)
    return kvl_core_error(L, KVP_EINVAL, &diag, "speculative");
  lua_createtable(L, 0, 4);
  kvl_set_num(L, "tokens_per_step", r.tokens_per_step);
  kvl_set_num(L, "steps_per_token", r.steps_per_token);
  kvl_set_num(L, "target_writes_per_token", r.target_writes_per_token);
  kvl_set_num(L, "draft_writes_per_token", r.draft_writes_per_token);
  return 1;
}

static const luaL_Reg funcs[] = {
  {"dist_points", l_dist_points}, {"dist_mean", l_dist_mean}, {"dist_sample", l_dist_sample},
  {"alloc_usage", l_alloc_usage}, {"spec_rates", l_spec_rates}, {NULL, NULL}
};


int luaopen_kvplan_optim_core(lua_State *L) {
  luaL_newlib(L, funcs);
  kvl_set_int(L, "len_points", KVP_LEN_POINTS);
  return 1;
}
