/*
 * sim_lua.c: the Lua binding of step times and the serving simulator:
 * require "kvplan.sim_core" (used by stdlib/kvplan/sim.lua and deploy.lua).
 * Binding layer: checks the tables, calls roofline.c and sim.c, writes the
 * timeline through the CSV writer. No accounting here.
 */
#include <math.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include "csvw.h"
#include "kvplan_lua.h"

/* The most requests one simulation generates (--help and the manual say so). */
#define KVL_MAX_REQUESTS 10000000

#define SIM_MT "kvplan.Simulation"

/* Evaluate the deployment at idx and derive its costs with the perf at pidx. */
static void cost_of(lua_State *L, int idx, int pidx, kvp_ledger *l, kvp_cost *c) {
  kvp_deploy d;
  kvl_check_deploy(L, idx, &d);
  kvp_perf p = kvl_check_perf(L, pidx);
  kvp_diag diag = {{0}};
  kvp_err e = kvp_ledger_eval(&d, l, &diag);
  if (e != KVP_OK) kvl_core_error(L, e, &diag, "ledger");
  e = kvp_cost_init(c, l, &p, &diag);
  if (e != KVP_OK) kvl_core_error(L, e, &diag, "step time");
}

/* sim_core.time(deploy, perf, context, concurrency) -> {tpot_ms, ttft_ms,
 * tokens_per_s, bound, kv_read_share, usd_per_mtok, ...} */
static int l_time(lua_State *L) {
  kvp_deploy d;
  kvl_check_deploy(L, 1, &d);
  kvp_perf p = kvl_check_perf(L, 2);
  kvp_ledger *l = lua_newuserdatauv(L, kvp_ledger_size(&d), 0); /* large: not on the C stack */
  kvp_diag diag = {{0}};
  kvp_err e = kvp_ledger_eval(&d, l, &diag);
  if (e != KVP_OK) kvl_core_error(L, e, &diag, "ledger");
  return kvl_time_of(L, l, &p, 3, 4);
}

/* ---- simulations ---------------------------------------------------------- */

/* The most alternatives of one run (spec.alternatives). */
#define KVL_MAX_ALTS 16

typedef struct simbox {
  kvp_sim s;
  int live;
  int nalts;
  kvp_sim_alt alt[KVL_MAX_ALTS]; /* their outcomes (their costs no longer held) */
} simbox;

static int sim_gc(lua_State *L) {
  simbox *b = luaL_checkudata(L, 1, SIM_MT);
  if (b->live) kvp_sim_free(&b->s);
  b->live = 0;
  return 0;
}

static const char *const run_keys[] = {
  "deploy", "perf", "scheduler", "max_num_seqs", "max_num_batched_tokens", "host_bytes",
  "pcie_gbps", "seed", "max_steps", "requests", "prompt", "output", "rate", "arrival",
  "prompt_tokens", "output_tokens", "max_concurrency", "max_prefill_tokens",
  "clip_max_new_tokens", "retract_decode_steps", "init_new_token_ratio", "min_new_token_ratio",
  "new_token_ratio_decay", "phase", "kv_transfer_s", "request_s", "api_s",
  "long_prefill_token_threshold", "alternatives", NULL
};

/* The list at spec[name] as numbers (n of them), in a userdata left on the
 * stack; NULL when absent. */
static double *num_list(lua_State *L, int spec, const char *name, int64_t *n) {
  if (lua_getfield(L, spec, name) == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  if (!lua_istable(L, -1)) kvl_error(L, "field '%s' must be a list, %s", name, kvl_got(L, -1));
  *n = (int64_t)luaL_len(L, -1);
  double *v = lua_newuserdatauv(L, (size_t)(*n ? *n : 1) * sizeof *v, 0);
  for (int64_t i = 0; i < *n; i++) {
    lua_geti(L, -2, (lua_Integer)i + 1);
    v[i] = kvl_tonum(L, -1, name);
    lua_pop(L, 1);
  }
  lua_remove(L, -2);
  return v;
}

/* The workload: a trace (three lists) or drawn from two distributions. */
static kvp_request *workload(lua_State *L, int spec, uint64_t seed, int64_t *n) {
  int64_t na = 0, np = 0, no = 0;
  double *arr = num_list(L, spec, "arrival", &na);
  if (arr != NULL) {
    double *pr = num_list(L, spec, "prompt_tokens", &np);
    double *ou = num_list(L, spec, "output_tokens", &no);
    if (pr == NULL || ou == NULL || np != na || no != na)
      kvl_error(L, "a trace needs lists 'arrival', 'prompt_tokens' and 'output_tokens' of one length");
    if (na < 1) kvl_error(L, "the trace holds no request");
    kvp_request *r = lua_newuserdatauv(L, (size_t)na * sizeof *r, 0);
    for (int64_t i = 0; i < na; i++) {
      if (!(fabs(pr[i]) <= 0x1p62 && fabs(ou[i]) <= 0x1p62) ||
          pr[i] != (double)(int64_t)pr[i] || ou[i] != (double)(int64_t)ou[i])
        kvl_error(L, "trace request %I: token counts must be integers, got %f and %f",
                  (lua_Integer)i + 1, kvp_shown(pr[i]), kvp_shown(ou[i]));
      r[i] = (kvp_request){arr[i], (int64_t)pr[i], (int64_t)ou[i]};
    }
    *n = na;
    return r;
  }
  *n = kvl_int_field(L, spec, "requests", 0);
  /* a simulation holds about 200 bytes a request (the request, its state,
   * its latencies): 10^7 requests take 2 GB, the 10^8 allowed before 19.5 */
  if (*n < 1 || *n > KVL_MAX_REQUESTS)
    kvl_error(L, "field 'requests' must be an integer in 1..10^7 (a simulation holds about 200 "
              "bytes a request), got %I", (lua_Integer)*n);
  lua_getfield(L, spec, "prompt");
  kvp_dist prompt = kvl_check_dist(L, -1);
  lua_getfield(L, spec, "output");
  kvp_dist output = kvl_check_dist(L, -1);
  double rate = kvl_num_field(L, spec, "rate", 0.0);
  if (lua_getfield(L, spec, "rate") != LUA_TNIL && !(rate > 0.0))
    kvl_error(L, "field 'rate' must be a number > 0 (requests a second), got %f", kvp_shown(rate));
  lua_pop(L, 1);
  kvp_request *r = lua_newuserdatauv(L, (size_t)*n * sizeof *r, 0);
  kvp_diag d = {{0}};
  kvp_err e = kvp_workload_make(&prompt, &output, *n, rate, seed, r, &d);
  if (e != KVP_OK) kvl_core_error(L, e, &d, "workload");
  return r;
}

/* sim_core.run(spec) -> a kvplan.Simulation */
static int l_run(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  kvl_check_keys(L, 1, run_keys, "simulation");
  kvp_ledger *l = lua_newuserdatauv(L, sizeof *l, 0);
  kvp_cost *c = lua_newuserdatauv(L, sizeof *c, 0);
  lua_getfield(L, 1, "deploy");
  lua_getfield(L, 1, "perf");
  cost_of(L, -2, -1, l, c);
  lua_pop(L, 2);
  kvp_sim_config cfg = {
    .max_num_seqs = kvl_int_field(L, 1, "max_num_seqs", 256),
    .max_num_batched_tokens = kvl_int_field(L, 1, "max_num_batched_tokens", 2048),
    .host_bytes = kvl_int_field(L, 1, "host_bytes", 0),
    .pcie_gbps = kvl_num_field(L, 1, "pcie_gbps", 0.0),
    .seed = (uint64_t)kvl_int_field(L, 1, "seed", 1),
    .max_steps = kvl_int_field(L, 1, "max_steps", 0),
    .max_concurrency = kvl_int_field(L, 1, "max_concurrency", 0),
    .max_prefill_tokens = kvl_int_field(L, 1, "max_prefill_tokens", 0),
    .clip_max_new_tokens = kvl_int_field(L, 1, "clip_max_new_tokens", 0),
    .retract_decode_steps = kvl_int_field(L, 1, "retract_decode_steps", 0),
    .init_new_token_ratio = kvl_num_field(L, 1, "init_new_token_ratio", 0.0),
    .min_new_token_ratio = kvl_num_field(L, 1, "min_new_token_ratio", 0.0),
    .new_token_ratio_decay = kvl_num_field(L, 1, "new_token_ratio_decay", 0.0),
    .long_prefill_token_threshold = kvl_int_field(L, 1, "long_prefill_token_threshold", 0),
    .stop = &kvl_stop, /* --timeout ends the loop at its next step */
  };
  lua_getfield(L, 1, "scheduler");
  const char *sched = luaL_optstring(L, -1, "continuous");
  if (strcmp(sched, "continuous") == 0) cfg.sched = KVP_SCHED_CONTINUOUS;
  else if (strcmp(sched, "static") == 0) cfg.sched = KVP_SCHED_STATIC;
  else if (strcmp(sched, "no_evict") == 0) cfg.sched = KVP_SCHED_NO_EVICT;
  else if (strcmp(sched, "sglang") == 0) cfg.sched = KVP_SCHED_SGLANG;
  else return kvl_error(L, "field 'scheduler' must be 'continuous', 'no_evict', 'static' or "
                        "'sglang', got '%s'", sched);
  lua_pop(L, 1);
  lua_getfield(L, 1, "phase");
  const char *phase = luaL_optstring(L, -1, "both");
  if (strcmp(phase, "both") == 0) cfg.phase = KVP_PHASE_BOTH;
  else if (strcmp(phase, "prefill") == 0) cfg.phase = KVP_PHASE_PREFILL;
  else if (strcmp(phase, "decode") == 0) cfg.phase = KVP_PHASE_DECODE;
  else return kvl_error(L, "field 'phase' must be 'prefill', 'decode' or 'both', got '%s'", phase);
  lua_pop(L, 1);
  cfg.kv_transfer_s = kvl_num_field(L, 1, "kv_transfer_s", 0.0);
  cfg.request_s = kvl_num_field(L, 1, "request_s", 0.0);
  cfg.api_s = kvl_num_field(L, 1, "api_s", 0.0);
  /* alternatives: {perf = ..., request_s = ...} each, costs of the same ledger */
  kvp_sim_alt alts[KVL_MAX_ALTS];
  int nalts = 0;
  if (lua_getfield(L, 1, "alternatives") != LUA_TNIL) {
    if (!lua_istable(L, -1)) kvl_error(L, "field 'alternatives' must be a list, %s", kvl_got(L, -1));
    lua_Integer na = luaL_len(L, -1);
    if (na > KVL_MAX_ALTS)
      kvl_error(L, "field 'alternatives' holds %I, at most %I expected", (lua_Integer)na,
                (lua_Integer)KVL_MAX_ALTS);
    kvp_cost *ac = lua_newuserdatauv(L, (size_t)(na > 0 ? na : 1) * sizeof *ac, 0);
    for (lua_Integer k = 0; k < na; k++) {
      lua_geti(L, -2, k + 1);
      if (!lua_istable(L, -1))
        kvl_error(L, "alternative %I must be a table {perf = ..., request_s = ...}, %s",
                  (lua_Integer)(k + 1), kvl_got(L, -1));
      lua_getfield(L, -1, "perf");
      kvp_perf ap = kvl_check_perf(L, -1);
      lua_pop(L, 1);
      kvp_diag ad = {{0}};
      kvp_err ae = kvp_cost_init(&ac[k], l, &ap, &ad);
      if (ae != KVP_OK) kvl_core_error(L, ae, &ad, "alternative's step time");
      alts[k] = (kvp_sim_alt){.c = &ac[k], .request_s = kvl_num_field(L, -1, "request_s", 0.0)};
      lua_pop(L, 1);
    }
    nalts = (int)na;
    cfg.alts = alts;
    cfg.nalts = nalts;
    lua_remove(L, -2); /* the costs stay on the stack for the run */
  } else {
    lua_pop(L, 1);
  }
  int64_t n;
  kvp_request *req = workload(L, 1, cfg.seed, &n);
  simbox *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  luaL_setmetatable(L, SIM_MT);
  kvp_diag d = {{0}};
  kvp_err e = kvp_sim_run(l, c, &cfg, req, n, &b->s, &d);
  b->nalts = nalts;
  for (int k = 0; k < nalts; k++) {
    b->alt[k] = alts[k];
    b->alt[k].c = NULL;
  }
  if (e != KVP_OK) kvl_poll(L); /* stopped by the time limit: say so */
  if (e != KVP_OK) return kvl_core_error(L, e, &d, "simulation");
  b->live = 1;
  /* the run's arrays lie outside Lua's heap, where the collector does not
   * count them: a step of it as if they had been allocated there, so that
   * results no longer referenced are freed before more pile up (kvplan
   * pareto output=100000: a simulation a point, each 10^7 steps, held 7 GB) */
  size_t bytes = (size_t)b->s.cap * sizeof(kvp_sim_step) +
                 (size_t)b->s.n * (3 * sizeof(double) + sizeof(int64_t));
  lua_gc(L, LUA_GCSTEP, (int)(bytes / 1024 > INT_MAX ? INT_MAX : bytes / 1024));
  return 1;
}

static simbox *check_sim(lua_State *L) {
  simbox *b = luaL_checkudata(L, 1, SIM_MT);
  if (!b->live) luaL_error(L, "the simulation was released");
  return b;
}

/* {mean, p50, p90, p99, max} of one per-request series, in milliseconds.
 * A latency finite in seconds but past the largest double in milliseconds
 * (perf.api_ms = 1e308: the API server's queue) is an error naming the
 * series and its inputs: the report said "column 'ttft_ms_p50' has no
 * finite value (got inf)". */
static void push_summary(lua_State *L, const double *v, int64_t n, const char *name) {
  double *copy = lua_newuserdatauv(L, (size_t)n * sizeof *copy, 0);
  memcpy(copy, v, (size_t)n * sizeof *copy);
  kvp_summary s;
  kvp_summarize(copy, n, &s);
  lua_pop(L, 1);
  if (!isfinite(s.max * 1e3) || !isfinite(s.mean * 1e3))
    kvl_error(L, "%s of %f s passes the largest double in milliseconds (expected latencies a report can "
              "hold: perf.api_ms, perf.request_ms and the step-time inputs give finite times)", name,
              kvp_shown(s.max));
  lua_createtable(L, 0, 5);
  kvl_set_num(L, "mean", s.mean * 1e3);
  kvl_set_num(L, "p50", s.p50 * 1e3);
  kvl_set_num(L, "p90", s.p90 * 1e3);
  kvl_set_num(L, "p99", s.p99 * 1e3);
  kvl_set_num(L, "max", s.max * 1e3);
}

/* sim:summary() -> the run's figures (names after vLLM's metrics) */
static int sim_summary(lua_State *L) {
  simbox *b = check_sim(L);
  const kvp_sim *s = &b->s;
  lua_createtable(L, 0, 20);
  kvl_set_int(L, "requests", s->n);
  kvl_set_int(L, "steps", s->nsteps);
  kvl_set_int(L, "num_preemptions", s->preemptions);
  kvl_set_int(L, "num_swaps", s->swaps);
  kvl_set_int(L, "prompt_tokens", s->prompt_tokens);
  kvl_set_int(L, "output_tokens", s->output_tokens);
  kvl_set_int(L, "recomputed_tokens", s->recomputed_tokens);
  kvl_set_int(L, "prefix_cache_hits", s->cached_tokens);
  kvl_set_int(L, "kv_pool_bytes", s->pool_bytes);
  kvl_set_int(L, "kv_block_bytes", s->block_bytes);
  kvl_set_int(L, "kv_peak_bytes", s->peak_bytes);
  kvl_set_num(L, "duration_s", s->duration);
  kvl_set_num(L, "throughput_tokens_s", s->throughput);
  kvl_set_num(L, "requests_s", s->requests_s);
  lua_createtable(L, 0, 2);
  kvl_set_num(L, "mean", s->usage_mean);
  kvl_set_num(L, "peak", s->usage_peak);
  lua_setfield(L, -2, "kv_cache_usage_perc");
  push_summary(L, s->ttft, s->n, "a request's TTFT");
  lua_setfield(L, -2, "ttft_ms");
  push_summary(L, s->tpot, s->n, "a request's TPOT");
  lua_setfield(L, -2, "tpot_ms");
  push_summary(L, s->e2e, s->n, "a request's E2E latency");
  lua_setfield(L, -2, "e2e_ms");
  int64_t most = 0;
  for (int64_t i = 0; i < s->n; i++) most = s->npreempt[i] > most ? s->npreempt[i] : most;
  kvl_set_int(L, "max_preemptions_per_request", most);
  /* the admitted batch: the most requests running in one step (each step's
   * count after it was scheduled, as the timeline's running column) */
  int64_t peak = 0;
  for (int64_t k = 0; k < s->nsteps; k++) peak = s->steps[k].running > peak ? s->steps[k].running : peak;
  kvl_set_int(L, "running_peak", peak);
  return 1;
}

/* sim:means() -> throughput_tokens_s, ttft_ms.mean, tpot_ms.mean: the
 * figures sim:summary() gives, the same numbers, without its percentiles
 * (no copy, no sort: what kv.calibrate's fit reads of each run);
 * sim:means(k): the same of spec.alternatives[k] when its run is this
 * run (kvp_sim_alt), else nil */
static int sim_means(lua_State *L) {
  simbox *b = check_sim(L);
  const kvp_sim *s = &b->s;
  if (!lua_isnoneornil(L, 2)) {
    /* sim:means(k): alternative k's (spec.alternatives), nil when its run is not this one */
    lua_Integer k = luaL_checkinteger(L, 2);
    if (k < 1 || k > b->nalts)
      return kvl_error(L, "alternative %I: the run has %I", k, (lua_Integer)b->nalts);
    const kvp_sim_alt *a = &b->alt[k - 1];
    if (!a->same) {
      lua_pushnil(L);
      return 1;
    }
    lua_pushnumber(L, s->throughput);
    lua_pushnumber(L, a->ttft_mean * 1e3);
    lua_pushnumber(L, a->tpot_mean * 1e3);
    return 3;
  }
  lua_pushnumber(L, s->throughput);
  lua_pushnumber(L, kvp_mean_of(s->ttft, s->n) * 1e3);
  lua_pushnumber(L, kvp_mean_of(s->tpot, s->n) * 1e3);
  return 3;
}

/* sim:timeline(path): one CSV row per step */
static int sim_timeline(lua_State *L) {
  simbox *b = check_sim(L);
  const char *path = kvl_path_arg(L, 2, 1);
  char err[512];
  kvl_check_file(L, path, "w");
  kvp_csv *w = kvp_csv_open(path, err, sizeof err);
  if (w == NULL) return kvl_error(L, "%s", err);
  static const char *const head[] = {
    "step", "start_s", "step_ms", "running", "waiting", "kv_blocks_used", "kv_cache_usage_perc",
    "tokens", "prefill_tokens", "preempted", "bound"
  };
  for (size_t i = 0; i < sizeof head / sizeof head[0]; i++) kvp_csv_raw(w, head[i], strlen(head[i]));
  kvp_csv_endrow(w);
  const kvp_sim *s = &b->s;
  for (int64_t k = 0; k < s->nsteps; k++) {
    const kvp_sim_step *st = &s->steps[k];
    kvp_csv_int(w, k + 1);
    kvp_csv_fixed(w, st->start, 6);
    kvp_csv_fixed(w, st->seconds * 1e3, 4);
    kvp_csv_int(w, st->running);
    kvp_csv_int(w, st->waiting);
    kvp_csv_int(w, s->block_bytes > 0 ? st->used_bytes / s->block_bytes : 0);
    kvp_csv_fixed(w, s->pool_bytes > 0 ? (double)st->used_bytes / (double)s->pool_bytes : 0.0, 4);
    kvp_csv_int(w, st->tokens);
    kvp_csv_int(w, st->prefill_tokens);
    kvp_csv_int(w, st->preempted);
    kvp_csv_raw(w, st->compute_bound ? "compute" : "memory", st->compute_bound ? 7 : 6);
    kvp_csv_endrow(w);
  }
  if (kvp_csv_close(w, err, sizeof err) < 0) return kvl_error(L, "%s", err);
  lua_pushinteger(L, (lua_Integer)s->nsteps);
  return 1;
}

/* sim:goodput(ttft_ms, tpot_ms, e2e_ms) -> met, miss_ttft, miss_tpot,
 * miss_e2e: requests within every target, and missing each (nil or 0: no
 * target) */
static int sim_goodput(lua_State *L) {
  simbox *b = check_sim(L);
  double t[3];
  for (int i = 0; i < 3; i++) {
    t[i] = luaL_optnumber(L, i + 2, 0.0);
    if (!(t[i] >= 0.0 && isfinite(t[i])))
      return kvl_error(L, "a goodput target must be a number of milliseconds >= 0, got %f", kvp_shown(t[i]));
  }
  kvp_goodput g;
  kvp_sim_goodput(&b->s, t[0] / 1e3, t[1] / 1e3, t[2] / 1e3, &g);
  lua_pushinteger(L, (lua_Integer)g.met);
  lua_pushinteger(L, (lua_Integer)g.miss_ttft);
  lua_pushinteger(L, (lua_Integer)g.miss_tpot);
  lua_pushinteger(L, (lua_Integer)g.miss_e2e);
  return 4;
}

static const luaL_Reg sim_meth[] = {
  {"summary", sim_summary}, {"means", sim_means}, {"timeline", sim_timeline},
  {"goodput", sim_goodput}, {NULL, NULL}
};

static const luaL_Reg funcs[] = {
  {"time", l_time}, {"run", l_run}, {NULL, NULL}
};

int luaopen_kvplan_sim_core(lua_State *L) {
  kvl_new_class(L, SIM_MT, sim_meth, sim_gc);
  luaL_newlib(L, funcs);
  return 1;
}
