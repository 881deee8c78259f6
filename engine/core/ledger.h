/*
 * ledger.h: the ledger's layout after its stages, private to the core
 * (ledger.c lays it out, kvp_ledger_size sizes it; vllm_kv.c reads the KV
 * cache types in it). kvplan.h has the ledger's public interface.
 * Pure computation: no Lua, no I/O.
 */
#ifndef KVP_LEDGER_H
#define KVP_LEDGER_H

#include <stddef.h>

#include "kvplan.h"

/* Stage s's groups and sums at the length points, packed after the stages. */
static inline kvp_group *ledger_groups_of(const kvp_ledger *l, int32_t s) {
  char *tail = (char *)l + offsetof(kvp_ledger, stage) + (size_t)l->cap_stages * sizeof(kvp_stage);
  return (kvp_group *)tail + (size_t)s * (size_t)l->cap_groups;
}

static inline int64_t *ledger_sums_of(const kvp_ledger *l, int32_t s) {
  int64_t *sums = (int64_t *)(ledger_groups_of(l, l->cap_stages));
  return sums + (size_t)s * (size_t)l->cap_points;
}

/* The KV cache types of vLLM's hybrid KV cache manager, after every stage's sums. */
static inline kvp_kv_type *ledger_types_of(const kvp_ledger *l) {
  return (kvp_kv_type *)ledger_sums_of(l, l->cap_stages);
}

#endif
