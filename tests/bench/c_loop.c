/*
 * tests/bench/c_loop.c: the hand-written baseline of `make bench`: each
 * shape computed with the formulas kvplan applies to it (see
 * seed_baseline.py for the rules), written with printf. Its output must be
 * byte-identical to kvplan's. Usage: c_loop SHAPE INPUTS (the facts kvplan
 * wrote with inputs=FILE).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { char id[64]; int64_t layers, heads, kvh, hd, hdv, params, maxctx; } model;
typedef struct { char id[64]; int64_t bytes; } gpu;
typedef struct { char name[32]; int64_t bits, group, scale, zero; } format;

static model m[128];
static gpu g[128];
static format kvf[8], wf[8];
static int nm, ng, nkv, nw;
static int64_t lens[4096], concs[64], contexts;
static int nlen, nconc;

static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

static int64_t format_bits(int64_t n, int64_t row, const format *f) {
  int64_t b = n * f->bits;
  if (f->group > 0) b += (row == 0 ? cdiv(n, f->group) : n / row * cdiv(row, f->group)) * (f->scale + f->zero);
  return b;
}

static double gib(int64_t v) { return (double)(v > 0 ? v : 0) / 1073741824.0; }

/* shape a: the article's rule, contiguous reservation of the sequence length */
static void shape_a(void) {
  printf("model,gpu,max_model_len,kv,weights,concurrency,weights_gib,kv_budget_gib,seq_bytes,"
         "max_concurrency,fits\n");
  for (int i = 0; i < nm; i++)
    for (int j = 0; j < ng; j++)
      for (int s = 0; s < nlen; s++)
        for (int k = 0; k < nkv; k++) {
          int64_t tb = format_bits(m[i].kvh * m[i].hd, m[i].hd, &kvf[k]) +
                       format_bits(m[i].kvh * m[i].hdv, m[i].hdv, &kvf[k]);
          int64_t seq = m[i].layers * cdiv(tb * lens[s], 8);
          for (int w = 0; w < nw; w++) {
            int64_t weights = cdiv(format_bits(m[i].params, 0, &wf[w]), 8);
            int64_t usable = (int64_t)floor((double)g[j].bytes * 0.95);
            if (usable > g[j].bytes) usable = g[j].bytes;
            int64_t reserved = weights + 2147483648LL, budget = usable - reserved;
            int ok = weights <= usable && reserved <= usable && budget > 0;
            for (int q = 0; q < nconc; q++)
              printf("%s,%s,%" PRId64 ",%s,%s,%" PRId64 ",%.2f,%.2f,%" PRId64 ",%" PRId64 ",%s\n",
                     m[i].id, g[j].id, lens[s], kvf[k].name, wf[w].name, concs[q], gib(weights),
                     gib(budget), seq, ok ? budget / seq : 0,
                     ok && concs[q] * seq <= budget ? "true" : "false");
          }
        }
}

/* shape b: vLLM's rule, paged KV with a null block, KV heads replicated
 * under tp; shape d (lua): a filter (at least one request fits) and the KV
 * budget per request as a column */
static void shape_b(int lua) {
  static const int64_t tps[] = {1, 2, 4, 8}, cc[] = {1, 2, 4, 8, 16, 32, 64, 128};
  printf("model,gpu,tp,context,concurrency,kv_bytes_per_token,kv_budget_gib,max_concurrency,fits%s\n",
         lua ? ",budget_per_request" : "");
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
        for (int64_t c = 1; c <= contexts; c++) {
          int64_t ctx = 512 * c, seq = cdiv(ctx, 16) * block, live = ok && ctx <= m[i].maxctx;
          int64_t maxc = live ? (budget - block) / seq : 0;
          if (lua && maxc < 1) continue;
          for (int q = 0; q < 8; q++) {
            int64_t conc = cc[q];
            int fits = live && conc * seq + block <= budget;
            printf("%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%.2f,%" PRId64 ",%s",
                   m[i].id, g[j].id, tp, ctx, conc, per_tok, gib(budget), maxc,
                   fits ? "true" : "false");
            if (lua) printf(",%" PRId64, (budget > 0 ? budget : 0) / conc);
            printf("\n");
          }
        }
      }
}

static int read_inputs(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char kind[16];
  while (fscanf(f, "%15s", kind) == 1) {
    if (strcmp(kind, "model") == 0 && nm < 128) {
      model *x = &m[nm++];
      if (fscanf(f, "%63s %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64
                 " %" SCNd64, x->id, &x->layers, &x->heads, &x->kvh, &x->hd, &x->hdv, &x->params,
                 &x->maxctx) != 8) return -1;
    } else if (strcmp(kind, "gpu") == 0 && ng < 128) {
      if (fscanf(f, "%63s %" SCNd64, g[ng].id, &g[ng].bytes) != 2) return -1;
      ng++;
    } else if ((strcmp(kind, "kv") == 0 && nkv < 8) || (strcmp(kind, "weights") == 0 && nw < 8)) {
      format *x = kind[0] == 'k' ? &kvf[nkv++] : &wf[nw++];
      if (fscanf(f, "%31s %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64, x->name, &x->bits,
                 &x->group, &x->scale, &x->zero) != 5) return -1;
    } else if (strcmp(kind, "lens") == 0 || strcmp(kind, "conc") == 0) {
      int64_t *v = kind[0] == 'l' ? lens : concs;
      int *n = kind[0] == 'l' ? &nlen : &nconc, cap = kind[0] == 'l' ? 4096 : 64, c;
      while ((c = fgetc(f)) != '\n' && c != EOF)
        if (c != ' ' && *n < cap) {
          ungetc(c, f);
          if (fscanf(f, "%" SCNd64, &v[(*n)++]) != 1) return -1;
        }
    } else if (strcmp(kind, "contexts") == 0) {
      if (fscanf(f, "%" SCNd64, &contexts) != 1) return -1;
    } else {
      return -1;
    }
  }
  fclose(f);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3 || read_inputs(argv[2]) < 0) {
    fprintf(stderr, "usage: c_loop a|b|d INPUTS (unreadable or malformed inputs)\n");
    return 2;
  }
  if (strcmp(argv[1], "a") == 0) shape_a();
  else if (strcmp(argv[1], "b") == 0) shape_b(0);
  else if (strcmp(argv[1], "d") == 0) shape_b(1);
  else return 2;
  return 0;
}
