/*
 * sim.c: a serving simulator of continuous batching over the paged KV pool
 * (sim.h). Pure computation: no Lua, no I/O.
 *
 * One step, as vLLM V1 schedules it (vllm-project/vllm commit 00024d31,
 * vllm/v1/core/sched/scheduler.py Scheduler.schedule):
 *   1. The running requests, in the order they were admitted, while the
 *      token budget (max_num_batched_tokens) lasts: each gets the tokens it
 *      still has to compute (a decode: 1; a prompt: the rest of it, cut to
 *      the budget: chunked prefill). When the pool has too few free blocks
 *      for them (kv_cache_manager.allocate_slots returns None) the newest
 *      running request is preempted (self.running.pop()) until they fit, or
 *      until the request itself was the one preempted. A preempted request
 *      frees its blocks, loses its computed tokens (recompute) and goes back
 *      to the front of the waiting queue.
 *   2. Only if nobody was preempted: waiting requests in order, while the
 *      budget lasts and fewer than max_num_seqs run, each admitted when its
 *      blocks fit; the first that does not fit stops admission.
 * A request whose computed tokens reach its tokens samples one token at the
 * end of the step (the first one: its time to first token); a request that
 * has all its output tokens leaves and frees its blocks.
 *
 * Memory: what a request of n computed tokens holds is the ledger's
 * kvp_ledger_seq_bytes on the tightest pipeline stage (blocks per layer
 * kind, windows, MLA, states, speculative slots; contiguous allocation:
 * max_model_len reserved at admission), recomputed when n crosses a block.
 * The pool is the stage's blocks less the null block.
 * Swap (host_bytes > 0, not vLLM V1's behaviour, which recomputes): a
 * preempted request's KV moves to host memory while it fits there and comes
 * back on readmission; both transfers add bytes / PCIe one-way bandwidth to
 * the step.
 * Speculative decoding: a decoding request verifies 1 + g tokens a step and
 * keeps k + 1 of them, k accepted drafts drawn from the seeded generator
 * (P(k >= i) = a^i, Leviathan et al., ICML 2023), plus g draft passes.
 * No-evict (TensorRT-LLM's default capacity scheduler policy
 * GUARANTEED_NO_EVICT, docs "Useful Runtime Options"): continuous, but a
 * waiting request is admitted only when the KV of its prompt and all its
 * output fits beside what the running ones have reserved; none is preempted.
 * Static batching: a new batch is admitted only when the last has finished,
 * each member reserving its final KV at admission; the batch runs until its
 * longest member is done.
 * SGLang (KVP_SCHED_SGLANG), as sgl-project/sglang schedules: python/sglang/
 * srt/managers/scheduler.py (read at d51c1c21: run_step, get_new_batch_prefill,
 * get_new_batch_decode; update_running_batch's batch_is_full of the later
 * releases), schedule_policy.py PrefillAdder (read at ad0119fd, 0.5),
 * schedule_batch.py ScheduleBatch.retract_decode, global_config.py (025ea29a).
 * A step is a prefill batch when one can be formed, else a decode batch of
 * every running request (mixed chunks, --enable-mixed-chunk, are off by
 * default and not modelled). The prefill batch: the chunked request's next
 * chunk (add_chunked_req), then waiting requests in order (FCFS) while fewer
 * than max_running_requests run and, in page-aligned tokens, the request's
 * prompt plus its clipped output stays below the pool's free tokens less the
 * offset (new_token_ratio x the clipped output each running request has
 * left, plus what the batch took), its prompt within max_prefill_tokens and
 * the chunk (chunked_prefill_size: a longer prompt is cut to it and goes on
 * in later prefill batches). A request the estimate refuses marks the batch
 * full: no prefill is tried until a request leaves the running batch. Decode:
 * when the pool lacks a token for every running request, requests are
 * retracted (sg_retract); else new_token_ratio decays to its minimum. The
 * pool is counted in tokens as SGLang's token_to_kv_pool does: the ledger's
 * bytes of one token (its block is 1 token under SGLang's budget).
 * A client with max_concurrency (vllm bench serve --max-concurrency) sends
 * the next request when one finishes, that is after the step's output has
 * reached it; the engine does not wait for it: vLLM V1's engine loop
 * (vllm/v1/engine/core.py, EngineCore.run_busy_loop) takes what is in its
 * input queue and runs the next step at once, blocking for input only when
 * it has no request. So a request sent at the end of step k is scheduled
 * from step k + 2 while the engine is busy, at once when it is idle; its
 * latencies count from the end of step k.
 * Disaggregated prefill/decode (cfg->phase, sim.h kvp_phase; DistServe, Zhong
 * et al., OSDI 2024; Splitwise, Patel et al., ISCA 2024): a prefill instance
 * runs each request's prompt as above and the request leaves when its first
 * token is sampled (its output is 1 here), its blocks freed at once (the
 * engines keep them until the decode side has read them, vLLM's
 * NixlConnector delay_free_blocks: that hold is not modelled); its time to
 * first token adds kv_transfer_s, the KV's way to the decode instance. A
 * decode instance receives request i at arrival_i + kv_transfer_s (arrival_i:
 * when its prefill finished) with its prompt's KV and its first token: it
 * is admitted as a running request whose prompt is computed (computed =
 * prompt, one token generated), so admission allocates the blocks of its
 * prompt and first token and its first step is a decode; a preempted one
 * recomputes its prompt and tokens on this instance as any other. Its
 * latencies count from when its KV arrived.
 * The API server's serial work (cfg->api_s > 0, an aggregated instance):
 * vLLM's OpenAI server is one asyncio process by default (vllm/entrypoints/
 * openai/api_server.py; vllm/v1/engine/async_llm.py AsyncLLM.add_request:
 * the request's processing before it is put on the engine core's input
 * queue), so its per-request work is one FIFO server: a request sent at t
 * starts it at max(t, the previous request's end) and enters the waiting
 * queue at the first step boundary at or after its end. Latencies count
 * from t, the wait included. Its service time has no published figure
 * (stdlib/kvplan/sim.lua M.api_ms): kvplan calibrate fits it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvplan.h"
#include "core.h"
#include "checked.h"
#include "diag.h"

const char *kvp_sched_name(kvp_sched s) {
  static const char *const names[KVP_NSCHEDS] = {"continuous", "static", "no_evict", "sglang"};
  return (s >= 0 && s < KVP_NSCHEDS) ? names[s] : "unknown";
}

/* ---- workloads ----------------------------------------------------------- */

kvp_err kvp_workload_make(const kvp_dist *prompt, const kvp_dist *output, int64_t n, double rate,
                          uint64_t seed, kvp_request *out, kvp_diag *d) {
  TRY(kvp_check_count(n, 1, "requests", d));
  if (!(isfinite(rate) && rate >= 0.0))
    return kvp_fail(d, KVP_EINVAL, "field 'rate' must be a number > 0 (requests a second), got %g",
                    kvp_shown(rate));
  kvp_err e = kvp_dist_check(prompt, d);
  if (e != KVP_OK) return e;
  TRY(kvp_dist_check(output, d));
  kvp_rng r;
  kvp_rng_seed(&r, seed);
  double t = 0.0;
  for (int64_t i = 0; i < n; i++) {
    TRY(kvp_dist_sample(prompt, &r, &out[i].prompt));
    TRY(kvp_dist_sample(output, &r, &out[i].output));
    if (rate > 0.0) t += -log(kvp_rng_unit(&r)) / rate;
    if (!isfinite(t))
      return kvp_fail(d, KVP_EINVAL, "field 'rate' = %g: the arrival of request %lld is past the "
                      "largest double (expected requests a second)", kvp_shown(rate), (long long)(i + 1));
    out[i].arrival = t;
  }
  return KVP_OK;
}

/* ---- the simulator ------------------------------------------------------- */

typedef struct sreq {
  int64_t prompt, output, generated, computed;
  int64_t held;     /* KV bytes in the pool */
  int64_t cap;      /* held is valid up to this many computed tokens */
  int64_t swapped;  /* KV bytes on the host (swap), 0 none */
  int64_t sched;    /* tokens scheduled this step */
  double ready;     /* api_s > 0: when its API-server work ends (it reaches the engine) */
  double sent;      /* when the client sent it: its arrival, or later under max_concurrency;
                     * latencies count from here (vllm bench serve starts its clock
                     * before the request goes out), waits for a step to end included */
  double first, finish;
  double second;    /* KVP_PHASE_DECODE: when its first decode step's token came */
  int64_t npreempt;
  int64_t skip;     /* prompt tokens the prefix cache serves (whole blocks) */
  int64_t shared;   /* their bytes, held once in the pool */
  int done;
  int dec;          /* decoding(q) when its step was costed (run_step) */
} sreq;

typedef struct state {
  const kvp_ledger *l;
  const kvp_cost *c;
  kvp_sim_config cfg;
  sreq *r;
  int64_t n;
  int64_t *order;             /* requests by arrival */
  int64_t *wq, wh, wn;        /* waiting: a ring of n, head and length */
  int64_t *run, nrun;         /* running, in admission order */
  int64_t *sch, nsch;         /* scheduled this step */
  int64_t *transit, ntransit; /* sent by the client, not yet at the engine */
  int64_t *api, napi, api_head; /* api_s > 0: in the API server's FIFO, by its order */
  double api_free;            /* api_s > 0: when the API server's last request is done */
  int64_t pool, free_bytes, host_free;
  int64_t gran;               /* tokens between recomputations of held */
  int64_t prefix;             /* shared prefix in whole blocks (0: none) */
  int contiguous;
  int32_t stage;
  kvp_rng rng;
  double now;
  int64_t step_preempted;
  int64_t finished;
  double swap_bytes;          /* moved this step */
  /* SGLang's scheduler (KVP_SCHED_SGLANG) */
  int64_t chunked;            /* the request whose prompt is being chunked, -1 none */
  int64_t tok_bytes;          /* the pool's bytes a token (its token_to_kv_pool counts tokens) */
  double ratio;               /* new_token_ratio */
  int batch_full;             /* batch_is_full: no prefill tried until a request leaves */
  int64_t left_before;        /* requests finished or retracted when the last step began */
  kvp_request *moved;         /* KVP_PHASE_DECODE: the requests at their KV's arrival */
  /* constant over the run, derived once (the same figures as derived each time) */
  double attn_den1;           /* kvp_cost_attn_s's divisor for one query token (a decode) */
  int plain;                  /* one KV term over every key (no window): the costs' loops
                               * of one term, written out */
  kvp_step_memo memo;         /* the last step's shape and its part of the step time */
  kvp_step_memo *alt_memo;    /* each alternative's (cfg.alts) */
  int *alt_check;             /* 1: its step times are compared at every step */
} state;

/* KV bytes a request holds with n tokens computed (0 for none), its
 * share of the cached prefix not counted. */
static kvp_err bytes_at(state *s, const sreq *q, int64_t n, int64_t *bytes) {
  if (n <= 0) {
    *bytes = 0;
    return KVP_OK;
  }
  TRY(kvp_ledger_seq_bytes(s->l, s->stage, n, bytes));
  *bytes = *bytes > q->shared ? *bytes - q->shared : 0;
  return KVP_OK;
}

/* A request admitted without its cached prefix computed starts after it. */
static void prefix_hit(sreq *q, kvp_sim *out) {
  if (q->swapped == 0 && q->computed < q->skip) {
    out->cached_tokens += q->skip - q->computed;
    q->computed = q->skip;
  }
}

/* need_for beyond what q holds: its bytes at `upto` looked up. */
static kvp_err need_more(state *s, sreq *q, int64_t upto, int64_t *need) {
  int64_t b;
  TRY(bytes_at(s, q, upto, &b));
  *need = b > q->held ? b : q->held;
  return KVP_OK;
}

/* Bytes request q needs for `upto` computed tokens (held grows, never
 * shrinks, while the request runs). Inline: every scheduled request asks
 * every step, and most steps it holds them already. */
static inline kvp_err need_for(state *s, sreq *q, int64_t upto, int64_t *need) {
  if (upto <= q->cap && (q->held > 0 || upto == 0)) {
    *need = q->held;
    return KVP_OK;
  }
  return need_more(s, q, upto, need);
}

static void set_held(state *s, sreq *q, int64_t upto, int64_t bytes) {
  q->held = bytes;
  q->cap = s->contiguous ? INT64_MAX : cdiv(upto, s->gran) * s->gran;
}

static void wait_front(state *s, int64_t i) {
  s->wh = (s->wh + s->n - 1) % s->n;
  s->wq[s->wh] = i;
  s->wn++;
}

static void wait_back(state *s, int64_t i) {
  s->wq[(s->wh + s->wn) % s->n] = i;
  s->wn++;
}

static void preempt_to(state *s, kvp_sim *out, int64_t i, int front) {
  sreq *q = &s->r[i];
  s->free_bytes += q->held;
  if (s->cfg.host_bytes > 0 && q->held > 0 && q->held <= s->host_free) {
    q->swapped = q->held;
    s->host_free -= q->held;
    s->swap_bytes += (double)q->held;
    out->swaps++;
  } else {
    if (q->computed > q->skip) out->recomputed_tokens += q->computed - q->skip;
    q->computed = 0;
  }
  q->held = 0;
  q->cap = 0;
  q->npreempt++;
  out->preemptions++;
  s->step_preempted++;
  if (front) wait_front(s, i);
  else wait_back(s, i);
}

static void preempt(state *s, kvp_sim *out, int64_t i) { preempt_to(s, out, i, 1); }

/* A decode: one token pending after the prompt (or its recomputation). */
static int decoding(const sreq *q) {
  return q->generated > 0 && q->prompt + q->generated - q->computed == 1;
}

/* Tokens request q computes next: the rest of its prompt and outputs (a
 * decode: 1, or 1 + g drafts to verify), cut to long_prefill_token_threshold
 * when one is set, then to the budget: vLLM's Scheduler.schedule, running
 * and waiting alike, `if 0 < long_prefill_token_threshold < num_new_tokens:
 * num_new_tokens = long_prefill_token_threshold`, then `min(num_new_tokens,
 * token_budget)` (vllm/v1/core/sched/scheduler.py; its test
 * test_schedule_concurrent_partial_requests, tests/v1/core/test_scheduler.py
 * at 619e4b31). The threshold is 0 (none) under the other schedulers. */
static int64_t wanted(const state *s, const sreq *q, int64_t budget) {
  int64_t left = q->prompt + q->generated - q->computed;
  if (s->c->spec_tokens > 0 && decoding(q)) left += s->c->spec_tokens;
  const int64_t cap = s->cfg.long_prefill_token_threshold;
  if (cap > 0 && left > cap) left = cap;
  return left < budget ? left : budget;
}

/* KV positions that `t` scheduled tokens make valid (drafts are slots the
 * ledger already counts). */
static int64_t kv_upto(const sreq *q, int64_t t) {
  int64_t real = q->prompt + q->generated - q->computed;
  return q->computed + (t < real ? t : real);
}

static kvp_err schedule_running(state *s, kvp_sim *out, int64_t *budget) {
  /* constant over the run, and the budget, in locals: the stores to the
   * requests below would otherwise reload them every request */
  const int64_t gran = s->gran;
  const int contiguous = s->contiguous;
  int64_t left = *budget;
  for (int64_t k = 0; k < s->nrun && left > 0; k++) {
    int64_t i = s->run[k];
    sreq *q = &s->r[i];
    if (q->done) continue;
    int64_t t = wanted(s, q, left), upto = kv_upto(q, t), need;
    TRY(need_for(s, q, upto, &need));
    if (need == q->held && s->free_bytes >= 0 && !contiguous && upto <= q->cap &&
        upto > q->cap - gran) {
      /* nothing to allocate or preempt, and set_held would leave cap as it
       * is: a multiple of gran, the smallest one >= upto */
      q->sched = t;
      s->sch[s->nsch++] = i;
      left -= t;
      continue;
    }
    int self = 0;
    while (need - q->held > s->free_bytes) {
      int64_t v = s->run[--s->nrun];
      preempt(s, out, v);
      if (v == i) {
        self = 1;
        break;
      }
    }
    if (self) break;
    s->free_bytes -= need - q->held;
    set_held(s, q, upto, need);
    q->sched = t;
    s->sch[s->nsch++] = i;
    left -= t;
  }
  *budget = left;
  return KVP_OK;
}

static kvp_err admit_waiting(state *s, kvp_sim *out, int64_t *budget) {
  while (s->wn > 0 && *budget > 0 && s->nrun < s->cfg.max_num_seqs) {
    int64_t i = s->wq[s->wh];
    sreq *q = &s->r[i];
    int64_t before = q->computed;
    prefix_hit(q, out);
    int64_t t = wanted(s, q, *budget), need;
    if (q->swapped > 0) {
      q->held = q->swapped; /* its KV, back from the host */
      q->cap = s->contiguous ? INT64_MAX : cdiv(q->computed, s->gran) * s->gran;
    }
    int whole = s->cfg.sched == KVP_SCHED_NO_EVICT;
    if (whole) TRY(bytes_at(s, q, q->prompt + q->output - 1, &need)); /* reserved now */
    else TRY(need_for(s, q, kv_upto(q, t), &need));
    if (need > s->free_bytes) {
      if (q->swapped > 0) q->held = 0, q->cap = 0;
      out->cached_tokens -= q->computed - before; /* not admitted after all */
      q->computed = before;
      break;
    }
    if (q->swapped > 0) {
      s->swap_bytes += (double)q->swapped;
      s->host_free += q->swapped;
      q->swapped = 0;
    }
    s->wh = (s->wh + 1) % s->n;
    s->wn--;
    s->free_bytes -= need;
    set_held(s, q, kv_upto(q, t), need);
    if (whole) q->cap = INT64_MAX;
    s->run[s->nrun++] = i;
    q->sched = t;
    s->sch[s->nsch++] = i;
    *budget -= t;
  }
  return KVP_OK;
}

/* Static batching: the next batch, as many waiting requests (in order, up
 * to max_num_seqs) as fit with the KV of their last token reserved. */
static kvp_err form_batch(state *s, kvp_sim *out) {
  while (s->wn > 0 && s->nrun < s->cfg.max_num_seqs) {
    int64_t i = s->wq[s->wh];
    sreq *q = &s->r[i];
    int64_t need;
    TRY(bytes_at(s, q, q->prompt + q->output - 1, &need));
    if (need > s->free_bytes) break;
    prefix_hit(q, out);
    s->wh = (s->wh + 1) % s->n;
    s->wn--;
    s->free_bytes -= need;
    q->held = need;
    q->cap = INT64_MAX;
    s->run[s->nrun++] = i;
  }
  return KVP_OK;
}

/* ---- SGLang's scheduler (KVP_SCHED_SGLANG; the model and its sources at the
 * top of this file) ------------------------------------------------------- */

/* The output SGLang's estimate still counts for q: its tokens left, clipped
 * (CLIP_MAX_NEW_TOKENS). */
static int64_t sg_left(const state *s, const sreq *q) {
  return min64(q->output - q->generated, s->cfg.clip_max_new_tokens);
}

/* Tokens rounded up to whole pages (ceil_paged_tokens). */
static int64_t sg_paged(const state *s, int64_t t) { return cdiv(t, s->gran) * s->gran; }

/* Schedule request i for t tokens this step with the blocks they need; *fits
 * is 0 (nothing changed) when the pool lacks them. */
static kvp_err sg_take(state *s, int64_t i, int64_t t, int *fits) {
  sreq *q = &s->r[i];
  int64_t need;
  TRY(need_for(s, q, kv_upto(q, t), &need));
  *fits = need - q->held <= s->free_bytes;
  if (!*fits) return KVP_OK;
  s->free_bytes -= need - q->held;
  set_held(s, q, kv_upto(q, t), need);
  q->sched = t;
  s->sch[s->nsch++] = i;
  return KVP_OK;
}

/* Scheduler.get_new_batch_prefill with PrefillAdder (FCFS, page-aligned
 * tokens): the chunked request's next chunk first (add_chunked_req), then
 * waiting requests in order while the estimate of the pool, the prefill
 * tokens, the chunk and max_running_requests last (add_one_req). */
static kvp_err sg_prefill(state *s, kvp_sim *out) {
  if ((s->batch_full || s->wn == 0) && s->chunked < 0) return KVP_OK;
  const int64_t nrun0 = s->nrun;
  if (nrun0 >= s->cfg.max_num_seqs && s->chunked < 0) {
    s->batch_full = 1;
    return KVP_OK;
  }
  /* rem_total_token_offset starts at new_token_ratio x the clipped output
   * each running request has left; the pool's tokens are those free now */
  double offset = 0.0, cur = 0.0;
  for (int64_t k = 0; k < s->nrun; k++)
    offset += (double)sg_left(s, &s->r[s->run[k]]) * s->ratio;
  const double avail = (double)(s->free_bytes / s->tok_bytes);
  int64_t rem_input = s->cfg.max_prefill_tokens, rem_chunk = s->cfg.max_num_batched_tokens;
  int64_t ncan = 0;
  int fits;
  if (s->chunked >= 0) {
    int64_t i = s->chunked;
    sreq *q = &s->r[i];
    int64_t left = q->prompt + q->generated - q->computed;
    double rt = avail - offset;
    int64_t lim = rt < (double)rem_chunk ? (int64_t)(rt > 0 ? rt : 0) : rem_chunk;
    int64_t t = min64(left, lim);
    if (t > 0) {
      TRY(sg_take(s, i, t, &fits));
      if (fits) {
        ncan++;
        offset += (double)(sg_paged(s, t) + (t < left ? 0 : sg_left(s, q)));
        cur += (double)sg_paged(s, t);
        rem_input -= sg_paged(s, t);
        rem_chunk -= sg_paged(s, t);
        if (t == left) { /* its last chunk: it runs from now on */
          s->run[s->nrun++] = i;
          s->chunked = -1;
        }
      }
    }
    if (s->chunked >= 0) return KVP_OK; /* still chunking: the chunk budget is spent */
    if (avail - offset <= 0 || avail - cur <= 0) {
      s->batch_full = 1;
      return KVP_OK;
    }
    if (rem_input <= 0 || rem_chunk <= 0) return KVP_OK;
  }
  while (s->wn > 0) {
    if (nrun0 + ncan >= s->cfg.max_num_seqs) {
      s->batch_full = 1;
      break;
    }
    int64_t i = s->wq[s->wh];
    sreq *q = &s->r[i];
    int64_t before = q->computed;
    prefix_hit(q, out);
    int64_t extend = q->prompt + q->generated - q->computed;
    int64_t total = extend + sg_left(s, q), in = sg_paged(s, extend), t = extend;
    int stop = 0, full = 0;
    /* an idle engine takes the first request whatever the estimate: SGLang
     * caps a request below its pool (max_req_input_len), kvplan checked
     * that each fits the pool alone */
    if ((double)total >= avail - offset && (nrun0 > 0 || ncan > 0)) stop = full = 1;
    else if (in >= rem_input && ncan > 0) stop = 1;
    else if (in > rem_chunk) {
      t = rem_chunk / s->gran * s->gran;
      if (t <= 0) stop = 1;
    }
    if (!stop) {
      TRY(sg_take(s, i, t, &fits));
      if (!fits) stop = full = 1;
    }
    if (stop) {
      out->cached_tokens -= q->computed - before; /* not admitted after all */
      q->computed = before;
      if (full) s->batch_full = 1;
      break;
    }
    s->wh = (s->wh + 1) % s->n;
    s->wn--;
    ncan++;
    if (t < extend) { /* chunked prefill: the rest in the next prefill batches */
      s->chunked = i;
      offset += (double)t;
      cur += (double)t;
      rem_input -= t;
      rem_chunk -= t;
    } else {
      s->run[s->nrun++] = i;
      offset += (double)(in + sg_left(s, q));
      cur += (double)in;
      rem_input -= in;
      rem_chunk -= in;
    }
    if (avail - offset <= 0 || avail - cur <= 0) { /* budget_state: NO_TOKEN */
      s->batch_full = 1;
      break;
    }
    if (rem_input <= 0 || rem_chunk <= 0) break; /* OTHER */
  }
  /* a batch formed while none ran becomes the running batch itself
   * (get_next_batch_to_run), whose batch_is_full is unset */
  if (nrun0 == 0 && ncan > 0) s->batch_full = 0;
  return KVP_OK;
}

/* ScheduleBatch.retract_decode: the running requests by (output tokens,
 * -prompt tokens), largest first; the last goes (fewest outputs, longest
 * prompt among them) while the pool has less than retract_decode_steps
 * tokens for each left, at least once, never the last one. Retracted
 * requests free their KV and wait at the back of the queue to be prefilled
 * again (prompt and outputs). new_token_ratio becomes (outputs so far +
 * retract_decode_steps x requests left) / their output lengths, at most 1. */
static kvp_err sg_retract(state *s, kvp_sim *out) {
  int64_t m = s->nrun, *v = s->sch; /* sch is empty until the decode is scheduled */
  for (int64_t k = 0; k < m; k++) {
    int64_t x = s->run[k], j = k;
    const sreq *a = &s->r[x];
    while (j > 0) {
      const sreq *b = &s->r[v[j - 1]];
      if (b->generated > a->generated || (b->generated == a->generated && b->prompt <= a->prompt))
        break;
      v[j] = v[j - 1];
      j--;
    }
    v[j] = x;
  }
  int first = 1;
  while (m > 1) {
    double room = (double)m * (double)s->cfg.retract_decode_steps * (double)s->tok_bytes;
    if (!first && (double)s->free_bytes >= room) break;
    first = 0;
    int64_t x = v[--m], w = 0;
    for (int64_t k = 0; k < s->nrun; k++)
      if (s->run[k] != x) s->run[w++] = s->run[k];
    s->nrun = w;
    preempt_to(s, out, x, 0);
  }
  int64_t gen = 0, outs = 0;
  for (int64_t k = 0; k < s->nrun; k++) {
    gen += s->r[s->run[k]].generated;
    outs += s->r[s->run[k]].output;
  }
  double r = ((double)gen + (double)s->cfg.retract_decode_steps * (double)s->nrun) / (double)outs;
  s->ratio = r < 1.0 ? r : 1.0;
  return KVP_OK;
}

/* A decode batch of every running request (update_running_batch): when the
 * pool lacks a token for each (check_decode_mem) some are retracted, else
 * new_token_ratio decays by new_token_ratio_decay to min_new_token_ratio. */
static kvp_err sg_decode(state *s, kvp_sim *out) {
  int64_t need_all = 0, need;
  for (int64_t k = 0; k < s->nrun; k++) {
    sreq *q = &s->r[s->run[k]];
    TRY(need_for(s, q, kv_upto(q, wanted(s, q, INT64_MAX)), &need));
    need_all += need - q->held;
  }
  if (need_all > s->free_bytes) {
    TRY(sg_retract(s, out));
  } else {
    s->ratio -= s->cfg.new_token_ratio_decay;
    if (s->ratio < s->cfg.min_new_token_ratio) s->ratio = s->cfg.min_new_token_ratio;
  }
  for (int64_t k = 0; k < s->nrun; k++) {
    int64_t i = s->run[k];
    int fits;
    TRY(sg_take(s, i, wanted(s, &s->r[i], INT64_MAX), &fits));
    if (!fits && s->chunked >= 0) { /* the chunked prompt's blocks are the only others */
      preempt_to(s, out, s->chunked, 1);
      s->chunked = -1;
      TRY(sg_take(s, i, wanted(s, &s->r[i], INT64_MAX), &fits));
    }
    /* one request alone always fits (check_requests); else it waits a step */
  }
  return KVP_OK;
}

/* One step of SGLang's event loop (get_next_batch_to_run): a prefill batch
 * when one can be formed, else a decode batch of the running requests, else
 * nothing (new_token_ratio back to its initial value). batch_is_full clears
 * when a request has left the running batch (finished or retracted). */
static kvp_err sg_schedule(state *s, kvp_sim *out) {
  int64_t left = s->finished + out->preemptions;
  if (left != s->left_before || (s->nrun == 0 && s->chunked < 0)) s->batch_full = 0;
  s->left_before = left;
  TRY(sg_prefill(s, out));
  if (s->nsch > 0) return KVP_OK;
  if (s->nrun > 0) {
    TRY(sg_decode(s, out));
    s->left_before = s->finished + out->preemptions;
    if (s->step_preempted > 0) s->batch_full = 0;
    return KVP_OK;
  }
  s->ratio = s->cfg.init_new_token_ratio;
  return KVP_OK;
}

/* Accepted drafts of one verification of g drafts (Leviathan et al.). */
static int64_t accepted(state *s, int64_t g) {
  int64_t k = 0;
  while (k < g && kvp_rng_unit(&s->rng) < s->c->p.acceptance) k++;
  return k;
}

/* The time of the scheduled step at cost c (the run's or an alternative's,
 * with its memo): its batch through the model, the draft passes, the swap. */
static inline double step_dt(const state *s, const kvp_cost *c, kvp_step_memo *memo, int64_t tokens,
                      int64_t longest, double kv, double attn, double attn_s, int64_t ndecode,
                      double ctx, kvp_step *st) {
  kvp_step_time_memo(c, memo, tokens, s->nsch, longest, kv, attn, attn_s, st);
  double dt = st->seconds;
  if (ndecode > 0 && c->spec_tokens > 0)
    dt += (double)c->spec_tokens * kvp_draft_time(c, ndecode, ctx / (double)ndecode);
  if (s->swap_bytes > 0.0) dt += s->swap_bytes / (s->cfg.pcie_gbps / 2.0 * 1e9);
  return dt;
}

/* An alternative (cfg.alts) whose time of this step is not dt is not this run. */
static void check_alts(state *s, int64_t tokens, int64_t longest, double kv, double attn,
                       double attn_s, int64_t ndecode, double ctx, double dt) {
  for (int64_t k = 0; k < s->cfg.nalts; k++) {
    kvp_sim_alt *a = &s->cfg.alts[k];
    if (!a->same || !s->alt_check[k]) continue;
    kvp_step sa;
    if (step_dt(s, a->c, &s->alt_memo[k], tokens, longest, kv, attn, attn_s, ndecode, ctx, &sa) != dt)
      a->same = 0;
  }
}

/* Run the scheduled requests' step: its time, then their progress. */
static kvp_err run_step(state *s, kvp_sim *out) {
  int64_t tokens = 0, prefill = 0, ndecode = 0, longest = 0;
  double kv = 0.0, attn = 0.0, attn_s = 0.0, ctx = 0.0;
  /* one KV term without a window: kvp_cost_kv_read's and kvp_cost_attn's
   * loop of one, the same operations in the same order */
  const double st0 = s->c->state_bytes, kt0 = s->c->kv_tok[0], ak0 = s->c->attn_key[0];
  const double den1 = s->attn_den1;
  const int plain = s->plain;
  for (int64_t k = 0; k < s->nsch; k++) {
    sreq *q = &s->r[s->sch[k]];
    tokens += q->sched;
    double a;
    if (plain) {
      kv += st0 + kt0 * (double)q->computed;
      a = 0.0 + ak0 * kvp_keys_sum(q->computed, q->sched, 0);
    } else {
      kv += kvp_cost_kv_read(s->c, q->computed);
      a = kvp_cost_attn_kernels(s->c, q->computed, q->sched);
    }
    /* at its own query tokens: kvp_cost_attn_s, its divisor for one derived once */
    attn_s += q->sched != 1 ? kvp_cost_attn_s(s->c, q->sched, a) : a > 0.0 ? a / den1 : 0.0;
    if (!plain && s->c->index_key > 0.0) {
      /* a sparse-attention indexer's scores at their own rate (kvp_cost_attn_secs) */
      double x = kvp_cost_index(s->c, q->computed, q->sched);
      attn_s += x / s->c->index_flops;
      a += x;
    }
    attn += a;
    q->dec = decoding(q);
    if (q->dec) {
      ndecode++;
      ctx += (double)q->computed;
      /* vLLM V0's seq_len of a decode: its tokens with the one it decodes */
      if (q->computed + 1 > longest) longest = q->computed + 1;
    } else {
      prefill += q->sched;
    }
  }
  kvp_step st;
  double dt = step_dt(s, s->c, &s->memo, tokens, longest, kv, attn, attn_s, ndecode, ctx, &st);
  if (s->cfg.nalts > 0) check_alts(s, tokens, longest, kv, attn, attn_s, ndecode, ctx, dt);
  if (out->nsteps == out->cap) {
    int64_t nc = out->cap ? out->cap * 2 : 1024;
    kvp_sim_step *p = realloc(out->steps, (size_t)nc * sizeof *p);
    if (p == NULL) return KVP_ENOMEM;
    out->steps = p;
    out->cap = nc;
  }
  int64_t used = s->pool - s->free_bytes;
  kvp_sim_step *row = &out->steps[out->nsteps++];
  *row = (kvp_sim_step){.start = s->now, .seconds = dt, .running = s->nrun, .waiting = s->wn,
                        .used_bytes = used, .tokens = tokens, .prefill_tokens = prefill,
                        .preempted = s->step_preempted, .compute_bound = st.compute_bound};
  if (used > out->peak_bytes) out->peak_bytes = used;
  out->usage_mean += (double)used * dt;
  s->now += dt;
  /* progress: tokens computed, tokens sampled, requests finished */
  int64_t finished = s->finished;
  for (int64_t k = 0; k < s->nsch; k++) {
    int64_t i = s->sch[k];
    sreq *q = &s->r[i];
    int64_t gain = 0;
    if (q->dec) { /* decoding(q): nothing changed it since it was costed */
      int64_t drafts = q->sched - 1;
      gain = 1 + (drafts > 0 ? accepted(s, drafts) : 0);
      q->computed += gain;
    } else {
      q->computed += q->sched;
      if (q->computed == q->prompt + q->generated) gain = 1;
    }
    if (gain == 0) continue;
    if (q->generated + gain > q->output) gain = q->output - q->generated;
    if (q->generated == 0) q->first = s->now;
    if (q->generated == 1) q->second = s->now; /* once: generated only grows */
    q->generated += gain;
    q->computed = q->prompt + q->generated - 1;
    if (q->generated == q->output) {
      q->done = 1;
      q->finish = s->now;
      s->finished++;
      out->output_tokens += q->output;
      if (s->cfg.sched != KVP_SCHED_STATIC) {
        s->free_bytes += q->held;
        q->held = 0;
      }
    }
  }
  /* leave: continuous at once; static when the whole batch is done (none
   * finished this step: nobody leaves, the running requests are those not
   * done, or a static batch with some alive) */
  if (s->finished == finished) return KVP_OK;
  int64_t m = 0, alive = 0;
  for (int64_t k = 0; k < s->nrun; k++) alive += !s->r[s->run[k]].done;
  for (int64_t k = 0; k < s->nrun; k++) {
    sreq *q = &s->r[s->run[k]];
    if (!q->done) s->run[m++] = s->run[k];
    else if (s->cfg.sched == KVP_SCHED_STATIC && alive > 0) s->run[m++] = s->run[k];
    else if (s->cfg.sched == KVP_SCHED_STATIC) {
      s->free_bytes += q->held;
      q->held = 0;
    }
  }
  s->nrun = m;
  return KVP_OK;
}

/* qsort has no context argument in C11: sort indices by (arrival, index)
 * with a small merge sort instead. */
static void sort_order(int64_t *v, int64_t *tmp, int64_t n, const kvp_request *req) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = min64(lo + w, n), hi = min64(lo + 2 * w, n), a = lo, b = mid, k = lo;
      while (a < mid && b < hi)
        tmp[k++] = req[v[b]].arrival < req[v[a]].arrival ? v[b++] : v[a++];
      while (a < mid) tmp[k++] = v[a++];
      while (b < hi) tmp[k++] = v[b++];
    }
    memcpy(v, tmp, (size_t)n * sizeof *v);
  }
}

void kvp_sim_free(kvp_sim *s) {
  free(s->ttft);
  free(s->e2e);
  free(s->tpot);
  free(s->npreempt);
  free(s->steps);
  s->ttft = s->e2e = s->tpot = NULL;
  s->npreempt = NULL;
  s->steps = NULL;
  s->nsteps = s->cap = 0;
}

static void free_state(state *s) {
  free(s->r);
  free(s->order);
  free(s->wq);
  free(s->run);
  free(s->sch);
  free(s->transit);
  free(s->api);
  free(s->moved);
  free(s->alt_memo);
  free(s->alt_check);
}

/* Whether cost a equals cost b but for the host time's fields (the
 * scheduler reads those only through the step time, kvp_sim_alt). */
static int same_but_host(const kvp_cost *a, const kvp_cost *b) {
  kvp_cost t;
  memcpy(&t, a, sizeof t);
  t.host_seq = b->host_seq;
  t.host_step = b->host_step;
  t.host_step_eager = b->host_step_eager;
  t.host_piece = b->host_piece;
  t.p.launch_us = b->p.launch_us;
  t.p.seq_host_us = b->p.seq_host_us;
  t.p.loop_host_us = b->p.loop_host_us;
  t.p.eager_launch_us = b->p.eager_launch_us;
  return memcmp(&t, b, sizeof t) == 0;
}

/* Check every request before the run: lengths, and that each can be served
 * alone (else the scheduler would wait for it forever). */
static kvp_err check_requests(state *s, const kvp_request *req, int64_t n, int64_t *tokens,
                              kvp_diag *d) {
  *tokens = 0;
  for (int64_t i = 0; i < n; i++) {
    const kvp_request *q = &req[i];
    if (!(isfinite(q->arrival) && q->arrival >= 0.0))
      return kvp_fail(d, KVP_EINVAL, "request %lld: arrival must be a time >= 0 s, got %g",
                      (long long)i + 1, kvp_shown(q->arrival));
    if (q->prompt < 1 || q->output < 1)
      return kvp_fail(d, KVP_EINVAL, "request %lld: prompt and output must be >= 1 token, "
                      "got %lld and %lld", (long long)i + 1, (long long)q->prompt,
                      (long long)q->output);
    int64_t len;
    if (!chk_add(q->prompt, q->output, &len) || len > s->l->max_len)
      return kvp_fail(d, KVP_EINVAL, "request %lld cannot be served: prompt %lld + output %lld "
                      "tokens exceed max_model_len %lld", (long long)i + 1,
                      (long long)q->prompt, (long long)q->output, (long long)s->l->max_len);
    sreq *r = &s->r[i];
    r->prompt = q->prompt;
    r->output = s->cfg.phase == KVP_PHASE_PREFILL ? 1 : q->output;
    if (s->cfg.phase == KVP_PHASE_DECODE) { /* its prompt's KV and first token arrive */
      r->computed = q->prompt;
      r->generated = 1;
    }
    r->skip = min64(s->prefix, (q->prompt - 1) / s->gran * s->gran);
    if (r->skip > 0) TRY(kvp_ledger_seq_bytes(s->l, s->stage, r->skip, &r->shared));
    int64_t need;
    if (s->cfg.phase == KVP_PHASE_PREFILL) len = q->prompt + 1;
    TRY(bytes_at(s, r, len - 1, &need));
    if (need > s->pool)
      return kvp_fail(d, KVP_EINVAL, "request %lld cannot be served: %lld tokens need %lld "
                      "bytes of KV per GPU, the whole pool holds %lld", (long long)i + 1,
                      (long long)(len - 1), (long long)need, (long long)s->pool);
    if (!chk_add(*tokens, len, tokens)) return KVP_EOVERFLOW;
  }
  return KVP_OK;
}

static kvp_err setup(state *s, const kvp_ledger *l, const kvp_cost *c, const kvp_sim_config *cfg,
                     int64_t n, kvp_diag *d) {
  memset(s, 0, sizeof *s);
  s->l = l;
  s->c = c;
  s->cfg = *cfg;
  s->n = n;
  if (cfg->sched < 0 || cfg->sched >= KVP_NSCHEDS)
    return kvp_fail(d, KVP_EINVAL, "unknown scheduler %d", (int)cfg->sched);
  TRY(kvp_check_count(cfg->max_num_seqs, 1, "max_num_seqs", d));
  TRY(kvp_check_count(cfg->max_num_batched_tokens, 1, "max_num_batched_tokens", d));
  TRY(kvp_check_count(cfg->host_bytes, 0, "host_bytes", d));
  TRY(kvp_check_count(cfg->max_steps, 0, "max_steps", d));
  TRY(kvp_check_count(cfg->max_concurrency, 0, "max_concurrency", d));
  TRY(kvp_check_count(cfg->long_prefill_token_threshold, 0, "long_prefill_token_threshold", d));
  if (cfg->long_prefill_token_threshold > 0 && cfg->sched != KVP_SCHED_CONTINUOUS)
    return kvp_fail(d, KVP_EINVAL, "field 'long_prefill_token_threshold' is vLLM's, on the "
                    "scheduler 'continuous' only, got scheduler '%s'", kvp_sched_name(cfg->sched));
  if (cfg->phase < 0 || cfg->phase >= KVP_NPHASES)
    return kvp_fail(d, KVP_EINVAL, "unknown phase %d", (int)cfg->phase);
  if (!(isfinite(cfg->kv_transfer_s) && cfg->kv_transfer_s >= 0.0))
    return kvp_fail(d, KVP_EINVAL, "field 'kv_transfer_s' must be a time >= 0 s, got %g",
                    kvp_shown(cfg->kv_transfer_s));
  if (cfg->phase == KVP_PHASE_BOTH && cfg->kv_transfer_s > 0.0)
    return kvp_fail(d, KVP_EINVAL, "field 'kv_transfer_s' is a disaggregated pool's: give a "
                    "phase ('prefill' or 'decode') or no kv_transfer_s");
  if (!(isfinite(cfg->request_s) && cfg->request_s >= 0.0))
    return kvp_fail(d, KVP_EINVAL, "field 'request_s' must be a time >= 0 s, got %g",
                    kvp_shown(cfg->request_s));
  if (cfg->phase != KVP_PHASE_BOTH && cfg->request_s > 0.0)
    return kvp_fail(d, KVP_EINVAL, "field 'request_s' is an aggregated instance's client time: "
                    "a disaggregated pool's latencies are the pool's own");
  if (!(isfinite(cfg->api_s) && cfg->api_s >= 0.0))
    return kvp_fail(d, KVP_EINVAL, "field 'api_s' must be a time >= 0 s (the API server's "
                    "serial work a request), got %g", kvp_shown(cfg->api_s));
  if (cfg->phase != KVP_PHASE_BOTH && cfg->api_s > 0.0)
    return kvp_fail(d, KVP_EINVAL, "field 'api_s' is an aggregated instance's API server: a "
                    "disaggregated pool's requests come from the other pool");
  if (cfg->phase == KVP_PHASE_DECODE && cfg->sched == KVP_SCHED_SGLANG)
    return kvp_fail(d, KVP_EINVAL, "phase 'decode' is modelled on the schedulers 'continuous', "
                    "'no_evict' and 'static', not 'sglang' (SGLang's decode server admits "
                    "through its own prealloc and transfer queues)");
  if (cfg->host_bytes > 0 && !(isfinite(cfg->pcie_gbps) && cfg->pcie_gbps > 0.0))
    return kvp_fail(d, KVP_EINVAL, "swapping to host memory needs 'pcie_gbps' > 0, got %g",
                    kvp_shown(cfg->pcie_gbps));
  if (cfg->sched == KVP_SCHED_SGLANG) {
    TRY(kvp_check_count(cfg->max_prefill_tokens, 1, "max_prefill_tokens", d));
    TRY(kvp_check_count(cfg->clip_max_new_tokens, 1, "clip_max_new_tokens", d));
    TRY(kvp_check_count(cfg->retract_decode_steps, 1, "retract_decode_steps", d));
    const double ri = cfg->init_new_token_ratio, rm = cfg->min_new_token_ratio,
                 rd = cfg->new_token_ratio_decay;
    if (!(rm >= 0.0 && rm <= ri && ri <= 1.0 && rd >= 0.0 && rd <= 1.0))
      return kvp_fail(d, KVP_EINVAL, "SGLang's new_token_ratio must have 0 <= min <= init <= 1 "
                      "and 0 <= decay <= 1, got min %g, init %g, decay %g",
                      kvp_shown(rm), kvp_shown(ri),
                      kvp_shown(rd));
    if (cfg->host_bytes > 0)
      return kvp_fail(d, KVP_EINVAL, "scheduler 'sglang' does not swap: SGLang retracts a "
                      "request and prefills it again; give no host_bytes");
  }
  if (c->spec_tokens + 1 > cfg->max_num_batched_tokens)
    return kvp_fail(d, KVP_EINVAL, "max_num_batched_tokens %lld holds not one speculative "
                    "step of %lld tokens", (long long)cfg->max_num_batched_tokens,
                    (long long)(c->spec_tokens + 1));
  if (l->fit.why != KVP_FITS || l->nstage == 0) {
    char why[256];
    kvp_fit_explain(&l->fit, why, sizeof why);
    return kvp_fail(d, KVP_EINVAL, "the deployment does not fit: %s", why);
  }
  s->stage = l->tight;
  const kvp_stage *st = &l->stage[s->stage];
  s->contiguous = l->d.alloc == KVP_ALLOC_CONTIGUOUS;
  if (s->contiguous) {
    s->pool = st->kv_budget;
  } else if (!chk_mul(st->blocks - l->null_blocks, st->block_bytes, &s->pool)) {
    return kvp_fail(d, KVP_EOVERFLOW, "the KV pool's bytes overflow");
  }
  s->gran = l->hybrid ? l->min_block : l->span;
  if (s->gran < 1) s->gran = 1;
  /* a shared prefix (kv.optim.prefix): its whole blocks are cached once,
   * warm from the start (vLLM's automatic prefix caching hashes full blocks) */
  if (!s->contiguous && l->d.prefix >= s->gran) {
    int64_t b;
    s->prefix = l->d.prefix / s->gran * s->gran;
    TRY(kvp_ledger_seq_bytes(l, s->stage, s->prefix, &b));
    if (b >= s->pool)
      return kvp_fail(d, KVP_EINVAL, "the shared prefix of %lld tokens (%lld bytes) leaves no "
                      "room in the KV pool of %lld bytes", (long long)s->prefix, (long long)b,
                      (long long)s->pool);
    s->pool -= b;
  }
  s->free_bytes = s->pool;
  s->host_free = cfg->host_bytes;
  s->chunked = -1;
  s->ratio = cfg->init_new_token_ratio;
  s->tok_bytes = 1;
  s->attn_den1 = c->attn_peak * kvp_curve_at(&c->p.attn_flop, 1.0, c->attn_eff);
  s->plain = c->nterm == 1 && c->window[0] == 0;
  if (cfg->sched == KVP_SCHED_SGLANG) {
    int64_t b;
    TRY(kvp_ledger_seq_bytes(l, s->stage, s->gran, &b));
    s->tok_bytes = b / s->gran > 0 ? b / s->gran : 1;
  }
  kvp_rng_seed(&s->rng, cfg->seed);
  size_t un = (size_t)n;
  s->r = calloc(un, sizeof *s->r);
  s->order = malloc(un * sizeof *s->order);
  s->wq = malloc(un * sizeof *s->wq);
  s->run = malloc(un * sizeof *s->run);
  s->sch = malloc(un * sizeof *s->sch);
  s->transit = malloc(un * sizeof *s->transit);
  if (cfg->api_s > 0.0) s->api = malloc(un * sizeof *s->api);
  if (!s->r || !s->order || !s->wq || !s->run || !s->sch || !s->transit ||
      (cfg->api_s > 0.0 && !s->api)) {
    free_state(s);
    return kvp_fail(d, KVP_ENOMEM, "out of memory for %lld requests", (long long)n);
  }
  if (cfg->nalts < 0 || (cfg->nalts > 0 && cfg->alts == NULL)) {
    free_state(s);
    return kvp_fail(d, KVP_EINVAL, "alternatives: %lld of them without a list", (long long)cfg->nalts);
  }
  if (cfg->nalts > 0) {
    s->alt_memo = calloc((size_t)cfg->nalts, sizeof *s->alt_memo);
    s->alt_check = calloc((size_t)cfg->nalts, sizeof *s->alt_check);
    if (!s->alt_memo || !s->alt_check) {
      free_state(s);
      return kvp_fail(d, KVP_ENOMEM, "out of memory for %lld alternatives", (long long)cfg->nalts);
    }
  }
  for (int64_t k = 0; k < cfg->nalts; k++) {
    kvp_sim_alt *a = &cfg->alts[k];
    double r = a->request_s;
    if (a->c == NULL || !(isfinite(r) && r >= 0.0) || (cfg->phase != KVP_PHASE_BOTH && r > 0.0)) {
      free_state(s);
      return kvp_fail(d, KVP_EINVAL, "alternative %lld: a cost and a client time >= 0 s (0 "
                      "under a disaggregated phase) expected, got %g", (long long)k + 1,
                      kvp_shown(r));
    }
    a->same = same_but_host(a->c, c);
    /* the very cost: every step the same without comparing */
    s->alt_check[k] = memcmp(a->c, c, sizeof *c) != 0;
    a->ttft_mean = a->tpot_mean = 0.0;
  }
  return KVP_OK;
}

/* Request q's latencies from when it was sent, with the client time request_s. */
static void latencies(const state *s, const sreq *q, double request_s, double *ttft, double *e2e,
                      double *tpot) {
  *ttft = q->first - q->sent;
  *e2e = q->finish - q->sent;
  *tpot = q->output > 1 ? (q->finish - q->first) / (double)(q->output - 1) : -1.0;
  /* the client's time outside the engine's steps (HTTP, tokenization, the
   * first detokenization): in every latency it measures, in no step */
  *ttft += request_s;
  *e2e += request_s;
  if (s->cfg.phase == KVP_PHASE_PREFILL) { /* the first token waits for its KV's move */
    *ttft += s->cfg.kv_transfer_s;
    *e2e += s->cfg.kv_transfer_s;
  } else if (s->cfg.phase == KVP_PHASE_DECODE) {
    *ttft = q->output > 1 ? q->second - q->sent : 0.0;
    *tpot = q->output > 1 ? (q->finish - q->sent) / (double)(q->output - 1) : -1.0;
  }
}

static kvp_err results(state *s, kvp_sim *out) {
  size_t un = (size_t)s->n;
  out->ttft = malloc(un * sizeof *out->ttft);
  out->e2e = malloc(un * sizeof *out->e2e);
  out->tpot = malloc(un * sizeof *out->tpot);
  out->npreempt = malloc(un * sizeof *out->npreempt);
  if (!out->ttft || !out->e2e || !out->tpot || !out->npreempt) return KVP_ENOMEM;
  for (int64_t i = 0; i < s->n; i++) {
    sreq *q = &s->r[i];
    out->npreempt[i] = q->npreempt;
    latencies(s, q, s->cfg.request_s, &out->ttft[i], &out->e2e[i], &out->tpot[i]);
    if (q->finish > out->duration) out->duration = q->finish;
  }
  /* the alternatives that are this run: their latencies at their client time */
  for (int64_t k = 0; k < s->cfg.nalts; k++) {
    kvp_sim_alt *a = &s->cfg.alts[k];
    if (!a->same) continue;
    double *v = malloc(un * sizeof *v);
    if (v == NULL) return KVP_ENOMEM;
    for (int64_t i = 0; i < s->n; i++) {
      double e2e, tpot;
      latencies(s, &s->r[i], a->request_s, &v[i], &e2e, &tpot);
    }
    a->ttft_mean = kvp_mean_of(v, s->n);
    a->tpot_mean = kvp_mean_of(out->tpot, s->n); /* no client time in it */
    free(v);
  }
  return KVP_OK;
}

kvp_err kvp_sim_run(const kvp_ledger *l, const kvp_cost *c, const kvp_sim_config *cfg,
                    const kvp_request *req, int64_t n, kvp_sim *out, kvp_diag *d) {
  memset(out, 0, sizeof *out);
  TRY(kvp_check_count(n, 1, "requests", d));
  state s;
  TRY(setup(&s, l, c, cfg, n, d));
  int64_t total = 0;
  kvp_err e = check_requests(&s, req, n, &total, d);
  if (e != KVP_OK) {
    free_state(&s);
    return e;
  }
  if (cfg->phase == KVP_PHASE_DECODE && cfg->kv_transfer_s > 0.0) {
    /* the decode instance sees request i when its KV has arrived */
    kvp_request *moved = malloc((size_t)n * sizeof *moved);
    if (moved == NULL) {
      free_state(&s);
      return kvp_fail(d, KVP_ENOMEM, "out of memory for %lld requests", (long long)n);
    }
    for (int64_t i = 0; i < n; i++) {
      moved[i] = req[i];
      moved[i].arrival += cfg->kv_transfer_s;
    }
    s.moved = moved;
    req = moved;
  }
  int64_t bound = cfg->max_steps;
  /* every step computes at least one token: 64 x the workload's tokens
   * leaves room for heavy recomputation and still ends */
  if (bound == 0 && !chk_mul(total, 64, &bound)) bound = INT64_MAX;
  for (int64_t i = 0; i < n; i++) {
    s.order[i] = i;
    out->prompt_tokens += req[i].prompt;
  }
  sort_order(s.order, s.sch, n, req);
  out->n = n;
  out->pool_bytes = s.pool;
  out->block_bytes = s.contiguous ? 0 : l->stage[s.stage].block_bytes;
  int64_t next = 0, fin_at_start = 0; /* requests finished when the last step began */
  double step_start = -1.0;           /* when it began (-1: none yet) */
  while (s.finished < n) {
    /* what the client sent at the end of the step before reaches the engine now */
    for (int64_t k = 0; k < s.ntransit; k++) wait_back(&s, s.transit[k]);
    s.ntransit = 0;
    /* arrivals; a client with max_concurrency sends only while fewer are in
     * flight. One that arrived during the last step while a slot was free
     * went at once; one it held back goes now that one finished: in transit */
    while (next < n && req[s.order[next]].arrival <= s.now &&
           (cfg->max_concurrency == 0 || next - s.finished < cfg->max_concurrency)) {
      int64_t i = s.order[next];
      int held = cfg->max_concurrency > 0 &&
                 !(req[i].arrival > step_start && next - fin_at_start < cfg->max_concurrency);
      next++;
      if (cfg->phase == KVP_PHASE_DECODE && s.r[i].output == 1) {
        /* its only token came from the prefill instance: nothing to do here */
        sreq *q = &s.r[i];
        q->sent = q->first = q->second = q->finish = held ? s.now : req[i].arrival;
        q->done = 1;
        s.finished++;
        out->output_tokens += 1;
        continue;
      }
      if (cfg->api_s > 0.0) {
        /* the API server's FIFO: its work starts when the request is sent
         * or when the one before it is done, whichever is later */
        sreq *q = &s.r[i];
        q->sent = held ? s.now : req[i].arrival;
        s.api_free = (q->sent > s.api_free ? q->sent : s.api_free) + cfg->api_s;
        /* a finite api_s whose queue passes the largest double (1e308 s twice)
         * is the field's, not an infinite step's ("the run passes ...") */
        if (!isfinite(s.api_free)) {
          e = kvp_fail(d, KVP_EINVAL, "field 'api_s' = %g s: the API server's work of request "
                       "%lld ends past the largest double (expected seconds a request whose "
                       "queue ends at a finite time)", cfg->api_s, (long long)(i + 1));
          goto fail;
        }
        q->ready = s.api_free;
        s.api[s.napi++] = i;
      } else if (held) {
        s.r[i].sent = s.now;
        s.transit[s.ntransit++] = i;
      } else {
        s.r[i].sent = req[i].arrival;
        wait_back(&s, i);
      }
    }
    /* those whose API-server work is done reach the waiting queue (in FIFO
     * order, their ready times nondecreasing) */
    while (s.api_head < s.napi && s.r[s.api[s.api_head]].ready <= s.now)
      wait_back(&s, s.api[s.api_head++]);
    if (s.finished == n) break;
    if (s.nrun == 0 && s.wn == 0 && s.chunked < 0) {
      if (s.ntransit > 0) continue; /* an idle engine takes them at once */
      if (s.api_head < s.napi) {
        /* idle until the API server's next request is done or the next
         * arrival the client may send (not one max_concurrency holds back) */
        double t = s.r[s.api[s.api_head]].ready;
        if (next < n && req[s.order[next]].arrival < t &&
            (cfg->max_concurrency == 0 || next - s.finished < cfg->max_concurrency))
          t = req[s.order[next]].arrival;
        s.now = t;
      } else {
        s.now = req[s.order[next]].arrival; /* idle until the next arrival */
      }
      step_start = -1.0;                  /* no step runs: every slot is free */
      fin_at_start = s.finished;
      continue;
    }
    if (cfg->stop != NULL && *cfg->stop) {
      e = kvp_fail(d, KVP_EINVAL, "the simulation was stopped after %lld steps (%lld of %lld "
                   "requests done)", (long long)out->nsteps, (long long)s.finished, (long long)n);
      goto fail;
    }
    if (out->nsteps >= bound) {
      e = kvp_fail(d, KVP_EINVAL, "the simulation did not finish within %lld steps (%lld of "
                   "%lld requests done)", (long long)bound, (long long)s.finished, (long long)n);
      goto fail;
    }
    int64_t budget = cfg->max_num_batched_tokens;
    s.nsch = 0;
    s.step_preempted = 0;
    s.swap_bytes = 0.0;
    if (cfg->sched == KVP_SCHED_SGLANG) {
      e = sg_schedule(&s, out);
    } else {
      if (cfg->sched == KVP_SCHED_STATIC && s.nrun == 0) e = form_batch(&s, out);
      if (e == KVP_OK) e = schedule_running(&s, out, &budget);
      if (e == KVP_OK && cfg->sched != KVP_SCHED_STATIC && s.step_preempted == 0)
        e = admit_waiting(&s, out, &budget);
    }
    if (e != KVP_OK) goto fail;
    if (s.nsch == 0) {
      e = kvp_fail(d, KVP_EINVAL, "the scheduler found nothing to run with %lld waiting and "
                   "%lld running requests", (long long)s.wn, (long long)s.nrun);
      goto fail;
    }
    step_start = s.now;
    fin_at_start = s.finished;
    e = run_step(&s, out);
    if (e != KVP_OK) goto fail;
    /* finite step-time inputs whose step takes no finite time (perf.tflops =
     * 1e-320: flops / 1e-308 FLOP/s is inf; step_overhead_ms = 1e308 twice
     * passes the largest double): named, not a NaN latency in the results */
    if (!(isfinite(out->steps[out->nsteps - 1].seconds) && isfinite(s.now) &&
          isfinite(out->usage_mean))) {
      const kvp_perf *p = &c->p;
      /* and issue 18's rates and tile (index_tflops = 1e-320, gemm_tile_m =
       * 1e308, a busbw of 1e-320 GB/s named the rates above alone) */
      char nccl[64] = "";
      if (p->nccl_points > 0) {
        double lo = p->nccl_busbw[0];
        for (int32_t k = 1; k < p->nccl_points; k++) lo = fmin(lo, p->nccl_busbw[k]);
        snprintf(nccl, sizeof nccl, ", nccl_busbw from %.3g GB/s", lo);
      }
      e = kvp_fail(d, KVP_EINVAL, "step %lld takes %.3g s: the run passes the largest double "
                   "(expected step-time inputs of finite times: hbm_gbps %.3g x %.3g, tflops %.3g x "
                   "%.3g, step_overhead_ms %.3g, launch_us %.3g, seq_host_us %.3g, loop_host_us %.3g, "
                   "index_tflops %.3g, gemm_tile_m %.3g%s)",
                   (long long)out->nsteps, out->steps[out->nsteps - 1].seconds, p->hbm_gbps,
                   p->mem_eff, p->tflops, p->flop_eff, p->step_overhead_ms, p->launch_us,
                   p->seq_host_us, p->loop_host_us, p->index_tflops, p->gemm_tile_m, nccl);
      goto fail;
    }
  }
  e = results(&s, out);
  if (e != KVP_OK) goto fail;
  if (out->duration > 0.0) {
    out->usage_mean = s.pool > 0 ? out->usage_mean / out->duration / (double)s.pool : 0.0;
    out->throughput = (double)out->output_tokens / out->duration;
    out->requests_s = (double)n / out->duration;
  }
  out->usage_peak = s.pool > 0 ? (double)out->peak_bytes / (double)s.pool : 0.0;
  free_state(&s);
  return KVP_OK;
fail:
  free_state(&s);
  kvp_sim_free(out);
  if (e == KVP_ENOMEM) return kvp_fail(d, e, "out of memory for the simulation's timeline");
  return e;
}

/* ---- summaries ----------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double pct(const double *v, int64_t n, double q) {
  double pos = q * (double)(n - 1);
  int64_t lo = (int64_t)floor(pos);
  if (lo >= n - 1) return v[n - 1];
  double f = pos - (double)lo;
  return v[lo] + (v[lo + 1] - v[lo]) * f;
}

/* The sum of the values >= 0 of v, in order, and their count. */
static double sum_nonneg(const double *v, int64_t n, int64_t *m) {
  double sum = 0.0;
  *m = 0;
  for (int64_t i = 0; i < n; i++)
    if (v[i] >= 0.0) {
      (*m)++;
      sum += v[i];
    }
  return sum;
}

double kvp_mean_of(const double *v, int64_t n) {
  int64_t m;
  double sum = sum_nonneg(v, n, &m);
  return m > 0 ? sum / (double)m : 0.0;
}

void kvp_summarize(double *v, int64_t n, kvp_summary *out) {
  memset(out, 0, sizeof *out);
  int64_t m;
  double sum = sum_nonneg(v, n, &m);
  if (m == 0) return;
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++)
    if (v[i] >= 0.0) v[k++] = v[i];
  qsort(v, (size_t)m, sizeof *v, cmp_double);
  out->count = m;
  out->mean = sum / (double)m;
  out->p50 = pct(v, m, 0.50);
  out->p90 = pct(v, m, 0.90);
  out->p99 = pct(v, m, 0.99);
  out->max = v[m - 1];
}

void kvp_sim_goodput(const kvp_sim *s, double ttft, double tpot, double e2e, kvp_goodput *out) {
  memset(out, 0, sizeof *out);
  int t1 = isfinite(ttft) && ttft > 0.0, t2 = isfinite(tpot) && tpot > 0.0;
  int t3 = isfinite(e2e) && e2e > 0.0;
  for (int64_t i = 0; i < s->n; i++) {
    int a = t1 && s->ttft[i] > ttft, b = t2 && s->tpot[i] >= 0.0 && s->tpot[i] > tpot;
    int c = t3 && s->e2e[i] > e2e;
    out->miss_ttft += a;
    out->miss_tpot += b;
    out->miss_e2e += c;
    out->met += !(a || b || c);
  }
}
