/*
 * starts.h: would the engine start? The startup refusals of vLLM, SGLang
 * and TensorRT-LLM that are arithmetic on the ledger (starts.c).
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
} kvp_start;

/* Longest text kvp_start_explain writes, with its terminating zero. */
#define KVP_START_TEXT_MAX 512

/* The engine's startup answer for the evaluated ledger l, by its budget
 * rule (paged allocation; contiguous and other rules always start when
 * they fit). KVP_EINVAL for a NULL argument; other errors from vLLM's
 * check (kvp_vllm_check). */
kvp_err kvp_start_check(const kvp_ledger *l, kvp_start *out);
/* The engine's error (or the note of a CUT) in words into buf; "" when it
 * starts as asked. Returns what snprintf returns. */
int kvp_start_explain(const kvp_ledger *l, const kvp_start *s, char *buf, size_t n);

#endif
