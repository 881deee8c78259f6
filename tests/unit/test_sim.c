/* test_sim.c: the serving simulator: a hand-computed case and invariants. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"
#include "core.h"

#define GiB 1073741824LL

/* One layer, one head of 8: 32 bytes a token in bf16; block 2 (64 bytes);
 * 1000 parameters (2000 bytes); `blocks` blocks in the pool besides the
 * null block. Bandwidth 1 GB/s and 1 TFLOP/s: every step memory-bound. */
static void tiny_prefix(kvp_ledger *l, kvp_cost *c, int64_t blocks, int64_t prefix) {
  kvp_deploy d;
  kvp_deploy_defaults(&d);
  d.prefix = prefix;
  assert_int_equal(kvp_model_init(&d.model, 1, 64, 1, 1, 8, NULL), KVP_OK);
  d.model.params = d.model.active = 1000;
  d.block = 2;
  d.utilization = 1.0;
  d.gpu_bytes = 2000 + (blocks + 1) * 64;
  assert_int_equal(kvp_ledger_eval(&d, l, NULL), KVP_OK);
  assert_int_equal(l->stage[0].blocks, blocks + 1);
  kvp_perf p = {.hbm_gbps = 1, .tflops = 1, .mem_eff = 1, .flop_eff = 1, .link_eff = 1};
  assert_int_equal(kvp_cost_init(c, l, &p, NULL), KVP_OK);
}

static void tiny(kvp_ledger *l, kvp_cost *c, int64_t blocks) { tiny_prefix(l, c, blocks, 0); }

static kvp_sim_config config(int64_t seqs, int64_t tokens) {
  return (kvp_sim_config){.sched = KVP_SCHED_CONTINUOUS, .max_num_seqs = seqs,
                          .max_num_batched_tokens = tokens, .seed = 1};
}

/* A (prompt 3, output 4), B (3, 4), C (2, 1), all at 0; 5 blocks of 2
 * tokens; 4 tokens a step. Step by step (blocks after scheduling):
 *   1  A prefill 3 (2 blk), B chunk 1 (1)             tokens 4, used 3; A's 1st token
 *   2  A decode, B prefill 2 (+1), C chunk 1 (1)      tokens 4, used 5; B's 1st token
 *   3  A needs a 3rd block, none free: C (newest) is
 *      preempted; A decode, B decode                  tokens 2, used 5
 *   4  B needs a 3rd block: preempting the newest
 *      preempts B itself; A decode alone              tokens 1, used 3; A done
 *   5  B recomputes 3 + 2 tokens: chunk of 4 (2 blk)  tokens 4, used 2
 *   6  B last recomputed token (3 blk), C prefill 2   tokens 3, used 4; C done
 *   7  B decode                                       tokens 1, used 3; B done */
static void hand_computed_case_matches_step_by_step_preemption_included(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  tiny(&l, &c, 5);
  kvp_request req[3] = {{0, 3, 4}, {0, 3, 4}, {0, 2, 1}};
  kvp_sim_config cfg = config(4, 4);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, NULL), KVP_OK);
  assert_int_equal(s.nsteps, 7);
  assert_int_equal(s.pool_bytes, 5 * 64);
  const int64_t tokens[7] = {4, 4, 2, 1, 4, 3, 1};
  const int64_t used[7] = {3, 5, 5, 3, 2, 4, 3};
  const int64_t running[7] = {2, 3, 2, 1, 1, 2, 1};
  const int64_t waiting[7] = {1, 0, 1, 2, 1, 0, 0};
  const int64_t preempted[7] = {0, 0, 1, 1, 0, 0, 0};
  for (int i = 0; i < 7; i++) {
    assert_int_equal(s.steps[i].tokens, tokens[i]);
    assert_int_equal(s.steps[i].used_bytes, used[i] * 64);
    assert_int_equal(s.steps[i].running, running[i]);
    assert_int_equal(s.steps[i].waiting, waiting[i]);
    assert_int_equal(s.steps[i].preempted, preempted[i]);
    assert_false(s.steps[i].compute_bound);
  }
  assert_int_equal(s.preemptions, 2);
  assert_int_equal(s.recomputed_tokens, 1 + 4); /* C's 1, B's 3 + 1 */
  assert_int_equal(s.npreempt[0], 0);
  assert_int_equal(s.npreempt[1], 1);
  assert_int_equal(s.npreempt[2], 1);
  assert_int_equal(s.output_tokens, 9);
  /* step 1: 2000 weight bytes + 4 tokens x 32 bytes written, nothing read,
   * at 1e9 bytes/s: A's first token */
  assert_true(fabs(s.steps[0].seconds - 2128e-9) < 1e-18);
  assert_true(fabs(s.ttft[0] - 2128e-9) < 1e-18);
  /* step 2 reads A's 3 tokens and B's 1: 2000 + 4 x 32 + 4 x 32 */
  assert_true(fabs(s.steps[1].seconds - 2256e-9) < 1e-18);
  assert_true(fabs(s.ttft[1] - (2128e-9 + 2256e-9)) < 1e-18);
  /* A finishes with step 4, C with step 6, B with step 7 (the end) */
  double t4 = 0, t6 = 0, t7 = 0;
  for (int i = 0; i < 7; i++) {
    t7 += s.steps[i].seconds;
    if (i < 4) t4 += s.steps[i].seconds;
    if (i < 6) t6 += s.steps[i].seconds;
  }
  assert_true(fabs(s.e2e[0] - t4) < 1e-18);
  assert_true(fabs(s.e2e[2] - t6) < 1e-18);
  assert_true(fabs(s.e2e[1] - t7) < 1e-18);
  assert_true(fabs(s.duration - t7) < 1e-18);
  assert_true(fabs(s.usage_peak - 1.0) < 1e-12);
  kvp_sim_free(&s);
}

/* The fixed costs of the step time in a simulation, hand-counted: the
 * tiny model at 1 GB/s with 10 kernels a step (4 GEMMs, 1 attention, 5
 * others) of at least 1.1 us each, CUDA graphs of up to 4 tokens (vLLM V1's
 * sizes) replayed at 1 us of host time a kernel, 5 us eager. Three prompts
 * of 2 tokens, 3 outputs each, all at once:
 *   step 1  the three prompts, 6 tokens > 4: eager. GEMMs max(2000 bytes =
 *           2 us, 4 x 1.1) = 4.4 us, attention 1.1 us (its bytes 0.26 us),
 *           the others 5 x 1.1 = 5.5 us, host 10 x 5 = 50 us: 61 us
 *   steps 2, 3  three decodes, a graph of 4 (3 padded to 4): 4.4 + 1.1 +
 *           5.5 + 10 x 1 = 21 us each */
static void fixed_costs_of_the_steps_hand_counted(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  tiny(&l, &c, 20);
  kvp_perf p = {.hbm_gbps = 1, .tflops = 1, .mem_eff = 1, .flop_eff = 1, .link_eff = 1,
                .kernels = 10, .gemm_kernels = 4, .attn_kernels = 1, .kernel_floor_us = 1.1,
                .launch_us = 1, .eager_launch_us = 5, .graphs = KVP_GRAPHS_TOKENS,
                .graph_max = 4};
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_request req[3] = {{0, 2, 3}, {0, 2, 3}, {0, 2, 3}};
  kvp_sim_config cfg = config(4, 8);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, NULL), KVP_OK);
  assert_int_equal(s.nsteps, 3);
  const int64_t tokens[3] = {6, 3, 3};
  const double secs[3] = {61e-6, 21e-6, 21e-6};
  for (int i = 0; i < 3; i++) {
    assert_int_equal(s.steps[i].tokens, tokens[i]);
    assert_true(fabs(s.steps[i].seconds - secs[i]) < 1e-12);
  }
  for (int i = 0; i < 3; i++) {
    assert_true(fabs(s.ttft[i] - 61e-6) < 1e-12);
    assert_true(fabs(s.e2e[i] - 103e-6) < 1e-12);
  }
  assert_true(fabs(s.throughput - 9 / 103e-6) < 1e-6);
  kvp_sim_free(&s);
}

/* vLLM V0's max_seq_len_to_capture, hand-counted: the tiny model's costs
 * above with V0's decode graphs (graph_max 4) and graph_seq_max 8192. One
 * request of prompt 8191 and 3 outputs:
 *   step 1  the prompt (eager)
 *   step 2  decode at 8191 computed tokens: its sequence 8192 with the token
 *           it decodes, not above 8192: a graph. GEMMs 4.4 us, attention
 *           (8191 tokens read + 1 written) x 32 bytes = 262.144 us, the others
 *           5.5 us, host 10 x 1 us: 282.044 us
 *   step 3  at 8192 computed: sequence 8193 > 8192, eager. 4.4 + 8193 x 32
 *           bytes = 262.176 us + 5.5 + host 10 x 5 us = 322.076 us
 * (vllm/worker/model_runner.py _use_captured_graph: max_decode_seq_len <=
 * max_seq_len_to_capture). Without the limit step 3 is a graph: 282.076 us. */
static void v0_decode_longer_than_max_seq_len_to_capture_runs_eager(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 1, 64, 1, 1, 8, NULL), KVP_OK);
  d.model.params = d.model.active = 1000;
  d.model.max_context = 16384;
  d.block = 2;
  d.utilization = 1.0;
  d.gpu_bytes = 2000 + (8192 + 1) * 64;
  kvp_ledger l;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  kvp_perf p = {.hbm_gbps = 1, .tflops = 1, .mem_eff = 1, .flop_eff = 1, .link_eff = 1,
                .kernels = 10, .gemm_kernels = 4, .attn_kernels = 1, .kernel_floor_us = 1.1,
                .launch_us = 1, .eager_launch_us = 5, .graphs = KVP_GRAPHS_DECODE,
                .graph_max = 4, .graph_seq_max = 8192};
  kvp_cost c;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_request req[1] = {{0, 8191, 3}};
  kvp_sim_config cfg = config(4, 8192);
  kvp_sim s;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 1, &s, NULL), KVP_OK);
  assert_int_equal(s.nsteps, 3);
  assert_int_equal(s.steps[0].tokens, 8191);
  assert_true(fabs(s.steps[1].seconds - 282.044e-6) < 1e-12);
  assert_true(fabs(s.steps[2].seconds - 322.076e-6) < 1e-12);
  kvp_sim_free(&s);
  /* no limit (graph_seq_max 0): step 3 replays its graph */
  p.graph_seq_max = 0;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 1, &s, NULL), KVP_OK);
  assert_true(fabs(s.steps[2].seconds - 282.076e-6) < 1e-12);
  kvp_sim_free(&s);
  /* a negative limit is refused, by name */
  p.graph_seq_max = -1;
  kvp_diag diag = {{0}};
  assert_int_equal(kvp_cost_init(&c, &l, &p, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "graph_seq_max"));
}

/* 8B-like model, one 80 GiB GPU, H100 rates, efficiencies as given */
static void llama8b(kvp_ledger *l, kvp_cost *c, int64_t gpu_gib, kvp_alloc alloc) {
  kvp_deploy d;
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 32, 4096, 32, 8, 128, NULL), KVP_OK);
  d.model.params = d.model.active = 8000000000LL;
  d.model.max_context = 8192;
  d.gpu_bytes = gpu_gib * GiB;
  d.alloc = alloc;
  assert_int_equal(kvp_ledger_eval(&d, l, NULL), KVP_OK);
  kvp_perf p = {.hbm_gbps = 3350, .tflops = 989.5, .link_gbps = 900, .mem_eff = 0.8,
                .flop_eff = 0.7, .link_eff = 0.8};
  assert_int_equal(kvp_cost_init(c, l, &p, NULL), KVP_OK);
}

static void chat(kvp_request *req, int64_t n, double rate, uint64_t seed) {
  kvp_dist prompt = {.kind = KVP_DIST_LOGNORMAL, .lo = 1, .hi = 4096, .mu = log(1000.0), .sigma = 0.6};
  kvp_dist output = {.kind = KVP_DIST_LOGNORMAL, .lo = 1, .hi = 2048, .mu = log(250.0), .sigma = 0.6};
  assert_int_equal(kvp_workload_make(&prompt, &output, n, rate, seed, req, NULL), KVP_OK);
}

static void invariants_hold_on_a_chat_workload_under_pressure(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  llama8b(&l, &c, 20, KVP_ALLOC_PAGED); /* a small pool: preemptions happen */
  enum { N = 3000 };
  kvp_request *req = malloc(N * sizeof *req);
  chat(req, N, 0.0, 7);
  kvp_sim_config cfg = config(256, 2048);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, N, &s, NULL), KVP_OK);
  assert_true(s.preemptions > 0);
  int64_t out = 0;
  for (int64_t i = 0; i < N; i++) {
    out += req[i].output;
    assert_true(s.e2e[i] > 0 && s.ttft[i] > 0 && s.ttft[i] <= s.e2e[i]); /* every one finished */
  }
  assert_int_equal(s.output_tokens, out);
  for (int64_t k = 0; k < s.nsteps; k++) {
    assert_true(s.steps[k].used_bytes <= s.pool_bytes);
    assert_true(s.steps[k].used_bytes >= 0);
    assert_true(s.steps[k].tokens <= 2048 && s.steps[k].running <= 256);
  }
  assert_true(s.usage_peak <= 1.0 && s.usage_mean > 0.5);
  /* the same seed: the same run, step for step */
  kvp_sim s2;
  kvp_request *req2 = malloc(N * sizeof *req2);
  chat(req2, N, 0.0, 7);
  assert_memory_equal(req, req2, N * sizeof *req);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req2, N, &s2, NULL), KVP_OK);
  assert_int_equal(s.nsteps, s2.nsteps);
  assert_memory_equal(s.steps, s2.steps, (size_t)s.nsteps * sizeof *s.steps);
  assert_memory_equal(s.e2e, s2.e2e, N * sizeof *s.e2e);
  kvp_sim_free(&s2);
  /* a different seed: a different workload */
  chat(req2, N, 0.0, 8);
  assert_true(memcmp(req, req2, N * sizeof *req) != 0);
  kvp_sim_free(&s);
  free(req);
  free(req2);
}

static void no_preemption_when_the_pool_holds_every_request_at_its_longest(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  llama8b(&l, &c, 80, KVP_ALLOC_PAGED);
  enum { N = 200 };
  kvp_request req[N];
  chat(req, N, 0.0, 3);
  int64_t need = 0;
  for (int i = 0; i < N; i++) {
    int64_t b;
    assert_int_equal(kvp_ledger_seq_bytes(&l, 0, req[i].prompt + req[i].output, &b), KVP_OK);
    need += b;
  }
  kvp_sim_config cfg = config(N, 8192);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, N, &s, NULL), KVP_OK);
  assert_true(need <= s.pool_bytes);
  assert_int_equal(s.preemptions, 0);
  assert_int_equal(s.recomputed_tokens, 0);
  kvp_sim_free(&s);
}

static void static_batching_never_beats_continuous(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  enum { N = 1000 };
  kvp_request *req = malloc(N * sizeof *req);
  const double rates[3] = {0.0, 5.0, 50.0};
  const int64_t gib[2] = {24, 80};
  for (int g = 0; g < 2; g++) {
    llama8b(&l, &c, gib[g], KVP_ALLOC_PAGED);
    for (int r = 0; r < 3; r++) {
      chat(req, N, rates[r], 11);
      kvp_sim cont, stat;
      kvp_sim_config cfg = config(256, 8192);
      assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, N, &cont, NULL), KVP_OK);
      cfg.sched = KVP_SCHED_STATIC;
      assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, N, &stat, NULL), KVP_OK);
      assert_int_equal(stat.preemptions, 0);
      assert_int_equal(stat.output_tokens, cont.output_tokens);
      assert_true(stat.throughput <= cont.throughput);
      assert_true(stat.duration >= cont.duration);
      kvp_sim_free(&cont);
      kvp_sim_free(&stat);
    }
  }
  free(req);
}

static void no_evict_admits_only_what_it_can_finish(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  llama8b(&l, &c, 20, KVP_ALLOC_PAGED);
  enum { N = 2000 };
  kvp_request *req = malloc(N * sizeof *req);
  chat(req, N, 0.0, 7);
  kvp_sim_config cfg = config(256, 2048);
  cfg.sched = KVP_SCHED_NO_EVICT;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, N, &s, NULL), KVP_OK);
  assert_int_equal(s.preemptions, 0);
  int64_t out = 0;
  for (int64_t i = 0; i < N; i++) out += req[i].output;
  assert_int_equal(s.output_tokens, out);
  for (int64_t k = 0; k < s.nsteps; k++) assert_true(s.steps[k].used_bytes <= s.pool_bytes);
  assert_string_equal(kvp_sched_name(KVP_SCHED_NO_EVICT), "no_evict");
  kvp_sim_free(&s);
  free(req);
}

static void contiguous_allocation_reserves_and_never_preempts(void **state) {
  (void)state;
  kvp_ledger lp, lc;
  kvp_cost cp, cc;
  kvp_sim sp, sc;
  llama8b(&lp, &cp, 24, KVP_ALLOC_PAGED);
  llama8b(&lc, &cc, 24, KVP_ALLOC_CONTIGUOUS);
  enum { N = 500 };
  kvp_request req[N];
  chat(req, N, 0.0, 5);
  kvp_sim_config cfg = config(256, 8192);
  assert_int_equal(kvp_sim_run(&lp, &cp, &cfg, req, N, &sp, NULL), KVP_OK);
  assert_int_equal(kvp_sim_run(&lc, &cc, &cfg, req, N, &sc, NULL), KVP_OK);
  assert_int_equal(sc.preemptions, 0);
  /* 8192 tokens reserved a request: far fewer run at once than paged */
  int64_t most_c = 0, most_p = 0;
  for (int64_t k = 0; k < sc.nsteps; k++) most_c = sc.steps[k].running > most_c ? sc.steps[k].running : most_c;
  for (int64_t k = 0; k < sp.nsteps; k++) most_p = sp.steps[k].running > most_p ? sp.steps[k].running : most_p;
  assert_true(most_c * 8192 * 131072LL <= sc.pool_bytes);
  assert_true(most_p > 2 * most_c);
  assert_true(sp.throughput > sc.throughput);
  kvp_sim_free(&sp);
  kvp_sim_free(&sc);
}

static void swap_keeps_computed_tokens_and_pays_the_transfer(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim rec, swp;
  tiny(&l, &c, 5);
  kvp_request req[3] = {{0, 3, 4}, {0, 3, 4}, {0, 2, 1}};
  kvp_sim_config cfg = config(4, 4);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &rec, NULL), KVP_OK);
  cfg.host_bytes = 1 << 20;
  cfg.pcie_gbps = 64;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &swp, NULL), KVP_OK);
  assert_int_equal(swp.preemptions, rec.preemptions);
  assert_int_equal(swp.swaps, 2);
  assert_int_equal(swp.recomputed_tokens, 0);
  assert_true(swp.nsteps < rec.nsteps);
  assert_int_equal(swp.output_tokens, 9);
  kvp_sim_free(&rec);
  kvp_sim_free(&swp);
}

static void speculative_decoding_takes_fewer_steps_for_the_same_tokens(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim base, spec;
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 32, 4096, 32, 8, 128, NULL), KVP_OK);
  d.model.params = d.model.active = 8000000000LL;
  d.model.max_context = 8192;
  d.gpu_bytes = 80 * GiB;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  kvp_perf p = {.hbm_gbps = 3350, .tflops = 989.5, .mem_eff = 1, .flop_eff = 1, .link_eff = 1,
                .acceptance = 0.7};
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  enum { N = 64 };
  kvp_request req[N];
  chat(req, N, 0.0, 9);
  kvp_sim_config cfg = config(256, 8192);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, N, &base, NULL), KVP_OK);
  d.spec.tokens = 3;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, N, &spec, NULL), KVP_OK);
  assert_int_equal(spec.output_tokens, base.output_tokens);
  /* E = (1 - 0.7^4) / 0.3 = 2.53 tokens a step */
  assert_true(spec.nsteps * 2 < base.nsteps);
  assert_true(spec.duration < base.duration);
  kvp_sim_free(&base);
  kvp_sim_free(&spec);
}

static void bad_workloads_are_clear_errors_never_a_hang(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  kvp_diag d = {{0}};
  tiny(&l, &c, 5);
  kvp_sim_config cfg = config(4, 4);
  kvp_request zero[1] = {{0, 0, 4}};
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, zero, 1, &s, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "request 1: prompt and output must be >= 1 token, got 0 and 4");
  kvp_request neg[2] = {{0, 2, 2}, {0, 2, -3}};
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, neg, 2, &s, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "request 2"));
  /* 11 tokens take 6 blocks, the pool has 5 */
  kvp_request big[1] = {{0, 8, 4}};
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, big, 1, &s, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "request 1 cannot be served: 11 tokens need 384 bytes of KV per "
                             "GPU, the whole pool holds 320");
  /* the caller's stop flag ends the run before its next step (--timeout) */
  volatile sig_atomic_t stop = 1;
  cfg.stop = &stop;
  kvp_request two[2] = {{0, 2, 2}, {0, 2, 2}};
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, two, 2, &s, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "the simulation was stopped after 0 steps (0 of 2 requests done)");
  stop = 0;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, two, 2, &s, NULL), KVP_OK);
  kvp_sim_free(&s);
  cfg.stop = NULL;
  kvp_request late[1] = {{NAN, 2, 2}};
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, late, 1, &s, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "arrival"));
  kvp_dist fixed = {.kind = KVP_DIST_FIXED, .lo = 10};
  kvp_request r[2];
  assert_int_equal(kvp_workload_make(&fixed, &fixed, 2, -1.0, 1, r, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "'rate' must be a number > 0"));
  /* a positive rate so small the arrivals pass the largest double (rate=1e-320
   * said "request 1: arrival must be a time >= 0 s, got inf") */
  assert_int_equal(kvp_workload_make(&fixed, &fixed, 2, 1e-320, 1, r, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "field 'rate' = 9.99989e-321: the arrival of request 1 is past the largest "
                                "double (expected requests a second)"));
  kvp_dist bad = {.kind = KVP_DIST_FIXED, .lo = 0};
  assert_int_equal(kvp_workload_make(&bad, &fixed, 2, 0.0, 1, r, &d), KVP_EINVAL);
  assert_int_equal(kvp_workload_make(&fixed, &fixed, 0, 0.0, 1, r, &d), KVP_EINVAL);
  /* a step bound too small: an error, not a hang */
  kvp_request ok[3] = {{0, 3, 4}, {0, 3, 4}, {0, 2, 1}};
  cfg.max_steps = 3;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, ok, 3, &s, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "the simulation did not finish within 3 steps (0 of 3 requests done)");
}

/* Finite step-time inputs whose steps take no finite time are an error naming
 * them (perf.tflops = 1e-320 gave a NaN TTFT p50 in kvplan simulate, and
 * step_overhead_ms = 1e308 on llama-3.1-8b a KV usage of inf: 1e9 bytes x
 * 1e305 s): the tiny deployment at 1 GB/s and 1e-320 TFLOP/s */
static void step_times_past_the_largest_double_are_errors(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  kvp_diag d = {{0}};
  tiny(&l, &c, 5);
  kvp_perf p = {.hbm_gbps = 1, .tflops = 1e-320, .mem_eff = 1, .flop_eff = 1, .link_eff = 1};
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_sim_config cfg = config(4, 4);
  kvp_request req[1] = {{0, 3, 4}};
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 1, &s, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "step 1 takes inf s: the run passes the largest double (expected "
                             "step-time inputs of finite times: hbm_gbps 1 x 1, tflops 1e-320 x 1, "
                             "step_overhead_ms 0, launch_us 0, seq_host_us 0, loop_host_us 0, "
                             "index_tflops 0, gemm_tile_m 0)");
  /* issue 18's inputs named too: a tile of 1e308 rows (its FLOPs inf at a
   * finite rate), and an NCCL curve's smallest busbw where one is given
   * (core review 2026-12-04) */
  p.tflops = 1, p.gemm_tile_m = 1e308;
  p.nccl_points = 2, p.nccl_bytes[0] = 1, p.nccl_bytes[1] = 2;
  p.nccl_busbw[0] = 7, p.nccl_busbw[1] = 3;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 1, &s, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "index_tflops 0, gemm_tile_m 1e+308, nccl_busbw from 3 GB/s)"));
  p.gemm_tile_m = 0, p.nccl_points = 0;
  /* 1e308 ms a step: 1e305 s, four steps and their usage (192 bytes x 1e305
   * s at most) finite: runs */
  p.tflops = 1;
  p.step_overhead_ms = 1e308;
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 1, &s, &d), KVP_OK);
  assert_true(isfinite(s.usage_mean) && s.duration > 1e305);
  kvp_sim_free(&s);
}

/* A prefix of 5 tokens: its 2 whole blocks (4 tokens) are cached once, out
 * of the pool; requests of 7-token prompts compute 3 tokens each, and a
 * 3-token prompt keeps its last token to compute (only 1 whole block hit). */
static void a_shared_prefix_is_cached_once_and_not_recomputed(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  tiny_prefix(&l, &c, 10, 5);
  kvp_request req[3] = {{0, 7, 2}, {0, 7, 2}, {0, 3, 1}};
  kvp_sim_config cfg = config(8, 64);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, NULL), KVP_OK);
  assert_int_equal(s.pool_bytes, 8 * 64); /* 10 usable blocks less the prefix's 2 */
  assert_int_equal(s.cached_tokens, 4 + 4 + 2);
  /* step 1: 3 + 3 + 1 prompt tokens; each 7-token request holds blocks 3 and 4 */
  assert_int_equal(s.steps[0].tokens, 7);
  assert_int_equal(s.steps[0].prefill_tokens, 7);
  assert_int_equal(s.steps[0].used_bytes, (2 + 2 + 1) * 64);
  assert_int_equal(s.nsteps, 2);
  assert_int_equal(s.output_tokens, 5);
  kvp_sim_free(&s);
}

/* A client holding one request in flight: they run one after another, and
 * each one's latencies count from when it was sent, not queued. */
/* One in flight: the engine is idle when the client sends the next request,
 * so it runs at once. */
static void a_client_max_concurrency_sends_the_next_when_one_finishes(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  tiny(&l, &c, 5);
  kvp_request req[3] = {{0, 3, 2}, {0, 3, 2}, {0, 3, 2}};
  kvp_sim_config cfg = config(4, 4);
  cfg.max_concurrency = 1;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, NULL), KVP_OK);
  assert_int_equal(s.nsteps, 6); /* a prefill and a decode each */
  for (int64_t k = 0; k < s.nsteps; k++) {
    assert_int_equal(s.steps[k].running, 1);
    assert_int_equal(s.steps[k].waiting, 0);
  }
  /* the same prefill, the same time to first token */
  assert_true(fabs(s.ttft[0] - s.ttft[1]) < 1e-15 && fabs(s.ttft[1] - s.ttft[2]) < 1e-15);
  assert_true(fabs(s.e2e[2] - (s.steps[4].seconds + s.steps[5].seconds)) < 1e-15);
  kvp_sim_free(&s);
  /* two in flight: A (output 1) finishes with step 1, when B still runs; the
   * client sends C then, after step 2 has begun: C is prefilled in step 3
   * and its time to first token is steps 2 and 3 */
  kvp_request three[3] = {{0, 3, 1}, {0, 3, 4}, {0, 3, 1}};
  kvp_sim_config two = config(4, 16);
  two.max_concurrency = 2;
  tiny(&l, &c, 50);
  assert_int_equal(kvp_sim_run(&l, &c, &two, three, 3, &s, NULL), KVP_OK);
  assert_int_equal(s.steps[0].tokens, 6); /* A and B prefill */
  assert_int_equal(s.steps[1].tokens, 1); /* B decodes; C is on its way */
  assert_int_equal(s.steps[1].waiting, 0);
  assert_int_equal(s.steps[2].tokens, 4); /* C prefills beside B's decode */
  assert_true(fabs(s.ttft[2] - (s.steps[1].seconds + s.steps[2].seconds)) < 1e-15);
  assert_true(fabs(s.e2e[0] - s.steps[0].seconds) < 1e-15);
  kvp_sim_free(&s);
  kvp_diag d = {{0}};
  cfg.max_concurrency = -1;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "field 'max_concurrency' must be an integer >= 0, got -1");
}

/* vLLM's scheduler tests' setting (tests/v1/core/utils.py create_scheduler):
 * blocks of `block` tokens, `blocks` of them besides the null block, the tiny
 * model's 32 bytes a token. */
static void tiny_blocks(kvp_ledger *l, kvp_cost *c, int64_t blocks, int64_t block) {
  kvp_deploy d;
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 1, 64, 1, 1, 8, NULL), KVP_OK);
  d.model.params = d.model.active = 1000;
  d.block = block;
  d.utilization = 1.0;
  d.gpu_bytes = 2000 + (blocks + 1) * block * 32;
  assert_int_equal(kvp_ledger_eval(&d, l, NULL), KVP_OK);
  assert_int_equal(l->stage[0].blocks, blocks + 1);
  kvp_perf p = {.hbm_gbps = 1, .tflops = 1, .mem_eff = 1, .flop_eff = 1, .link_eff = 1};
  assert_int_equal(kvp_cost_init(c, l, &p, NULL), KVP_OK);
}

/* vLLM's own scheduler tests, tests/v1/core/test_scheduler.py at
 * vllm-project/vllm 619e4b31da77, each case as the test sets it up (block 16,
 * 10000 blocks, max_num_seqs 16, 8192 tokens unless the test says otherwise;
 * create_requests' prompts arrive at once). */

/* test_schedule: 10 prompts of 10 tokens are all scheduled in the first
 * step, each its whole prompt; none waits. */
static void vllm_test_schedule(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  tiny_blocks(&l, &c, 10000, 16);
  kvp_request req[10];
  for (int i = 0; i < 10; i++) req[i] = (kvp_request){0, 10, 16};
  kvp_sim_config cfg = config(16, 8192);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 10, &s, NULL), KVP_OK);
  assert_int_equal(s.steps[0].tokens, 100);
  assert_int_equal(s.steps[0].prefill_tokens, 100);
  assert_int_equal(s.steps[0].running, 10);
  assert_int_equal(s.steps[0].waiting, 0);
  assert_int_equal(s.steps[1].tokens, 10); /* then every request decodes */
  assert_int_equal(s.nsteps, 16);
  kvp_sim_free(&s);
}

/* test_schedule_concurrent_partial_requests: max_num_batched_tokens 1024,
 * long_prefill_token_threshold 400, three prompts of 800. Step 1: 400, 400,
 * 1024 - 800 = 224; step 2 the same; step 3: the first two decode (1 + 1)
 * and the third gets its last 800 - 224 - 224 = 352; step 4: three decodes.
 * Without the threshold step 1 would be 800 + 224 and step 2 1 + 576 + 447. */
static void vllm_test_schedule_concurrent_partial_requests(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  tiny_blocks(&l, &c, 10000, 16);
  kvp_request req[3] = {{0, 800, 16}, {0, 800, 16}, {0, 800, 16}};
  kvp_sim_config cfg = config(16, 1024);
  cfg.long_prefill_token_threshold = 400;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, NULL), KVP_OK);
  const int64_t tokens[4] = {1024, 1024, 354, 3}, prefill[4] = {1024, 1024, 352, 0};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(s.steps[i].tokens, tokens[i]);
    assert_int_equal(s.steps[i].prefill_tokens, prefill[i]);
    assert_int_equal(s.steps[i].running, 3);
  }
  /* the first two sample their first token with step 2, the third with 3 */
  const double t2 = s.steps[0].seconds + s.steps[1].seconds, t3 = t2 + s.steps[2].seconds;
  assert_true(fabs(s.ttft[0] - t2) < 1e-15);
  assert_true(fabs(s.ttft[1] - t2) < 1e-15);
  assert_true(fabs(s.ttft[2] - t3) < 1e-15);
  kvp_sim_free(&s);
  /* a threshold at or above every request's tokens changes nothing */
  kvp_sim b;
  cfg.long_prefill_token_threshold = 0;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, NULL), KVP_OK);
  assert_int_equal(s.steps[0].tokens, 1024);
  assert_int_equal(s.steps[1].tokens, 1 + 576 + 447);
  cfg.long_prefill_token_threshold = 800;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &b, NULL), KVP_OK);
  assert_int_equal(b.nsteps, s.nsteps);
  for (int64_t i = 0; i < s.nsteps; i++) assert_int_equal(b.steps[i].tokens, s.steps[i].tokens);
  kvp_sim_free(&b);
  kvp_sim_free(&s);
  /* vLLM's alone: another scheduler is an error, so is a negative one */
  kvp_diag d = {{0}};
  cfg.long_prefill_token_threshold = 400;
  cfg.sched = KVP_SCHED_NO_EVICT;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "long_prefill_token_threshold"));
  cfg.sched = KVP_SCHED_CONTINUOUS;
  cfg.long_prefill_token_threshold = -1;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, &d), KVP_EINVAL);
}

/* test_schedule_order (chunked prefill on): max_num_seqs 3, 1024 tokens,
 * prompts of 800, 800, 10, 10: the first step schedules the two long ones
 * (800 + 224 chunked), the short ones wait. */
static void vllm_test_schedule_order(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  tiny_blocks(&l, &c, 10000, 16);
  kvp_request req[4] = {{0, 800, 16}, {0, 800, 16}, {0, 10, 16}, {0, 10, 16}};
  kvp_sim_config cfg = config(3, 1024);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 4, &s, NULL), KVP_OK);
  assert_int_equal(s.steps[0].tokens, 1024);
  assert_int_equal(s.steps[0].running, 2);
  assert_int_equal(s.steps[0].waiting, 2);
  kvp_sim_free(&s);
}

/* test_kv_connector_unable_to_allocate without the connector's 8 matched
 * tokens: blocks of 4, 10 blocks (9 besides the null block), two prompts of
 * 24 tokens (6 blocks each), 2 outputs. One runs, one waits until the first
 * has finished and freed its blocks; then it runs alone:
 *   1  A 24 (6 blk); B needs 6 of 3 free: waits      running 1, waiting 1
 *   2  A decode (7 blk), its 2nd token: done         running 1, waiting 1
 *   3  B 24 (6 blk)                                  running 1, waiting 0
 *   4  B decode: done; every block free again */
static void vllm_test_unable_to_allocate_without_connector(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  tiny_blocks(&l, &c, 9, 4);
  kvp_request req[2] = {{0, 24, 2}, {0, 24, 2}};
  kvp_sim_config cfg = config(16, 8192);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 2, &s, NULL), KVP_OK);
  assert_int_equal(s.nsteps, 4);
  const int64_t tokens[4] = {24, 1, 24, 1}, waiting[4] = {1, 1, 0, 0};
  const int64_t used[4] = {6, 7, 6, 7};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(s.steps[i].tokens, tokens[i]);
    assert_int_equal(s.steps[i].running, 1);
    assert_int_equal(s.steps[i].waiting, waiting[i]);
    assert_int_equal(s.steps[i].used_bytes, used[i] * 4 * 32);
  }
  assert_int_equal(s.preemptions, 0);
  kvp_sim_free(&s);
}

/* test_kv_connector_handles_preemption without the connector: blocks of 2,
 * 7 blocks (6 besides the null block), two prompts of 5 tokens, 4 outputs:
 *   1  A 5 (3 blk), B 5 (3 blk)                      running 2, waiting 0
 *   2  A, B decode (6 tokens: 3 blk each)            running 2, waiting 0
 *   3  A needs a 4th block, none free: B (newest) is
 *      preempted, A decodes                          running 1, waiting 1
 *   4  A decodes its last token; B needs its 5 + 2
 *      tokens' 4 blocks of 2 free: waits             running 1, waiting 1
 *   5  B recomputes 7 tokens (4 blk)                 running 1, waiting 0
 *   6  B decodes its last token
 * vLLM's steps 1-4 expect the same running and waiting counts; its step 5
 * schedules 1 token, B's blocks found again by prefix caching and the
 * connector, which kvplan does not model (a preempted request recomputes). */
static void vllm_test_handles_preemption_without_connector(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  tiny_blocks(&l, &c, 6, 2);
  kvp_request req[2] = {{0, 5, 4}, {0, 5, 4}};
  kvp_sim_config cfg = config(16, 8192);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 2, &s, NULL), KVP_OK);
  assert_int_equal(s.nsteps, 6);
  const int64_t tokens[6] = {10, 2, 1, 1, 7, 1};
  const int64_t running[6] = {2, 2, 1, 1, 1, 1}, waiting[6] = {0, 0, 1, 1, 0, 0};
  const int64_t preempted[6] = {0, 0, 1, 0, 0, 0};
  for (int i = 0; i < 6; i++) {
    assert_int_equal(s.steps[i].tokens, tokens[i]);
    assert_int_equal(s.steps[i].running, running[i]);
    assert_int_equal(s.steps[i].waiting, waiting[i]);
    assert_int_equal(s.steps[i].preempted, preempted[i]);
  }
  assert_int_equal(s.recomputed_tokens, 6); /* B's 5 prompt tokens and its 1st output */
  kvp_sim_free(&s);
}

static void percentiles_interpolate_between_ranks(void **state) {
  (void)state;
  double v[6] = {5, 1, 4, -1, 2, 3};
  kvp_summary s;
  kvp_summarize(v, 6, &s);
  assert_int_equal(s.count, 5);
  assert_true(s.mean == 3.0 && s.p50 == 3.0 && s.max == 5.0);
  assert_true(fabs(s.p90 - 4.6) < 1e-12);
  assert_true(fabs(s.p99 - 4.96) < 1e-12);
}

/* Four requests' latencies against targets, hand-counted: TTFT 0.1 s
 * misses 2 and 3; TPOT 0.02 s misses 1 (request 3 has one output token:
 * no TPOT); E2E 1 s misses 3. Met: request 0 alone. */
static void goodput_counts_the_requests_within_every_target(void **state) {
  (void)state;
  double ttft[4] = {0.05, 0.1, 0.2, 0.3}, tpot[4] = {0.01, 0.03, 0.02, -1}, e2e[4] = {0.5, 1, 0.9, 2};
  kvp_sim s = {.n = 4, .ttft = ttft, .tpot = tpot, .e2e = e2e};
  kvp_goodput g;
  kvp_sim_goodput(&s, 0.1, 0.02, 1.0, &g);
  assert_int_equal(g.met, 1);
  assert_int_equal(g.miss_ttft, 2);
  assert_int_equal(g.miss_tpot, 1);
  assert_int_equal(g.miss_e2e, 1);
  kvp_sim_goodput(&s, 0.1, 0, NAN, &g); /* TTFT alone */
  assert_int_equal(g.met, 2);
  assert_int_equal(g.miss_tpot + g.miss_e2e, 0);
  kvp_sim_goodput(&s, -1, INFINITY, 0, &g); /* no target: all met */
  assert_int_equal(g.met, 4);
}

/* SGLang's scheduler on a pool of 12 tokens (block 1, 32 bytes a token):
 * chunked_prefill_size 4, max_prefill_tokens 16, new_token_ratio from 0.5
 * down to 0.25 by 0.25 a decode step, retract_decode_steps 1. A (prompt 2,
 * output 6), B (5, 2), C (2, 5), all at 0. Step by step (tokens held after
 * scheduling; "avail" the pool's free tokens, "offset" the ratio x the
 * output the running requests have left plus what the batch took):
 *   1  prefill A 2 (an idle engine takes the first); B: 5 + 2 = 7 >= 12 -
 *      (2 + 6) = 4: no token. Used 2; A's 1st token
 *   2  prefill: offset 0.5 x 5 = 2.5 for A, avail 10; B: 7 < 7.5, its 5
 *      prompt tokens exceed the chunk of 4: chunk 4 (A not decoded: a step
 *      is a prefill or a decode). Used 6
 *   3  prefill: B's last chunk, 1 token (min(4, int(6 - 2.5))); offset 2.5 +
 *      1 + 2 = 5.5; C: 7 >= 6 - 5.5: no token, batch full. Used 7; B's 1st
 *   4  batch full: decode A and B (ratio 0.25). Used 9; B done (6 freed)
 *   5  a request left: prefill C (2 + 5 = 7 < 9 - 0.25 x 4). Used 5
 *   6-8 decode A and C. Used 7, 9, 11
 *   9  decode needs 2 tokens, 1 free: retract C (fewest outputs: 4 against
 *      A's 5), its 5 tokens freed, to the queue's back; ratio (5 + 1) / 6 =
 *      1; decode A alone. Used 7; A done
 *  10  prefill C again: prompt and 4 outputs, 6 tokens, chunk 4. Used 4
 *  11  C's last chunk, 2 tokens: its 5th output. Used 6; C done */
static void sglang_prefill_and_decode_batches_hand_counted(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 1, 64, 1, 1, 8, NULL), KVP_OK);
  d.model.params = d.model.active = 1000;
  d.block = 1;
  d.utilization = 1.0;
  d.gpu_bytes = 2000 + 13 * 32;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  assert_int_equal(kvp_ledger_eval(&d, &l, NULL), KVP_OK);
  kvp_perf p = {.hbm_gbps = 1, .tflops = 1, .mem_eff = 1, .flop_eff = 1, .link_eff = 1};
  assert_int_equal(kvp_cost_init(&c, &l, &p, NULL), KVP_OK);
  kvp_request req[3] = {{0, 2, 6}, {0, 5, 2}, {0, 2, 5}};
  kvp_sim_config cfg = {.sched = KVP_SCHED_SGLANG, .max_num_seqs = 8,
                        .max_num_batched_tokens = 4, .seed = 1, .max_prefill_tokens = 16,
                        .clip_max_new_tokens = 4096, .retract_decode_steps = 1,
                        .init_new_token_ratio = 0.5, .min_new_token_ratio = 0.25,
                        .new_token_ratio_decay = 0.25};
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, NULL), KVP_OK);
  assert_int_equal(s.pool_bytes, 12 * 32);
  assert_int_equal(s.nsteps, 11);
  const int64_t tokens[11] = {2, 4, 1, 2, 2, 2, 2, 2, 1, 4, 2};
  const int64_t prefill[11] = {2, 4, 1, 0, 2, 0, 0, 0, 0, 4, 2};
  const int64_t used[11] = {2, 6, 7, 9, 5, 7, 9, 11, 7, 4, 6};
  const int64_t running[11] = {1, 1, 2, 2, 2, 2, 2, 2, 1, 0, 1};
  const int64_t waiting[11] = {2, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0};
  for (int i = 0; i < 11; i++) {
    assert_int_equal(s.steps[i].tokens, tokens[i]);
    assert_int_equal(s.steps[i].prefill_tokens, prefill[i]);
    assert_int_equal(s.steps[i].used_bytes, used[i] * 32);
    assert_int_equal(s.steps[i].running, running[i]);
    assert_int_equal(s.steps[i].waiting, waiting[i]);
    assert_int_equal(s.steps[i].preempted, i == 8);
  }
  assert_int_equal(s.preemptions, 1);
  assert_int_equal(s.npreempt[2], 1);
  assert_int_equal(s.recomputed_tokens, 5);
  assert_int_equal(s.output_tokens, 13);
  /* B's first token after steps 1-3, its last after step 4; C's at the end */
  double t3 = s.steps[0].seconds + s.steps[1].seconds + s.steps[2].seconds;
  assert_true(fabs(s.ttft[1] - t3) < 1e-18);
  assert_true(fabs(s.e2e[1] - (t3 + s.steps[3].seconds)) < 1e-18);
  assert_true(fabs(s.e2e[2] - s.duration) < 1e-18);
  kvp_sim_free(&s);
  /* swap is not SGLang's; a bad ratio is named */
  cfg.host_bytes = 1024;
  cfg.pcie_gbps = 1;
  kvp_diag diag = {{0}};
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "does not swap"));
  cfg.host_bytes = 0;
  cfg.min_new_token_ratio = 0.75;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "min 0.75, init 0.5"));
}

/* SGLang's scheduler on a chat workload under pressure: every request
 * finishes, the pool and max_running_requests hold, and a step is a prefill
 * or a decode, never both. */
static void sglang_invariants_on_a_chat_workload(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  llama8b(&l, &c, 20, KVP_ALLOC_PAGED);
  enum { N = 2000 };
  kvp_request *req = malloc(N * sizeof *req);
  chat(req, N, 0.0, 7);
  kvp_sim_config cfg = {.sched = KVP_SCHED_SGLANG, .max_num_seqs = 128,
                        .max_num_batched_tokens = 2048, .seed = 1, .max_prefill_tokens = 16384,
                        .clip_max_new_tokens = 4096, .retract_decode_steps = 20,
                        .init_new_token_ratio = 0.7, .min_new_token_ratio = 0.098,
                        .new_token_ratio_decay = 0.001};
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, N, &s, NULL), KVP_OK);
  int64_t out = 0;
  for (int64_t i = 0; i < N; i++) {
    out += req[i].output;
    assert_true(s.e2e[i] > 0 && s.ttft[i] > 0 && s.ttft[i] <= s.e2e[i]);
  }
  assert_int_equal(s.output_tokens, out);
  for (int64_t k = 0; k < s.nsteps; k++) {
    const kvp_sim_step *st = &s.steps[k];
    assert_true(st->used_bytes <= s.pool_bytes && st->used_bytes >= 0);
    assert_true(st->running <= 128);
    assert_true(st->prefill_tokens == 0 || st->prefill_tokens == st->tokens);
    assert_true(st->prefill_tokens <= 2048);
  }
  kvp_sim_free(&s);
  free(req);
}

/* Disaggregated prefill (phase prefill): A (prompt 3, output 4) and B (3, 4)
 * at 0, 5 blocks of 2 tokens, 4 tokens a step, the KV's move 1 us. Each
 * leaves at its first token:
 *   1  A prefill 3, B chunk 1: writes 4 tokens, reads none: 2000 + 128 ns;
 *      A's first token, A leaves
 *   2  B's last 2 prompt tokens: writes 2, reads B's 1: 2000 + 64 + 32 ns;
 *      B's first token, B leaves
 * ttft = its first token + 1 us, e2e the same, no tpot. */
static void prefill_phase_leaves_at_the_first_token_and_adds_the_transfer(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  tiny(&l, &c, 5);
  kvp_request req[2] = {{0, 3, 4}, {0, 3, 4}};
  kvp_sim_config cfg = config(4, 4);
  cfg.phase = KVP_PHASE_PREFILL;
  cfg.kv_transfer_s = 1e-6;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 2, &s, NULL), KVP_OK);
  assert_int_equal(s.nsteps, 2);
  assert_int_equal(s.steps[0].tokens, 4);
  assert_int_equal(s.steps[0].prefill_tokens, 4);
  assert_int_equal(s.steps[0].used_bytes, 3 * 64);
  assert_int_equal(s.steps[1].tokens, 2);
  assert_int_equal(s.steps[1].running, 1);
  assert_true(fabs(s.steps[0].seconds - 2128e-9) < 1e-18);
  assert_true(fabs(s.steps[1].seconds - 2096e-9) < 1e-18);
  assert_true(fabs(s.ttft[0] - (2128e-9 + 1e-6)) < 1e-15);
  assert_true(fabs(s.ttft[1] - (2128e-9 + 2096e-9 + 1e-6)) < 1e-15);
  assert_true(fabs(s.e2e[1] - s.ttft[1]) < 1e-18);
  assert_true(s.tpot[0] < 0 && s.tpot[1] < 0);
  assert_int_equal(s.output_tokens, 2);
  assert_int_equal(s.prompt_tokens, 6);
  assert_true(fabs(s.duration - (2128e-9 + 2096e-9)) < 1e-18);
  kvp_sim_free(&s);
}

/* The client's time a request (request_s, sim.lua request_ms): A (prompt 3,
 * output 1) and B (prompt 3, output 2), both sent at 0, 5 ms of client time:
 *   1  A's 3 prompt tokens and B's first: writes 4 tokens: 2000 + 128 ns;
 *      A's first token, A leaves
 *   2  B's last 2 prompt tokens: writes 2, reads B's 1: 2000 + 64 + 32 ns;
 *      B's first token
 *   3  B's decode: writes 1, reads 3: 2000 + 32 + 96 ns; B leaves
 * A: ttft = e2e = 2128 ns + 5 ms; B: ttft = 2128 + 2096 ns + 5 ms, e2e adds
 * the 2128 ns of step 3, tpot (e2e - ttft) / 1 = 2128 ns, unmoved by the
 * client's time, as are the steps and the duration. Negative or non-finite
 * is an error, and so is a client time on a disaggregated pool. */
static void client_time_adds_to_ttft_and_e2e_only(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  tiny(&l, &c, 5);
  kvp_request req[2] = {{0, 3, 1}, {0, 3, 2}};
  kvp_sim_config cfg = config(4, 4);
  cfg.request_s = 0.005;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 2, &s, NULL), KVP_OK);
  assert_int_equal(s.nsteps, 3);
  assert_true(fabs(s.steps[0].seconds - 2128e-9) < 1e-18);
  assert_true(fabs(s.steps[1].seconds - 2096e-9) < 1e-18);
  assert_true(fabs(s.steps[2].seconds - 2128e-9) < 1e-18);
  assert_true(fabs(s.ttft[0] - (2128e-9 + 0.005)) < 1e-15);
  assert_true(fabs(s.e2e[0] - s.ttft[0]) < 1e-18);
  assert_true(s.tpot[0] < 0);
  assert_true(fabs(s.ttft[1] - (2128e-9 + 2096e-9 + 0.005)) < 1e-15);
  assert_true(fabs(s.e2e[1] - (2128e-9 + 2096e-9 + 2128e-9 + 0.005)) < 1e-15);
  assert_true(fabs(s.tpot[1] - 2128e-9) < 1e-15);
  assert_true(fabs(s.duration - (2128e-9 + 2096e-9 + 2128e-9)) < 1e-18);
  kvp_sim_free(&s);
  kvp_diag d = {{0}};
  cfg.request_s = -0.001;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 2, &s, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "request_s"));
  cfg.request_s = NAN;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 2, &s, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "request_s"));
  cfg.request_s = 0.005;
  cfg.phase = KVP_PHASE_PREFILL;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 2, &s, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "disaggregated"));
}

/* The API server's serial work (api_s, sim.lua api_ms): A, B, C (prompt 1,
 * output 1 each) all sent at 0, 10 ms of API-server work a request, one
 * FIFO server: A reaches the engine at 10 ms, B at 20, C at 30. The engine
 * is idle in between, so each runs alone: writes 1 token, 2000 + 32 ns.
 *   step 1 at 10 ms: A's first token; step 2 at 20 ms: B's; step 3 at 30 ms: C's
 * TTFT (from 0, the wait included): 10, 20, 30 ms + 2032 ns each; e2e the
 * same (one token). Without the API server (api_s 0) the three share one
 * step of 3 tokens, 2000 + 96 ns, TTFT 2096 ns each.
 * With max_concurrency 1: B is sent when A finishes (10 ms + 2032 ns) and
 * waits its own 10 ms there: every TTFT 10 ms + 2032 ns from its send, the
 * last step starting at 3 x (10 ms + 2032 ns) - 2032 ns.
 * Negative or non-finite is an error, and so is an API server on a
 * disaggregated pool. */
static void api_server_queues_requests_fifo_in_front_of_the_engine(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  tiny(&l, &c, 5);
  kvp_request req[3] = {{0, 1, 1}, {0, 1, 1}, {0, 1, 1}};
  kvp_sim_config cfg = config(4, 4);
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, NULL), KVP_OK);
  assert_int_equal(s.nsteps, 1);
  for (int i = 0; i < 3; i++) assert_true(fabs(s.ttft[i] - 2096e-9) < 1e-15);
  kvp_sim_free(&s);
  cfg.api_s = 0.010;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, NULL), KVP_OK);
  assert_int_equal(s.nsteps, 3);
  for (int i = 0; i < 3; i++) {
    assert_true(fabs(s.steps[i].start - 0.010 * (i + 1)) < 1e-15);
    assert_true(fabs(s.steps[i].seconds - 2032e-9) < 1e-18);
    assert_int_equal(s.steps[i].tokens, 1);
    assert_true(fabs(s.ttft[i] - (0.010 * (i + 1) + 2032e-9)) < 1e-15);
    assert_true(fabs(s.e2e[i] - s.ttft[i]) < 1e-18);
  }
  assert_true(fabs(s.duration - (0.030 + 2032e-9)) < 1e-15);
  kvp_sim_free(&s);
  cfg.max_concurrency = 1;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, NULL), KVP_OK);
  assert_int_equal(s.nsteps, 3);
  for (int i = 0; i < 3; i++) assert_true(fabs(s.ttft[i] - (0.010 + 2032e-9)) < 1e-15);
  assert_true(fabs(s.steps[2].start - (3 * (0.010 + 2032e-9) - 2032e-9)) < 1e-15);
  kvp_sim_free(&s);
  kvp_diag d = {{0}};
  cfg.api_s = -0.001;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "api_s"));
  cfg.api_s = NAN;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "api_s"));
  /* a finite api_s whose queue passes the largest double: the field's error,
   * not "step 2 takes ... s: the run passes the largest double (expected
   * step-time inputs ...)" naming the GPU's rates (core review 2026-12-04) */
  cfg.api_s = 1e308;
  d.msg[0] = '\0';
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "field 'api_s' = 1e+308 s"));
  assert_non_null(strstr(d.msg, "request 2"));
  cfg.api_s = 0.010;
  cfg.max_concurrency = 0;
  cfg.phase = KVP_PHASE_PREFILL;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 3, &s, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "disaggregated"));
}

/* Disaggregated decode (phase decode): A (prompt 3, output 3) and B (2, 2)
 * sent at 0, their KV 1 us on the way; 5 blocks of 2 tokens:
 *   1  (at 1 us) both admitted with their prompts computed: A holds 4
 *      tokens' blocks (2), B 3 tokens' (2); two decodes: writes 2 tokens,
 *      reads 3 + 2: 2000 + 64 + 160 ns. B's second token: B done
 *   2  A decode, 5 tokens (3 blocks): writes 1, reads 4: 2000 + 32 + 128 ns;
 *      A done
 * No prompt token is computed; latencies from 1 us: A ttft (its second
 * token) 2224 ns, tpot (2224 + 2160) / 2 ns, e2e 4384 ns; B 2224 ns each. */
static void decode_phase_holds_the_prompt_without_computing_it(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  tiny(&l, &c, 5);
  kvp_request req[2] = {{0, 3, 3}, {0, 2, 2}};
  kvp_sim_config cfg = config(4, 4);
  cfg.phase = KVP_PHASE_DECODE;
  cfg.kv_transfer_s = 1e-6;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, 2, &s, NULL), KVP_OK);
  assert_int_equal(s.nsteps, 2);
  assert_true(fabs(s.steps[0].start - 1e-6) < 1e-18);
  assert_int_equal(s.steps[0].tokens, 2);
  assert_int_equal(s.steps[0].prefill_tokens, 0);
  assert_int_equal(s.steps[0].used_bytes, 4 * 64);
  assert_int_equal(s.steps[1].tokens, 1);
  assert_int_equal(s.steps[1].prefill_tokens, 0);
  assert_int_equal(s.steps[1].used_bytes, 3 * 64);
  assert_true(fabs(s.steps[0].seconds - 2224e-9) < 1e-18);
  assert_true(fabs(s.steps[1].seconds - 2160e-9) < 1e-18);
  assert_true(fabs(s.ttft[0] - 2224e-9) < 1e-15);
  assert_true(fabs(s.tpot[0] - 2192e-9) < 1e-15);
  assert_true(fabs(s.e2e[0] - 4384e-9) < 1e-15);
  assert_true(fabs(s.ttft[1] - 2224e-9) < 1e-15);
  assert_true(fabs(s.tpot[1] - 2224e-9) < 1e-15);
  assert_int_equal(s.output_tokens, 5);
  assert_int_equal(s.recomputed_tokens, 0);
  assert_true(fabs(s.duration - (1e-6 + 4384e-9)) < 1e-15);
  kvp_sim_free(&s);
  /* one output token: it came from the prefill instance, done on arrival */
  kvp_request one[2] = {{0, 3, 1}, {0, 2, 2}};
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, one, 2, &s, NULL), KVP_OK);
  assert_int_equal(s.nsteps, 1);
  assert_true(s.e2e[0] == 0.0 && s.ttft[0] == 0.0 && s.tpot[0] < 0);
  assert_int_equal(s.output_tokens, 3);
  kvp_sim_free(&s);
  kvp_request only[1] = {{0, 3, 1}};
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, only, 1, &s, NULL), KVP_OK);
  assert_int_equal(s.nsteps, 0);
  kvp_sim_free(&s);
}

/* A chat workload on an 8B-like model: the decode pool computes one token
 * a request a decode step and no prompt while nobody is preempted (a pool
 * of 80 GiB), Σ (output - 1) tokens in all; the prefill pool computes every
 * prompt token once and one output token a request. Bad phases are errors. */
static void disaggregated_phases_split_the_work_of_a_chat_workload(void **state) {
  (void)state;
  kvp_ledger l;
  kvp_cost c;
  kvp_sim s;
  llama8b(&l, &c, 80, KVP_ALLOC_PAGED);
  enum { N = 300 };
  kvp_request req[N];
  chat(req, N, 20.0, 5);
  int64_t prompts = 0, decodes = 0;
  for (int i = 0; i < N; i++) {
    prompts += req[i].prompt;
    decodes += req[i].output - 1;
  }
  kvp_sim_config cfg = config(256, 2048);
  cfg.phase = KVP_PHASE_DECODE;
  cfg.kv_transfer_s = 0.002;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, N, &s, NULL), KVP_OK);
  assert_int_equal(s.preemptions, 0);
  int64_t tokens = 0, prefill = 0;
  for (int64_t k = 0; k < s.nsteps; k++) {
    tokens += s.steps[k].tokens;
    prefill += s.steps[k].prefill_tokens;
    assert_true(s.steps[k].start >= 0.002);
  }
  assert_int_equal(tokens, decodes);
  assert_int_equal(prefill, 0);
  for (int i = 0; i < N; i++) assert_true(s.e2e[i] >= 0 && s.ttft[i] <= s.e2e[i]);
  kvp_sim_free(&s);
  cfg.phase = KVP_PHASE_PREFILL;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, N, &s, NULL), KVP_OK);
  tokens = prefill = 0;
  for (int64_t k = 0; k < s.nsteps; k++) {
    tokens += s.steps[k].tokens;
    prefill += s.steps[k].prefill_tokens;
  }
  assert_int_equal(tokens, prompts);
  assert_int_equal(prefill, prompts);
  assert_int_equal(s.output_tokens, N);
  for (int i = 0; i < N; i++) {
    assert_true(s.ttft[i] >= 0.002 && s.e2e[i] == s.ttft[i] && s.tpot[i] < 0);
  }
  kvp_sim_free(&s);
  kvp_diag d = {{0}};
  cfg.kv_transfer_s = -1;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, N, &s, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "kv_transfer_s"));
  cfg.phase = KVP_PHASE_BOTH;
  cfg.kv_transfer_s = 0.001;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, N, &s, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "phase"));
  cfg.phase = KVP_PHASE_DECODE;
  cfg.sched = KVP_SCHED_SGLANG;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, N, &s, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "sglang"));
  cfg.sched = KVP_SCHED_CONTINUOUS;
  cfg.phase = (kvp_phase)7;
  assert_int_equal(kvp_sim_run(&l, &c, &cfg, req, N, &s, &d), KVP_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(hand_computed_case_matches_step_by_step_preemption_included),
    cmocka_unit_test(fixed_costs_of_the_steps_hand_counted),
    cmocka_unit_test(v0_decode_longer_than_max_seq_len_to_capture_runs_eager),
    cmocka_unit_test(invariants_hold_on_a_chat_workload_under_pressure),
    cmocka_unit_test(no_preemption_when_the_pool_holds_every_request_at_its_longest),
    cmocka_unit_test(static_batching_never_beats_continuous),
    cmocka_unit_test(no_evict_admits_only_what_it_can_finish),
    cmocka_unit_test(contiguous_allocation_reserves_and_never_preempts),
    cmocka_unit_test(swap_keeps_computed_tokens_and_pays_the_transfer),
    cmocka_unit_test(speculative_decoding_takes_fewer_steps_for_the_same_tokens),
    cmocka_unit_test(bad_workloads_are_clear_errors_never_a_hang),
    cmocka_unit_test(step_times_past_the_largest_double_are_errors),
    cmocka_unit_test(a_shared_prefix_is_cached_once_and_not_recomputed),
    cmocka_unit_test(a_client_max_concurrency_sends_the_next_when_one_finishes),
    cmocka_unit_test(vllm_test_schedule),
    cmocka_unit_test(vllm_test_schedule_concurrent_partial_requests),
    cmocka_unit_test(vllm_test_schedule_order),
    cmocka_unit_test(vllm_test_unable_to_allocate_without_connector),
    cmocka_unit_test(vllm_test_handles_preemption_without_connector),
    cmocka_unit_test(percentiles_interpolate_between_ranks),
    cmocka_unit_test(goodput_counts_the_requests_within_every_target),
    cmocka_unit_test(sglang_prefill_and_decode_batches_hand_counted),
    cmocka_unit_test(sglang_invariants_on_a_chat_workload),
    cmocka_unit_test(prefill_phase_leaves_at_the_first_token_and_adds_the_transfer),
    cmocka_unit_test(client_time_adds_to_ttft_and_e2e_only),
    cmocka_unit_test(api_server_queues_requests_fifo_in_front_of_the_engine),
    cmocka_unit_test(decode_phase_holds_the_prompt_without_computing_it),
    cmocka_unit_test(disaggregated_phases_split_the_work_of_a_chat_workload),
  };
  return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
