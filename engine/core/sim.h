/*
 * sim.h: a serving simulator of one instance (the TP x PP group as one
 * unit), step by step as vLLM's V1 scheduler schedules (sim.c).
 * Pure computation: no Lua, no I/O. Included by kvplan.h.
 */
#ifndef KVP_SIM_H
#define KVP_SIM_H

#include <signal.h> /* sig_atomic_t: the stop flag's type */
#include <stdint.h>

typedef enum kvp_sched {
  KVP_SCHED_CONTINUOUS = 0, /* iteration-level: requests join and leave at every step */
  KVP_SCHED_STATIC,         /* a batch is admitted when the last one has finished */
  KVP_SCHED_NO_EVICT,       /* continuous, but a request is admitted only when the KV of
                             * its whole length fits, so none is ever preempted
                             * (TensorRT-LLM's default GUARANTEED_NO_EVICT) */
  KVP_SCHED_SGLANG,         /* SGLang's scheduler: a step is a prefill batch or a decode
                             * batch; admission by its PrefillAdder, which reserves
                             * new_token_ratio of each running request's remaining
                             * output; decode retracts on a full pool (sim.c) */
  KVP_NSCHEDS
} kvp_sched;

/* Which part of serving one instance does (disaggregated prefill/decode:
 * a prefill pool and a decode pool, each its own instances; sim.c). */
typedef enum kvp_phase {
  KVP_PHASE_BOTH = 0, /* aggregated: each request's prefill and its decode */
  KVP_PHASE_PREFILL,  /* a prefill instance: a request computes its prompt, samples its
                       * first token and leaves (its KV goes to a decode instance);
                       * ttft and e2e add kv_transfer_s, tpot is not measured (-1) */
  KVP_PHASE_DECODE,   /* a decode instance: a request arrives with its prompt's KV and
                       * its first token from a prefill instance, kv_transfer_s after
                       * its arrival; admitted, it holds its prompt's blocks without
                       * computing them and decodes tokens 2.. of its output.
                       * Latencies count from when its KV arrived: ttft to its first
                       * decode step's token (its second), tpot (finish - KV arrival) /
                       * (output - 1), the wait for its first decode step included; a
                       * request of one output token is done on arrival */
  KVP_NPHASES
} kvp_phase;


/* One request of a workload. */
typedef struct kvp_request {
  double arrival;   /* seconds from the start */
  int64_t prompt;   /* prompt tokens (>= 1) */
  int64_t output;   /* tokens to generate (>= 1), all of them (no early stop) */
} kvp_request;

/* n requests with prompt and output lengths drawn from the two
 * distributions by one generator seeded with `seed` (prompt, then output,
 * then the arrival gap, request after request); rate > 0: Poisson arrivals
 * at `rate` requests a second (exponential gaps), rate == 0: all at time 0
 * (a negative or non-finite rate is an error). */
kvp_err kvp_workload_make(const kvp_dist *prompt, const kvp_dist *output, int64_t n, double rate,
                          uint64_t seed, kvp_request *out, kvp_diag *d);

typedef struct kvp_sim_config {
  kvp_sched sched;
  int64_t max_num_seqs;            /* running requests at most */
  int64_t max_num_batched_tokens;  /* tokens scheduled in one step */
  int64_t host_bytes;              /* host memory per GPU for preempted KV (0: recompute) */
  double pcie_gbps;                /* host link, total bidirectional GB/s (swap) */
  uint64_t seed;                   /* speculative decoding: acceptance draws */
  int64_t max_steps;               /* 0: a bound derived from the workload */
  int64_t max_concurrency;         /* a client that keeps at most this many requests in
                                    * flight, sending the next when one finishes (vLLM's
                                    * benchmark --max-concurrency); 0: no limit. Latencies
                                    * count from when a request is sent */
  /* KVP_SCHED_SGLANG only (0 for the others): max_num_batched_tokens is its
   * chunked_prefill_size, max_num_seqs its max_running_requests */
  int64_t max_prefill_tokens;      /* tokens of one prefill batch (--max-prefill-tokens) */
  int64_t clip_max_new_tokens;     /* the estimate of a request's output is clipped here */
  int64_t retract_decode_steps;    /* decode steps a retraction makes room for */
  double init_new_token_ratio;     /* share of the remaining output reserved, at the start */
  double min_new_token_ratio;      /* ... at least */
  double new_token_ratio_decay;    /* ... less each decode step without retraction */
  /* A flag the caller may set at any time (a timer or signal handler: the
   * command line's --timeout); the run reads it before every step and, set,
   * ends with KVP_EINVAL and a message, its output freed. NULL: none. */
  const volatile sig_atomic_t *stop;
  kvp_phase phase;                 /* KVP_PHASE_BOTH unless disaggregated */
  double kv_transfer_s;            /* KVP_PHASE_PREFILL or _DECODE: seconds one request's
                                    * KV takes from the prefill to the decode instance
                                    * (>= 0; 0 under KVP_PHASE_BOTH) */
  double request_s;                /* KVP_PHASE_BOTH: seconds a request spends outside the
                                    * engine's steps as its client measures it (the API
                                    * server's HTTP, tokenization, the first detokenization
                                    * and stream chunk): every ttft and e2e adds it, nothing
                                    * else moves (>= 0; 0 under a disaggregated phase) */
  double api_s;                    /* KVP_PHASE_BOTH: seconds of serial API-server work a
                                    * request (vLLM's API server is one asyncio process:
                                    * HTTP, tokenization, request setup), one FIFO server:
                                    * a request sent at t starts it at max(t, the previous
                                    * request's finish) and reaches the engine's waiting
                                    * queue when it ends (at the first step boundary from
                                    * then); its latencies still count from t. 0: none,
                                    * the request reaches the engine when sent (>= 0; 0
                                    * under a disaggregated phase) */
  int64_t long_prefill_token_threshold; /* KVP_SCHED_CONTINUOUS: the tokens one request is
                                    * given in a step at most, before the budget cuts them
                                    * (vLLM's --long-prefill-token-threshold; 0: no cap,
                                    * vLLM's default with max_num_partial_prefills 1) */
  /* Alternatives (nalts of them, NULL: none): the same run at other costs
   * (kvp_sim_alt), each reported the same as this run or not. */
  struct kvp_sim_alt *alts;
  int64_t nalts;
} kvp_sim_config;

/* An alternative of a run: the same ledger and configuration at another
 * cost c (other factors of the step time) and another client time
 * request_s. kvp_sim_run sets `same` when the alternative's run is this
 * run step for step, and then its latencies' means, without running it:
 * a cost that equals the run's in every field but the host time's
 * (kvp_cost host_seq, host_step, host_step_eager, host_piece and the perf
 * fields they come from), and whose step times (kvp_step_time_memo, the
 * draft passes and the swap with it) equal the run's at every step of the
 * run. The scheduler reads the cost only through those step times and the
 * fields compared, so such a run takes the same steps in the same order;
 * request_s moves only the latencies (results). Otherwise same is 0 and
 * the alternative's figures are its own run's. */
typedef struct kvp_sim_alt {
  const struct kvp_cost *c;   /* in: its cost, of the run's ledger */
  double request_s;           /* in: its client time (kvp_sim_config.request_s) */
  int same;                   /* out: 1 when its run is this run's */
  double ttft_mean, tpot_mean; /* out, when same: kvp_mean_of its ttft and tpot (seconds),
                               * what its own run's would be */
} kvp_sim_alt;

/* One row of the timeline. */
typedef struct kvp_sim_step {
  double start, seconds;
  int64_t running, waiting;   /* after the step was scheduled */
  int64_t used_bytes;         /* KV bytes held on one GPU of the tightest stage */
  int64_t tokens;             /* tokens processed */
  int64_t prefill_tokens;     /* of which prompt (or recomputed) tokens */
  int64_t preempted;          /* requests preempted while scheduling it */
  int compute_bound;
} kvp_sim_step;

typedef struct kvp_sim {
  int64_t n;                  /* requests */
  double *ttft, *e2e, *tpot;  /* per request, seconds from when it was sent; tpot < 0
                               * when output == 1 */
  int64_t *npreempt;          /* per request */
  kvp_sim_step *steps;
  int64_t nsteps, cap;
  int64_t pool_bytes;         /* KV bytes requests may hold (a shared prefix set aside) */
  int64_t block_bytes;        /* one block of the pool (paged) */
  int64_t peak_bytes;
  int64_t preemptions, swaps;
  int64_t prompt_tokens, output_tokens, recomputed_tokens;
  int64_t cached_tokens;       /* prompt tokens the shared prefix's cache served */
  double duration;            /* until the last request finished */
  double usage_mean, usage_peak; /* time-weighted mean and peak of used / pool */
  double throughput;          /* output tokens per second */
  double requests_s;
} kvp_sim;

/* Simulate the requests on an evaluated ledger that fits, with step times
 * from c. A request that can never be served (longer than max_model_len, or
 * more KV than the whole pool) is an error naming it; so is a run that does
 * not end within max_steps. On success the caller frees out with
 * kvp_sim_free; on failure nothing is left allocated. */
kvp_err kvp_sim_run(const kvp_ledger *l, const kvp_cost *c, const kvp_sim_config *cfg,
                    const kvp_request *req, int64_t n, kvp_sim *out, kvp_diag *d);
void kvp_sim_free(kvp_sim *s);

/* Mean and percentiles of the n values v (ignoring negative ones), sorted
 * in place: linear interpolation between closest ranks (numpy's default,
 * as vLLM's benchmark reports them). All 0 when no value counts. */
typedef struct kvp_summary {
  double mean, p50, p90, p99, max;
  int64_t count;
} kvp_summary;

void kvp_summarize(double *v, int64_t n, kvp_summary *out);

/* kvp_summarize's mean of the n values v alone (the same sum in the same
 * order; 0 when no value counts), v unchanged and not sorted. */
double kvp_mean_of(const double *v, int64_t n);

/* Requests of a finished simulation against latency targets (seconds; a
 * target <= 0 or not finite is no target): how many meet every target and
 * how many miss each. met / n is DistServe's SLO attainment, the share of
 * requests within all their latency targets (its goodput is the highest
 * rate at which that share holds: Zhong et al., "DistServe", OSDI 2024).
 * A request of one output token has no TPOT and meets a TPOT target. */
typedef struct kvp_goodput {
  int64_t met, miss_ttft, miss_tpot, miss_e2e;
} kvp_goodput;

void kvp_sim_goodput(const kvp_sim *s, double ttft, double tpot, double e2e, kvp_goodput *out);

#endif
