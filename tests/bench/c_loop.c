/*
 * tests/bench/c_loop.c: the hand-written baseline of `make bench`: each
 * shape computed with the formulas kvplan applies to it (see
 * article_baseline.py for the rules), written with printf. Its output must be
 * byte-identical to kvplan's. Usage: c_loop SHAPE INPUTS (the facts kvplan
 * wrote with inputs=FILE).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* rep: the parameters every TP rank holds whole (shape b's facts give it) */
typedef struct { char id[64]; int64_t layers, heads, kvh, hd, hdv, params, maxctx, rep; } model;
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
 * under tp; shape d (lua 1): a filter (at least one request fits) and the KV
 * budget per request as a column; shape d2 (lua 2): the filter alone */
static void shape_b(int lua) {
  static const int64_t tps[] = {1, 2, 4, 8}, cc[] = {1, 2, 4, 8, 16, 32, 64, 128};
  printf("model,gpu,tp,context,concurrency,kv_bytes_per_token,kv_budget_gib,max_concurrency,fits%s\n",
         lua == 1 ? ",budget_per_request" : "");
  for (int i = 0; i < nm; i++)
    for (int j = 0; j < ng; j++)
      for (int t = 0; t < 4; t++) {
        int64_t tp = tps[t], h = m[i].kvh / tp > 1 ? m[i].kvh / tp : 1;
        int64_t per_tok = m[i].layers * 2 * h * m[i].hd * 2, block = 16 * per_tok;
        int64_t usable = (int64_t)floor((double)g[j].bytes * 0.9);
        int64_t rep = tp > 1 ? (m[i].rep < m[i].params ? m[i].rep : m[i].params) * 2 : 0;
        int64_t weights = cdiv(m[i].params * 2 - rep, tp) + rep;
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
            /* vLLM refuses to start when one request of max_model_len (the
             * model's context) does not fit the KV budget: no row fits then */
            int fits = live && conc * seq + block <= budget &&
                       cdiv(m[i].maxctx, 16) * block <= budget;
            printf("%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%.2f,%" PRId64 ",%s",
                   m[i].id, g[j].id, tp, ctx, conc, per_tok, gib(budget), maxc,
                   fits ? "true" : "false");
            if (lua == 1) printf(",%" PRId64, (budget > 0 ? budget : 0) / conc);
            printf("\n");
          }
        }
      }
}

/* shape c: optimization combinations over hybrid and MLA models (the rules
 * in article_baseline.py deployment_c) */
typedef struct { char kind[12]; int64_t window, kvh, hd, hdv, rank, rope, count; } shape;
typedef struct {
  char id[64];
  int64_t heads, weights[2][3]; /* on one GPU: [vLLM, SGLang][tp 1, 2] */
  int64_t gw[16][2][3];         /* the same on each GPU, in the gpu lines' order (cweights) */
  int ngw;
  format kv;
  shape sh[8];
  int nsh;
} cmodel;
static cmodel cm[16];
static int ncm;
static char combos[16][64];
static int ncombo;

static int64_t token_bits(const shape *l, int64_t tp, const format *f) {
  if (strcmp(l->kind, "mla") == 0) return format_bits(l->rank + l->rope, l->rank + l->rope, f);
  int64_t h = l->kvh / tp > 1 ? l->kvh / tp : 1;
  return format_bits(h * l->hd, l->hd, f) + format_bits(h * l->hdv, l->hdv, f);
}

static int64_t window_blocks(int64_t w, int64_t n, int64_t block) {
  return n <= w ? cdiv(n, block) : cdiv(w, block) + 1; /* span W - 1 + 1 */
}

static void shape_c(void) {
  static const format fp8 = {"fp8", 8, 0, 0, 0};
  const int64_t max_len = 8192, overhead = 1073741824LL;
  printf("model,gpu,optim,tp,context,concurrency,kv_budget_gib,max_concurrency,fits\n");
  for (int i = 0; i < ncm; i++)
    for (int j = 0; j < ng; j++)
      for (int c = 0; c < ncombo; c++)
        for (int64_t tp = 1; tp <= 2; tp++) {
          const cmodel *x = &cm[i];
          int sglang = strstr(combos[c], "budget-sglang") != NULL;
          int contiguous = strstr(combos[c], "contiguous") != NULL;
          const format *f = strstr(combos[c], "kv-fp8") ? &fp8 : &x->kv;
          int64_t block = sglang ? 1 : 16, usable, page[8], groups[8], block_bytes = 0;
          if (sglang) {
            int64_t free_ = g[j].bytes - overhead > 0 ? g[j].bytes - overhead : 0;
            usable = (int64_t)floor((double)free_ * (tp < 2 ? 0.88 : 0.87));
          } else {
            usable = (int64_t)floor((double)g[j].bytes * 0.9);
          }
          if (usable > g[j].bytes) usable = g[j].bytes;
          int64_t weights = j < x->ngw ? x->gw[j][sglang][tp] : x->weights[sglang][tp], reserved = sglang ? weights : weights + overhead;
          int64_t budget = usable - reserved;
          int ok = x->heads % tp == 0, classes = 0, full_seen = 0, win_seen[8], nwin = 0;
          for (int k = 0; k < x->nsh; k++) {
            const shape *l = &x->sh[k];
            if ((strcmp(l->kind, "full") == 0 || strcmp(l->kind, "sliding") == 0) &&
                !(tp <= l->kvh ? l->kvh % tp == 0 : tp % l->kvh == 0))
              ok = 0;
            page[k] = cdiv(block * token_bits(l, tp, f), 8);
            if (strcmp(l->kind, "sliding") != 0) {
              if (!full_seen) classes++;
              full_seen = 1;
            } else {
              int seen = 0;
              for (int q = 0; q < nwin; q++) seen |= win_seen[q] == l->window;
              if (!seen) {
                win_seen[nwin++] = (int)l->window;
                classes++;
              }
            }
          }
          int hybrid = !sglang && !contiguous && classes > 1;
          if (hybrid) {
            int64_t fewest = INT64_MAX, most = 0, gs = 0, pg = 0;
            for (int k = 0; k < x->nsh; k++) {
              if (x->sh[k].count < fewest) fewest = x->sh[k].count;
              if (x->sh[k].count > most) most = x->sh[k].count;
            }
            int64_t size = 2 * most < 3 * fewest ? most : fewest;
            for (int k = 0; k < x->nsh; k++) {
              groups[k] = cdiv(x->sh[k].count, size);
              if (cdiv(x->sh[k].count, groups[k]) > gs) gs = cdiv(x->sh[k].count, groups[k]);
              if (page[k] > pg) pg = page[k];
            }
            block_bytes = pg * gs;
          } else {
            for (int k = 0; k < x->nsh; k++) block_bytes += page[k] * x->sh[k].count;
          }
          int64_t null = !sglang && !contiguous ? block_bytes : 0, room;
          int no_block;
          if (sglang) {
            int64_t bits = 0;
            for (int k = 0; k < x->nsh; k++) bits += token_bits(&x->sh[k], tp, f) * x->sh[k].count;
            int64_t blocks = budget > 0 ? budget * 8 / bits : 0;
            room = blocks * block_bytes;
            no_block = blocks < 1;
          } else {
            room = budget;
            no_block = contiguous ? budget <= 0 : budget < block_bytes;
          }
          int fits_all = ok && weights <= usable && reserved <= usable && !no_block;
          for (int q = 0; q < nlen; q++) {
            int64_t n = lens[q], seq = 0;
            for (int k = 0; k < x->nsh; k++) {
              const shape *l = &x->sh[k];
              int sliding = strcmp(l->kind, "sliding") == 0;
              if (hybrid) {
                seq += (sliding ? window_blocks(l->window, n, block) : cdiv(n, block)) * groups[k];
              } else if (contiguous) {
                int64_t t = sliding && l->window < max_len ? l->window : max_len;
                seq += cdiv(t * token_bits(l, tp, f), 8) * l->count;
              } else {
                seq += (sliding ? window_blocks(l->window, n, block) : cdiv(n, block)) * page[k] *
                       l->count;
              }
            }
            if (hybrid) seq *= block_bytes;
            int live = fits_all && n <= max_len && seq + null <= room;
            int64_t maxc = live ? (room - null) / seq : 0;
            for (int r = 0; r < nconc; r++)
              printf("%s,%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%.2f,%" PRId64 ",%s\n", x->id,
                     g[j].id, combos[c], tp, n, concs[r], gib(budget), maxc,
                     live && concs[r] * seq + null <= room ? "true" : "false");
          }
        }
}

static int read_inputs(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char kind[16];
  while (fscanf(f, "%15s", kind) == 1) {
    if (strcmp(kind, "cmodel") == 0 && ncm < 16) {
      cmodel *x = &cm[ncm++];
      if (fscanf(f, "%63s %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64
                 " %" SCNd64 " %" SCNd64 " %" SCNd64, x->id, &x->heads, &x->weights[0][1],
                 &x->weights[0][2], &x->weights[1][1], &x->weights[1][2], &x->kv.bits,
                 &x->kv.group, &x->kv.scale, &x->kv.zero) != 10) return -1;
    } else if (strcmp(kind, "cweights") == 0 && ncm > 0 && cm[ncm - 1].ngw < 16) {
      cmodel *x = &cm[ncm - 1];
      int64_t(*w)[3] = x->gw[x->ngw++];
      char gid[64];
      if (fscanf(f, "%63s %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64, gid, &w[0][1], &w[0][2],
                 &w[1][1], &w[1][2]) != 5) return -1;
    } else if (strcmp(kind, "shape") == 0 && ncm > 0 && cm[ncm - 1].nsh < 8) {
      shape *l = &cm[ncm - 1].sh[cm[ncm - 1].nsh++];
      if (fscanf(f, "%11s %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64
                 " %" SCNd64, l->kind, &l->window, &l->kvh, &l->hd, &l->hdv, &l->rank, &l->rope,
                 &l->count) != 8) return -1;
    } else if (strcmp(kind, "combo") == 0 && ncombo < 16) {
      if (fscanf(f, "%63s", combos[ncombo++]) != 1) return -1;
    } else if (strcmp(kind, "model") == 0 && nm < 128) {
      model *x = &m[nm++];
      if (fscanf(f, "%63s %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64
                 " %" SCNd64, x->id, &x->layers, &x->heads, &x->kvh, &x->hd, &x->hdv, &x->params,
                 &x->maxctx) != 8) return -1;
      if (fscanf(f, " %" SCNd64, &x->rep) != 1) x->rep = 0; /* optional ninth field */
    } else if (strcmp(kind, "gpu") == 0 && ng < 128) {
      if (fscanf(f, "%63s %" SCNd64, g[ng].id, &g[ng].bytes) != 2) return -1;
      ng++;
    } else if ((strcmp(kind, "kv") == 0 && nkv < 8) || (strcmp(kind, "weights") == 0 && nw < 8)) {
      format *x = kind[0] == 'k' ? &kvf[nkv++] : &wf[nw++];
      if (fscanf(f, "%31s %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64, x->name, &x->bits,
                 &x->group, &x->scale, &x->zero) != 5) return -1;
    } else if (strcmp(kind, "lens") == 0 || strcmp(kind, "ctx") == 0 || strcmp(kind, "conc") == 0) {
      int isconc = strcmp(kind, "conc") == 0; /* lens and ctx: the length axis */
      int64_t *v = isconc ? concs : lens;
      int *n = isconc ? &nconc : &nlen, cap = isconc ? 64 : 4096, c;
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
    fprintf(stderr, "usage: c_loop a|b|c|d|d2 INPUTS (unreadable or malformed inputs)\n");
    return 2;
  }
  if (strcmp(argv[1], "a") == 0) shape_a();
  else if (strcmp(argv[1], "b") == 0) shape_b(0);
  else if (strcmp(argv[1], "c") == 0) shape_c();
  else if (strcmp(argv[1], "d") == 0) shape_b(1);
  else if (strcmp(argv[1], "d2") == 0) shape_b(2); /* the filter alone */
  else return 2;
  return 0;
}
