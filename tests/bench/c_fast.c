/*
 * tests/bench/c_fast.c: the physical limit of `make bench`'s pure C path:
 * a hand-tuned single-core CSV writer for shape (b), byte-identical to
 * kvplan's output. Everything that does not change from row to row is
 * formatted once (the deployment's prefix and figures, each context, each
 * concurrency), rows are assembled with memcpy into a 1 MiB buffer and
 * written with fwrite. The same formulas as c_loop.c. Usage: c_fast INPUTS.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* rep: the parameters every TP rank holds whole (shape b's facts give it) */
typedef struct { char id[64]; int64_t layers, heads, kvh, hd, hdv, params, maxctx, rep; } model;
typedef struct { char id[64]; int64_t bytes; } gpu;

static model m[128];
static gpu g[128];
static int nm, ng;
static int64_t contexts;
static char out[1 << 20];
static size_t olen;

static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

static void emit(const char *s, size_t n) {
  if (olen + n > sizeof out) {
    fwrite(out, 1, olen, stdout);
    olen = 0;
  }
  memcpy(out + olen, s, n);
  olen += n;
}

static size_t fmt_int(char *buf, int64_t v) {
  char tmp[24];
  size_t n = sizeof tmp;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    tmp[--n] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) tmp[--n] = '-';
  memcpy(buf, tmp + n, sizeof tmp - n);
  return sizeof tmp - n;
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
      if (fscanf(f, " %" SCNd64, &x->rep) != 1) x->rep = 0; /* optional ninth field */
    } else if (strcmp(kind, "gpu") == 0 && ng < 128) {
      if (fscanf(f, "%63s %" SCNd64, g[ng].id, &g[ng].bytes) != 2) return -1;
      ng++;
    } else if (strcmp(kind, "contexts") == 0) {
      if (fscanf(f, "%" SCNd64, &contexts) != 1) return -1;
    } else {
      return -1;
    }
  }
  fclose(f);
  return contexts > 0 && contexts <= 100000 ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc < 2 || read_inputs(argv[1]) < 0) {
    fprintf(stderr, "usage: c_fast INPUTS (unreadable or malformed inputs)\n");
    return 2;
  }
  static const int64_t tps[] = {1, 2, 4, 8}, cc[] = {1, 2, 4, 8, 16, 32, 64, 128};
  char conc_txt[8][24];
  size_t conc_len[8];
  for (int q = 0; q < 8; q++) {
    conc_txt[q][0] = ',';
    conc_len[q] = 1 + fmt_int(conc_txt[q] + 1, cc[q]);
    conc_txt[q][conc_len[q]++] = ',';
  }
  char (*ctx_txt)[24] = malloc((size_t)contexts * sizeof *ctx_txt);
  size_t *ctx_len = malloc((size_t)contexts * sizeof *ctx_len);
  if (!ctx_txt || !ctx_len) return 1;
  for (int64_t c = 0; c < contexts; c++) ctx_len[c] = fmt_int(ctx_txt[c], 512 * (c + 1));
  const char *hdr = "model,gpu,tp,context,concurrency,kv_bytes_per_token,kv_budget_gib,"
                    "max_concurrency,fits\n";
  emit(hdr, strlen(hdr));
  char pre[192], mid[96], tail[64];
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
        size_t np = (size_t)snprintf(pre, sizeof pre, "%s,%s,%" PRId64 ",", m[i].id, g[j].id, tp);
        size_t nmid = (size_t)snprintf(mid, sizeof mid, "%" PRId64 ",%.2f,", per_tok,
                                       (double)(budget > 0 ? budget : 0) / 1073741824.0);
        for (int64_t c = 0; c < contexts; c++) {
          int64_t ctx = 512 * (c + 1), seq = cdiv(ctx, 16) * block, live = ok && ctx <= m[i].maxctx;
          int64_t maxc = live ? (budget - block) / seq : 0;
          size_t nt = fmt_int(tail, maxc);
          tail[nt++] = ',';
          for (int q = 0; q < 8; q++) {
            /* vLLM refuses to start when one request of max_model_len (the
             * model's context) does not fit the KV budget */
            int fits = live && cc[q] * seq + block <= budget &&
                       cdiv(m[i].maxctx, 16) * block <= budget;
            emit(pre, np);
            emit(ctx_txt[c], ctx_len[c]);
            emit(conc_txt[q], conc_len[q]);
            emit(mid, nmid);
            emit(tail, nt);
            emit(fits ? "true\n" : "false\n", fits ? 5 : 6);
          }
        }
      }
  fwrite(out, 1, olen, stdout);
  free(ctx_txt);
  free(ctx_len);
  return fflush(stdout) == 0 ? 0 : 1;
}
