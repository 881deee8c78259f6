/*
 * starts.h: would the engine start? The startup refusals of vLLM, SGLang
 * and TensorRT-LLM that are arithmetic on the ledger, and the verdict that
 * folds them into whether requests fit (starts.c).
 * Pure computation: no Lua, no I/O. Included by kvplan.h.
 */
#ifndef KVP_STARTS_H
#define KVP_STARTS_H

#include <stddef.h>
#include <stdint.h>

/* What the engine does at startup. */
typedef enum kvp_start_why {
  KVP_START_OK = 0,         /* starts as asked */
  KVP_START_CUT,            /* starts with a shorter limit than asked (limit): SGLang's
                             * max_req_len, TensorRT-LLM's reduced attention window */
  KVP_START_NO_FIT,         /* the deployment does not fit at all: the ledger's fit */
  KVP_START_VLLM_LEN,       /* vLLM: one request of max_model_len does not fit its KV cache */
  KVP_START_SGLANG_MEMORY,  /* SGLang: the pool holds no token */
  KVP_START_SGLANG_POOL,    /* SGLang: the pool is too small for one request */
  KVP_START_TRTLLM_BLOCK,   /* TensorRT-LLM: not one block of KV cache */
  KVP_START_TRTLLM_WINDOW,  /* TensorRT-LLM, fail_fast: one max_seq_len sequence does not fit */
  KVP_START_VLLM_MAMBA_SEQS, /* vLLM: max_num_seqs exceeds the pool's blocks of a model with
                             * Mamba layers under full CUDA graphs (needed: max_num_seqs,
                             * limit: the blocks) */
  KVP_START_VLLM_FREE,      /* vLLM V1: free memory at startup (the GPU's less system_memory)
                             * below total x gpu_memory_utilization */
  KVP_NSTART
} kvp_start_why;

typedef struct kvp_start {
  int32_t starts;     /* 1: the engine starts (KVP_START_OK or KVP_START_CUT) */
  kvp_start_why why;
  int64_t tokens;     /* SGLang, TensorRT-LLM: tokens of the KV pool */
  int64_t blocks;     /* TensorRT-LLM: blocks of the pool */
  int64_t limit;      /* CUT: the request length the engine keeps (SGLang max_req_len,
                       * TensorRT-LLM window); VLLM_LEN: vLLM's estimated maximum model
                       * length; SGLANG_POOL: max_req_input_len (<= 0) */
  int64_t needed;     /* VLLM_LEN: bytes one max_model_len request needs */
  int64_t available;  /* VLLM_LEN: bytes the check plans against on that worker */
} kvp_start;

/* Longest text kvp_start_explain writes, with its terminating zero. */
#define KVP_START_TEXT_MAX 512

/* The engine's startup answer for the evaluated ledger l, by its budget
 * rule (paged allocation; contiguous and other rules always start when
 * they fit). KVP_EINVAL for a NULL argument; other errors from vLLM's
 * check (kvp_vllm_check), an overflow named in diag (may be NULL) by the
 * field that sets the length checked and its value. */
kvp_err kvp_start_check(const kvp_ledger *l, kvp_start *out, kvp_diag *diag);
/* The engine's error (or the note of a CUT) in words into buf; "" when it
 * starts as asked. Returns what snprintf returns. */
int kvp_start_explain(const kvp_ledger *l, const kvp_start *s, char *buf, size_t n);

/* ---- the verdict: do the requests run? ---- */

/* Whether requests run on a deployment, and why not: the ledger's answer
 * (memory, context, tp and pp, max_num_seqs: kvp_ledger_fit or
 * kvp_ledger_max_concurrency) and, where that lets the requests in, the
 * engine's startup answer: an engine that refuses to start runs nothing,
 * fit.why = KVP_WHY_STARTS. Every reader of a fit takes it from here
 * (l:fit and l:max_concurrency, report rows, sweeps, kv.best, the
 * commands), so no two of them can disagree. */
typedef struct kvp_verdict {
  kvp_fit fit;        /* why the requests do not run (KVP_FITS: they do) */
  kvp_start start;    /* the engine's startup answer (kvp_start_check) */
} kvp_verdict;

/* The rule: fit f (of the ledger whose startup answer is s) lets the
 * requests in when it fits, or when only vLLM's scheduler caps how many run
 * (KVP_WHY_SEQS of kvp_ledger_max_concurrency, concurrency 0); then an
 * engine that does not start makes it KVP_WHY_STARTS. Inline: a sweep folds
 * every row. */
static inline void kvp_verdict_fold(kvp_fit *f, const kvp_start *s) {
  const int in = f->why == KVP_FITS || (f->why == KVP_WHY_SEQS && f->concurrency == 0);
  if (in && !s->starts) f->why = KVP_WHY_STARTS;
}
/* `concurrency` requests of `context` tokens: kvp_ledger_fit, folded
 * (diag, which may be NULL, as kvp_start_check's). */
kvp_err kvp_verdict_fit(const kvp_ledger *l, int64_t context, int64_t concurrency,
                        kvp_verdict *out, kvp_diag *diag);
/* Most concurrent requests of `context` tokens, *n as
 * kvp_ledger_max_concurrency (what the KV cache and max_num_seqs hold,
 * whether or not the engine starts), its why folded. */
kvp_err kvp_verdict_max_concurrency(const kvp_ledger *l, int64_t context, int64_t *n,
                                    kvp_verdict *out, kvp_diag *diag);
/* Smallest power-of-two tp <= max_tp of deployment d at which the
 * requests run (kvp_verdict_fit): *tp, 0 when none does. l (at least
 * kvp_ledger_size(d) bytes) is left holding the ledger of the last tp
 * tried and *out its verdict, which explains it. */
kvp_err kvp_verdict_min_tp(const kvp_deploy *d, int64_t context, int64_t concurrency,
                           int64_t max_tp, kvp_ledger *l, int64_t *tp, kvp_verdict *out,
                           kvp_diag *diag);
/* Why not in words: the engine's error for KVP_WHY_STARTS (s may be NULL
 * only for another why), else kvp_fit_explain; "" when the requests run.
 * Returns what snprintf returns. */
int kvp_verdict_explain(const kvp_ledger *l, const kvp_fit *f, const kvp_start *s, char *buf,
                        size_t n);

#endif
