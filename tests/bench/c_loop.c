/*
 * tests/bench/c_loop.c: the hand-written baseline of `make bench`: the same
 * sweep as sweep.lua, computed with the same formula (vLLM budget, paged KV
 * with a null block, kv heads replicated under TP) for dense full-attention
 * models, written with printf. Reads the facts kvplan wrote (inputs file).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { char id[64]; int64_t layers, heads, kvh, hd, params, maxctx; } model;
typedef struct { char id[64]; int64_t bytes; } gpu;

static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  FILE *f = fopen(argv[1], "r");
  if (!f) return 1;
  static model m[64];
  static gpu g[128];
  int nm = 0, ng = 0;
  int64_t contexts = 0;
  char kind[16];
  while (fscanf(f, "%15s", kind) == 1) {
    if (strcmp(kind, "model") == 0 && nm < 64) {
      model *x = &m[nm++];
      if (fscanf(f, "%63s %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64,
                 x->id, &x->layers, &x->heads, &x->kvh, &x->hd, &x->params, &x->maxctx) != 7)
        return 1;
    } else if (strcmp(kind, "gpu") == 0 && ng < 128) {
      if (fscanf(f, "%63s %" SCNd64, g[ng].id, &g[ng].bytes) != 2) return 1;
      ng++;
    } else if (strcmp(kind, "contexts") == 0) {
      if (fscanf(f, "%" SCNd64, &contexts) != 1) return 1;
    }
  }
  fclose(f);
  static const int64_t tps[] = {1, 2, 4, 8}, concs[] = {1, 2, 4, 8, 16, 32, 64, 128};
  printf("model,gpu,tp,context,concurrency,kv_bytes_per_token,kv_budget_gib,max_concurrency,fits\n");
  for (int i = 0; i < nm; i++)
    for (int j = 0; j < ng; j++)
      for (int t = 0; t < 4; t++) {
        int64_t tp = tps[t], h = m[i].kvh / tp > 1 ? m[i].kvh / tp : 1;
        int64_t per_tok = m[i].layers * 2 * h * m[i].hd * 2, block = 16 * per_tok;
        int64_t usable = (int64_t)floor((double)g[j].bytes * 0.9);
        int64_t weights = cdiv(m[i].params * 2, tp);
        int ok_tp = m[i].heads % tp == 0 &&
                    (tp <= m[i].kvh ? m[i].kvh % tp == 0 : tp % m[i].kvh == 0);
        int64_t budget = usable - weights;
        int ok = ok_tp && weights <= usable && budget >= block;
        for (int64_t c = 1; c <= contexts; c++)
          for (int q = 0; q < 8; q++) {
            int64_t ctx = 512 * c, conc = concs[q], maxc = 0, fits = 0;
            if (ok && ctx <= m[i].maxctx) {
              int64_t seq = cdiv(ctx, 16) * block;
              maxc = (budget - block) / seq;
              fits = conc * seq + block <= budget;
            }
            printf("%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%.2f,%" PRId64 ",%s\n",
                   m[i].id, g[j].id, tp, ctx, conc, per_tok,
                   (double)(budget > 0 ? budget : 0) / 1073741824.0, maxc,
                   fits ? "true" : "false");
          }
      }
  return 0;
}
