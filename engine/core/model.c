/*
 * model.c: the architecture description and its validation.
 * Pure computation: no Lua, no I/O.
 *
 * Layers are runs of layer kinds (vLLM's KV cache specs,
 * vllm/v1/kv_cache_interface.py): a model holds a few
 * distinct layer shapes and, per layer, the index of its shape.
 */
#include <stdio.h>
#include <string.h>

#include "kvplan.h"
#include "core.h"
#include "checked.h"
#include "diag.h"

static const char *const kind_names[KVP_NKINDS] = {
  "full", "sliding", "chunked", "mla", "state", "none", "cross"
};

const char *kvp_kind_name(kvp_kind k) {
  return (k >= 0 && k < KVP_NKINDS) ? kind_names[k] : "?";
}

kvp_err kvp_model_init(kvp_model *m, int64_t layers, int64_t hidden, int64_t heads,
                       int64_t kv_heads, int64_t head_dim, kvp_diag *d) {
  memset(m, 0, sizeof *m);
  TRY(kvp_check_count(layers, 1, "layers", d));
  if (layers > KVP_MAX_LAYERS)
    return kvp_fail(d, KVP_EINVAL, "field 'layers' must be at most %d, got %lld",
                    KVP_MAX_LAYERS, (long long)layers);
  TRY(kvp_check_count(hidden, 1, "hidden", d));
  TRY(kvp_check_count(heads, 1, "heads", d));
  TRY(kvp_check_count(kv_heads, 1, "kv_heads", d));
  TRY(kvp_check_count(head_dim, 1, "head_dim", d));
  m->layers = layers;
  m->hidden = hidden;
  m->heads = heads;
  m->nspec = 1;
  m->spec[0].kind = KVP_FULL;
  m->spec[0].kv_heads = kv_heads;
  m->spec[0].head_dim = head_dim;
  m->spec[0].head_dim_v = head_dim;
  return KVP_OK;
}

/* Check one layer shape; `what` names it in messages ("layer_kinds[2]"). */
static kvp_err check_layer(const kvp_layer *l, const char *what, kvp_diag *d) {
  switch (l->kind) {
    case KVP_SLIDING:
    case KVP_CHUNKED:
    case KVP_CROSS:
      if (l->window < 1)
        return kvp_fail(d, KVP_EINVAL, "field '%s.window' must be an integer >= 1, got %lld",
                        what, (long long)l->window);
      /* fall through */
    case KVP_FULL:
      if (l->sink < 0)
        return kvp_fail(d, KVP_EINVAL, "field '%s.sink_len' must be >= 0, got %lld", what,
                        (long long)l->sink);
      if (l->kv_heads < 1 || l->head_dim < 1 || l->head_dim_v < 1)
        return kvp_fail(d, KVP_EINVAL,
                        "field '%s': kv_heads, head_dim and head_dim_v must be >= 1, got %lld, %lld and %lld",
                        what, (long long)l->kv_heads, (long long)l->head_dim,
                        (long long)l->head_dim_v);
      return KVP_OK;
    case KVP_MLA:
      if (l->latent < 1 || l->rope_dim < 0)
        return kvp_fail(d, KVP_EINVAL,
                        "field '%s': MLA needs kv_lora_rank >= 1 and rope_dim >= 0, got %lld and %lld",
                        what, (long long)l->latent, (long long)l->rope_dim);
      /* a sparse-attention indexer: heads and top-k together, on its cached keys */
      if (l->index_heads < 0 || l->index_topk < 0 || (l->index_heads > 0) != (l->index_topk > 0) ||
          (l->index_topk > 0 && l->index_dim < 1))
        return kvp_fail(d, KVP_EINVAL,
                        "field '%s': a sparse-attention indexer needs index_n_heads >= 1, "
                        "index_topk >= 1 and index_head_dim >= 1 together (or none), got %lld, "
                        "%lld and %lld", what, (long long)l->index_heads,
                        (long long)l->index_topk, (long long)l->index_dim);
      return KVP_OK;
    case KVP_STATE:
      if (l->state_bytes < 1 || l->kv_heads < 1 || l->state_bytes % l->kv_heads != 0)
        return kvp_fail(d, KVP_EINVAL,
                        "field '%s': state_bytes (%lld) must be >= 1 and split evenly over %lld state heads",
                        what, (long long)l->state_bytes, (long long)l->kv_heads);
      return KVP_OK;
    case KVP_NONE:
      return KVP_OK;
    default:
      return kvp_fail(d, KVP_EINVAL, "field '%s.kind' is not a layer kind (%d)", what,
                      (int)l->kind);
  }
}

int kvp_same_layer(const kvp_layer *a, const kvp_layer *b) {
  return a->kind == b->kind && a->kv_heads == b->kv_heads && a->head_dim == b->head_dim &&
         a->head_dim_v == b->head_dim_v && a->window == b->window &&
         a->latent == b->latent && a->rope_dim == b->rope_dim &&
         a->state_bytes == b->state_bytes && a->index_dim == b->index_dim &&
         a->index_heads == b->index_heads && a->index_topk == b->index_topk &&
         a->kv_auto == b->kv_auto && a->sink == b->sink;
}

kvp_err kvp_model_set_pattern(kvp_model *m, const kvp_layer *runs, const int64_t *counts,
                              int nruns, kvp_diag *d) {
  if (nruns < 1)
    return kvp_fail(d, KVP_EINVAL, "field 'layer_kinds' must hold at least one run, got %d",
                    nruns);
  uint8_t run_spec[256];
  if (nruns > 256)
    return kvp_fail(d, KVP_EINVAL, "field 'layer_kinds' holds %d runs, at most 256", nruns);
  int nspec = 0;
  kvp_layer spec[KVP_MAX_SPECS];
  for (int i = 0; i < nruns; i++) {
    char what[32];
    snprintf(what, sizeof what, "layer_kinds[%d]", i + 1);
    if (counts[i] < 1)
      return kvp_fail(d, KVP_EINVAL, "field '%s.n' must be an integer >= 1, got %lld", what,
                      (long long)counts[i]);
    TRY(check_layer(&runs[i], what, d));
    int s = 0;
    while (s < nspec && !kvp_same_layer(&spec[s], &runs[i])) s++;
    if (s == nspec) {
      if (nspec == KVP_MAX_SPECS)
        return kvp_fail(d, KVP_EINVAL, "field 'layer_kinds' has more than %d distinct layer shapes",
                        KVP_MAX_SPECS);
      spec[nspec++] = runs[i];
    }
    run_spec[i] = (uint8_t)s;
  }
  int64_t layer = 0;
  while (layer < m->layers)
    for (int i = 0; i < nruns && layer < m->layers; i++)
      for (int64_t k = 0; k < counts[i] && layer < m->layers; k++)
        m->layer_spec[layer++] = run_spec[i];
  memcpy(m->spec, spec, sizeof spec[0] * (size_t)nspec);
  m->nspec = nspec;
  return KVP_OK;
}

kvp_err kvp_model_check(const kvp_model *m, kvp_diag *d) {
  TRY(kvp_check_count(m->layers, 1, "layers", d));
  if (m->layers > KVP_MAX_LAYERS)
    return kvp_fail(d, KVP_EINVAL, "field 'layers' must be at most %d, got %lld",
                    KVP_MAX_LAYERS, (long long)m->layers);
  TRY(kvp_check_count(m->hidden, 1, "hidden", d));
  /* a model without attention layers (Mamba) has no attention heads */
  int attention = 0;
  for (int64_t i = 0; i < m->layers && i < KVP_MAX_LAYERS; i++) {
    kvp_kind k = m->layer_spec[i] < m->nspec ? m->spec[m->layer_spec[i]].kind : KVP_FULL;
    attention |= k != KVP_STATE && k != KVP_NONE;
  }
  TRY(kvp_check_count(m->heads, attention ? 1 : 0, "heads", d));
  TRY(kvp_check_count(m->params, 0, "params", d));
  TRY(kvp_check_count(m->linear_shards, 0, "linear_shards", d));
  TRY(kvp_check_count(m->linear_cols, 0, "linear_cols", d));
  TRY(kvp_check_count(m->active, 0, "active", d));
  if (m->active > m->params)
    return kvp_fail(d, KVP_EINVAL, "field 'active' (%lld) exceeds 'params' (%lld)",
                    (long long)m->active, (long long)m->params);
  TRY(kvp_check_count(m->max_context, 0, "max_context", d));
  if (m->nspec < 1 || m->nspec > KVP_MAX_SPECS)
    return kvp_fail(d, KVP_EINVAL, "model has %d layer shapes, expected 1..%d", (int)m->nspec,
                    KVP_MAX_SPECS);
  for (int s = 0; s < m->nspec; s++) TRY(check_layer(&m->spec[s], "layer_kinds", d));
  for (int64_t i = 0; i < m->layers; i++)
    if (m->layer_spec[i] >= m->nspec)
      return kvp_fail(d, KVP_EINVAL, "layer %lld refers to missing shape %d", (long long)i,
                      (int)m->layer_spec[i]);
  return KVP_OK;
}

void kvp_model_kind_counts(const kvp_model *m, int64_t counts[KVP_NKINDS]) {
  for (int k = 0; k < KVP_NKINDS; k++) counts[k] = 0;
  if (m->nspec == 1) { /* one layer shape: no walk (a sweep asks once per deployment) */
    counts[m->spec[0].kind] = m->layers;
    return;
  }
  for (int64_t i = 0; i < m->layers; i++) counts[m->spec[m->layer_spec[i]].kind]++;
}
