/*
 * vllm_kv.h: vLLM's KV cache manager as the ledger's evaluation calls it
 * (vllm_kv.c): the KV cache groups of a hybrid model, the switches that
 * change the layers, the blocks a request may take. Private to the core:
 * kvplan.h has the startup check and the workers' view.
 * Pure computation: no Lua, no I/O.
 */
#ifndef KVP_VLLM_KV_H
#define KVP_VLLM_KV_H

#include "kvplan.h"

/* Decide whether vLLM's grouping applies and lay it out: the types, the
 * group size, the block sizes and the unified page (the rules in vllm_kv.c's
 * header comment). May raise l->d.block (Mamba). spec_type[k] is the type of
 * the layers of spec k (-1: none); *draft_type the draft's. */
kvp_err kvp_vllm_plan_groups(kvp_ledger *l, int8_t *spec_type, int32_t *draft_type,
                             kvp_diag *diag);
/* Layer slots of one KV cache group on stage st (draft: st holds the draft's
 * layers). */
int64_t kvp_vllm_stage_group_size(const kvp_ledger *l, const kvp_stage *st,
                                  const int8_t *spec_type, int32_t draft_type, int draft);
/* Blocks one sequence of n tokens takes from the pool over all groups, and
 * the whole blocks of full and MLA groups that hold the first prefix
 * (bg) and the first prompt tokens of its request (br). */
kvp_err kvp_vllm_group_blocks(const kvp_ledger *l, int64_t n, int64_t *blocks, int64_t *bg,
                              int64_t *br);
/* 1 when vLLM pages the model's states (budget vllm, paged, recurrent
 * layers alone); the ledger then sets state_pages. */
int kvp_vllm_state_only(const kvp_ledger *l);
/* Round stage st's block bytes up to the MLA backend's block stride
 * alignment when the stage holds MLA layers (sets st->aligned). */
kvp_err kvp_vllm_align_block(const kvp_ledger *l, kvp_stage *st);
/* Weight bytes on one GPU of stage st: its layers' share over tp, the
 * routed experts over dp x tp under data or expert parallelism. */
kvp_err kvp_vllm_stage_weights(const kvp_ledger *l, const kvp_stage *st, int64_t *bytes);
/* decode_context_parallel_size against tp, the heads and the layer kinds
 * (vllm_kv.c); KVP_EINVAL naming what fails. */
kvp_err kvp_vllm_dcp_check(const kvp_ledger *l, kvp_diag *diag);
/* Layer spec as vLLM's V0 CacheEngine allocates it: an MLA entry rounded up to
 * vllm.mla_entry_align elements (the padding counted with the rope), any other
 * layer as it is. */
kvp_err kvp_vllm_mla_entry(const kvp_deploy *d, const kvp_layer *in, kvp_layer *out);
/* TurboQuant KV formats: checks the layers hold full attention (or states)
 * only, and on a model without recurrent layers keeps the first and last
 * min(2, layers / 2) layers in the model dtype (kv_auto), as vLLM's boundary
 * protection does. May change l->d.model (sets l->adjusted). */
kvp_err kvp_vllm_turboquant(kvp_ledger *l, kvp_diag *diag);
/* Blocks the sink managers take from the pool (SinkFullAttentionManager):
 * sink / block for every KV cache group of layers with static sinks. */
kvp_err kvp_vllm_sink_blocks(const kvp_ledger *l, int64_t *blocks, kvp_diag *diag);
/* Tokens of a MambaSpec block of a model of recurrent layers alone:
 * max_model_len without prefix caching (mamba_cache_mode none), else
 * mamba_block_size (the option, or the cache's block). */
int64_t kvp_vllm_state_block(const kvp_ledger *l);
/* Blocks of `block` tokens one layer of shape ly may take for a request of
 * len tokens by vLLM's max_memory_usage_bytes (a state: 1 + the speculative
 * blocks). */
int64_t kvp_vllm_usage_blocks(const kvp_ledger *l, const kvp_layer *ly, int64_t block,
                              int64_t len);

#endif
