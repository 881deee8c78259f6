/*
 * sweep_text_lua.c: the text of a sweep's rows: each built-in column's value
 * and CSV text, the deployment's and context's columns kept as segments
 * while neither changes, the fast path that assembles a row from them in
 * one buffer, the Lua columns' values, and the declarative filter on the
 * columns' values (sweep_lua.h).
 * Binding layer: calls the core for the values, the writer (csvw.c, fmtw.c)
 * for the text, and the row table (sweep_row_lua.c) for Lua columns.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fmtw.h"
#include "sweep_lua.h"

/* The step times of a row (roofline.c), from the costs of its ledger,
 * derived once per ledger. */
static void write_time(lua_State *L, run *r, kvp_csv *w, const kvp_sweep_row *row,
                       const column *c) {
  /* a range column: the figure at the factors' slow end (perf[1]: the low
   * throughput, the high latencies) or fast end (perf[2]) */
  kvp_cost *cost = &r->t.cost;
  int64_t *cost_id = &r->t.cost_id;
  /* the rates of the row's weight format (its compute rate and GEMM curves) */
  const kvp_perf *perf = &r->perf[r->nperf > 1 ? 3 * row->pos[KVP_AX_WEIGHTS] : 0];
  if (c->id >= C_TPOT_MS_LO) {
    int fast = c->id == C_TPOT_MS_LO || c->id == C_TTFT_MS_LO || c->id == C_TOKENS_PER_S_HI;
    cost = &r->t.range_cost[fast];
    cost_id = &r->t.range_id[fast];
    perf += 1 + fast;
  }
  if (*cost_id != row->ledger_id) {
    kvp_diag d = {{0}};
    kvp_err e = kvp_cost_init(cost, row->ledger, perf, &d);
    if (e != KVP_OK) kvl_core_error(L, e, &d, "step time");
    *cost_id = row->ledger_id;
  }
  kvp_time t;
  if (kvp_time_at(cost, row->context, row->concurrency, &t) != KVP_OK)
    kvl_time_error(L, cost, &t, row->context, row->concurrency);
  double v = 0.0;
  int prec = 4;
  switch (c->id) {
    case C_BOUND:
      kvp_csv_raw(w, t.compute_bound ? "compute" : "memory", t.compute_bound ? 7 : 6);
      return;
    case C_TPOT_MS: case C_TPOT_MS_LO: case C_TPOT_MS_HI: v = t.tpot_s * 1e3; break;
    case C_TTFT_MS: case C_TTFT_MS_LO: case C_TTFT_MS_HI: v = t.ttft_s * 1e3; break;
    case C_TOKENS_PER_S: case C_TOKENS_PER_S_LO: case C_TOKENS_PER_S_HI:
      v = t.tokens_per_s;
      prec = 1;
      break;
    case C_KV_READ_SHARE: v = t.kv_read_share; break;
    case C_STEPS_PER_TOKEN: v = t.steps_per_token; break;
    case C_KV_WRITE_BYTES_PER_TOKEN: v = t.kv_write_bytes_per_token; prec = 1; break;
    default: v = t.usd_per_mtok; break;
  }
  kvp_csv_fixed(w, v, c->prec >= 0 ? c->prec : prec);
}

/* Bytes a buffer keeps beyond its text, so that copy_short may copy a
 * whole 64- or 128-byte block. */
#define SLACK 128

/* Copy n bytes from src (readable up to n rounded up to 64, or 128) to dst
 * (writable as far): short fields in one fixed-size copy, no call. */
static inline char *copy_short(char *dst, const char *src, size_t n) {
  if (n <= 64) memcpy(dst, src, 64);
  else if (n <= 128) memcpy(dst, src, 128);
  else memcpy(dst, src, n);
  return dst + n;
}

/* Room for n more bytes of the segment's text. */
static void seg_grow(lua_State *L, segment *g, size_t n) {
  size_t cap = g->cap ? g->cap : 256;
  while (cap < g->len + n + SLACK) cap *= 2;
  char *t = realloc(g->txt, cap);
  if (t == NULL) kvl_error(L, "out of memory for the sweep");
  g->txt = t;
  g->cap = cap;
}

/* Append n bytes to the segment's text. */
static inline void seg_put(lua_State *L, segment *g, const char *p, size_t n) {
  if (g->len + n + SLACK > g->cap) seg_grow(L, g, n); /* SLACK: copy_short may read past the end */
  memcpy(g->txt + g->len, p, n);
  g->len += n;
}

/* A label, quoted when it holds a comma, a quote or a line break. */
static void seg_label(lua_State *L, segment *g, const label *lb) {
  if (!lb->quote) {
    seg_put(L, g, lb->s, lb->len);
    return;
  }
  seg_put(L, g, "\"", 1);
  for (size_t k = 0; k < lb->len; k++) {
    if (lb->s[k] == '"') seg_put(L, g, "\"", 1);
    seg_put(L, g, &lb->s[k], 1);
  }
  seg_put(L, g, "\"", 1);
}

/* The CSV text of the value at idx returned by the Lua column cols[col + 1]
 * into g (quoted when it needs to be); prec >= 0: a float at that many
 * digits. */
static void lua_value_text(lua_State *L, segment *g, int idx, int cols, int col, int prec) {
  char buf[400];
  g->len = 0;
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER: {
      if (lua_isinteger(L, idx)) { /* a float of integer value stays a float */
        seg_put(L, g, buf, kvp_fmt_int(buf, (int64_t)lua_tointeger(L, idx)));
        return;
      }
      double v = lua_tonumber(L, idx);
      if (v != v || v - v != 0) break;
      if (prec < 0) {
        seg_put(L, g, buf, kvp_fmt_double(buf, v));
        return;
      }
      int n = kvp_fmt_fixed(buf, sizeof buf, v, prec);
      if (n < 0) break;
      seg_put(L, g, buf, (size_t)n);
      return;
    }
    case LUA_TBOOLEAN:
      if (lua_toboolean(L, idx)) seg_put(L, g, "true", 4);
      else seg_put(L, g, "false", 5);
      return;
    case LUA_TSTRING: {
      label lb = {0};
      lb.s = lua_tolstring(L, idx, &lb.len);
      lb.quote = kvp_csv_needs_quotes(lb.s, lb.len);
      seg_label(L, g, &lb);
      return;
    }
    default: {
      lua_geti(L, cols, col + 1);
      const char *name = lua_tostring(L, -1);
      kvl_error(L, "column '%s' must be a number, string or boolean, %s", name, kvl_got(L, idx));
    }
  }
  lua_geti(L, cols, col + 1);
  const char *name = lua_tostring(L, -1);
  kvl_error(L, "column '%s' has no finite value (%s)", name, kvl_got(L, idx));
}

static const label *label_of(const run *r, const column *c, const kvp_sweep_row *row) {
  if (c->id == C_KV) return &r->kvn[row->pos[KVP_AX_KV]];
  if (c->id == C_WEIGHTS) return &r->wn[row->pos[KVP_AX_WEIGHTS]];
  if (c->label <= r->ax.naxis && r->uax[c->label - 1].field != KVP_FIELD_BASE)
    return &r->alab[c->label - 1][row->apos[c->label - 1]];
  if (c->label == r->kv_label && r->optim_axis >= 0 && r->okv[row->apos[r->optim_axis]].s)
    return &r->okv[row->apos[r->optim_axis]]; /* the combination's KV format */
  return &r->lab[c->label - 1];
}

/* The value of an integer built-in column (bytes for the GiB columns). */
static int64_t number_value(col_id id, const kvp_sweep_row *row) {
  const kvp_ledger *l = row->ledger;
  const kvp_stage *st = l->nstage ? &l->stage[l->tight] : NULL;
  int64_t v = 0;
  switch (id) {
    case C_SEQ_BYTES:
      if (st == NULL || kvp_ledger_seq_bytes(l, l->tight, row->context, &v) != KVP_OK) v = 0;
      break;
    case C_ROW: v = row->index + 1; break;
    case C_TP: v = l->d.tp; break;
    case C_PP: v = l->d.pp; break;
    case C_CONTEXT: v = row->context; break;
    case C_CONCURRENCY: v = row->concurrency; break;
    case C_GPU_BYTES: case C_GPU_GIB: v = l->total; break;
    case C_USABLE_BYTES: case C_USABLE_GIB: v = l->usable; break;
    case C_WEIGHTS_BYTES: case C_WEIGHTS_GIB: v = st ? st->weights : 0; break;
    case C_ACTIVATION_BYTES: case C_ACTIVATION_GIB: v = l->d.activation_bytes; break;
    case C_OVERHEAD_BYTES: case C_OVERHEAD_GIB: v = l->d.overhead_bytes; break;
    case C_KV_BUDGET_BYTES: case C_KV_BUDGET_GIB: v = st ? gib_num(st->kv_budget) : 0; break;
    case C_KV_BLOCKS: v = (l->fit.why == KVP_FITS && st) ? st->blocks : 0; break;
    case C_KV_TOKENS: v = kvp_ledger_kv_tokens(l); break;
    case C_MAX_CONCURRENCY: v = row->max_concurrency; break;
    case C_MAX_CONTEXT: v = row->max_context; break;
    case C_STARTS: v = row->start != NULL && row->start->starts; break;
    default: break;
  }
  return v;
}

/* The text of a numeric built-in column into buf (48 bytes). */
static size_t number_text(const column *c, const kvp_sweep_row *row, char *buf) {
  if (c->id == C_STARTS) {
    int yes = row->start != NULL && row->start->starts;
    memcpy(buf, yes ? "true" : "false", yes ? 4 : 5);
    return yes ? 4 : 5;
  }
  if (c->id == C_KV_BYTES_PER_TOKEN) {
    const kvp_ledger *l = row->ledger;
    int64_t bits = l->nstage ? l->stage[l->tight].token_bits : 0;
    return bits % 8 == 0 ? kvp_fmt_int(buf, bits / 8) : kvp_fmt_double(buf, (double)bits / 8.0);
  }
  int64_t v = number_value(c->id, row);
  if (c->id >= C_GPU_GIB && c->id <= C_KV_BUDGET_GIB) {
    gib_memo *mm = c->memo;
    if (mm == NULL) return kvp_fmt_scaled(buf, v, 30, c->prec);
    uint64_t u = (uint64_t)v;
    size_t k = (size_t)((u ^ (u >> 17) ^ (u >> 31)) % GIB_MEMO);
    if (mm->len[k] == 0 || mm->v[k] != v) {
      size_t n = kvp_fmt_scaled(buf, v, 30, c->prec);
      if (n >= sizeof mm->txt[k]) return n;
      memcpy(mm->txt[k], buf, n);
      mm->len[k] = (uint8_t)n;
      mm->v[k] = v;
      return n;
    }
    memcpy(buf, mm->txt[k], mm->len[k]);
    return mm->len[k];
  }
  return kvp_fmt_int(buf, v);
}

/* Group the columns into segments (sweep_lua.h). */
void kvl_sweep_plan(lua_State *L, run *r) {
  r->t.segs = xcalloc(L, (size_t)r->ncol, sizeof *r->t.segs);
  r->t.nseg = 0;
  for (int i = 0; i < r->ncol; i++) {
    segment *g = r->t.nseg > 0 ? &r->t.segs[r->t.nseg - 1] : NULL;
    int dep = r->cols[i].dep;
    if (dep != DEP_ROW && g != NULL && g->dep == dep) {
      g->count++;
      continue;
    }
    g = &r->t.segs[r->t.nseg++];
    g->first = i;
    g->count = 1;
    g->dep = dep;
  }
  for (int i = 0; i < r->ncol; i++)
    if (r->cols[i].id >= C_GPU_GIB && r->cols[i].id <= C_KV_BUDGET_GIB && r->cols[i].dep != DEP_ROW &&
        r->cols[i].prec <= 17)
      r->cols[i].memo = xcalloc(L, 1, sizeof *r->cols[i].memo);
  r->t.fast = 1;
  for (int i = 0; i < r->ncol; i++) {
    col_id id = r->cols[i].id;
    if (id == C_WHY || id >= C_TPOT_MS) r->t.fast = 0;
  }
  /* the fast path's template: chunks of consecutive kept segments */
  r->t.luatxt = xcalloc(L, (size_t)r->nlua, sizeof *r->t.luatxt);
  r->t.chunks = xcalloc(L, (size_t)r->t.nseg, sizeof *r->t.chunks);
  r->t.items = xcalloc(L, (size_t)r->t.nseg, sizeof *r->t.items);
  for (int j = 0; j < r->t.nseg; j++) {
    if (r->t.segs[j].dep == DEP_ROW) {
      r->t.items[r->t.nitem++] = -r->t.segs[j].first - 1;
      r->t.nfield++;
    } else if (j > 0 && r->t.segs[j - 1].dep != DEP_ROW) {
      r->t.chunks[r->t.nchunk - 1].count++;
    } else {
      r->t.chunks[r->t.nchunk].first = j;
      r->t.chunks[r->t.nchunk].count = 1;
      r->t.items[r->t.nitem++] = r->t.nchunk++;
    }
  }
}

/* Refresh the kept text of a segment for this row if its deployment or
 * context changed. */
static void seg_rebuild(lua_State *L, run *r, segment *g, const kvp_sweep_row *row, int64_t kc) {
  char buf[48];
  g->len = 0;
  for (int i = g->first; i < g->first + g->count; i++) {
    const column *c = &r->cols[i];
    if (i > g->first) seg_put(L, g, ",", 1);
    if (c->id == C_LABEL || c->id == C_KV || c->id == C_WEIGHTS) seg_label(L, g, label_of(r, c, row));
    else seg_put(L, g, buf, number_text(c, row, buf));
  }
  g->valid = 1;
  g->gen = row->gen;
  g->ci = kc;
}

#define SEG_REFRESH(L, r, g, row)                                                   \
  do {                                                                              \
    int64_t kc_ = (g)->dep == DEP_CTX ? (row)->pos[KVP_AX_CONTEXT] : 0;             \
    if (!(g)->valid || (g)->gen != (row)->gen || (g)->ci != kc_) seg_rebuild(L, r, g, row, kc_); \
  } while (0)

/* One field of the row itself (fast path) at p; returns the end. */
static inline char *row_field(const run *r, const column *c, const kvp_sweep_row *row, char *p) {
  switch (c->id) {
    case C_FITS:
      if (row->fit.why == KVP_FITS) {
        memcpy(p, "true", 4);
        return p + 4;
      }
      memcpy(p, "false", 5);
      return p + 5;
    case C_LIMIT: {
      const char *lim = kvp_why_name(row->fit.why);
      size_t n = strlen(lim);
      memcpy(p, lim, n);
      return p + n;
    }
    case C_LUA: {
      const segment *g = &r->t.luatxt[c->lua];
      return copy_short(p, g->txt, g->len); /* lua_columns made it */
    }
    case C_CONCURRENCY:
      if (r->concn) {
        const label *lb = &r->concn[row->pos[KVP_AX_CONCURRENCY]];
        memcpy(p, lb->s, 24); /* num[24]: always readable */
        return p + lb->len;
      }
      /* fall through */
    default:
      return p + number_text(c, row, p);
  }
}

/* The pure C path (no Lua, step-time or why column): a row is a template
 * of chunks (the kept text of consecutive deployment and context columns,
 * joined once per deployment and context) and the few fields of the row
 * itself, assembled in one buffer and handed to the writer at once. */
static void write_row_fast(lua_State *L, run *r, kvp_csv *w, const kvp_sweep_row *row) {
  int64_t ci = row->pos[KVP_AX_CONTEXT];
  if (!r->t.tpl_valid || r->t.tpl_gen != row->gen || r->t.tpl_ci != ci) {
    size_t need = SLACK + 2;
    for (int k = 0; k < r->t.nchunk; k++) {
      segment *ch = &r->t.chunks[k];
      ch->len = 0;
      for (int j = ch->first; j < ch->first + ch->count; j++) {
        segment *g = &r->t.segs[j];
        SEG_REFRESH(L, r, g, row);
        if (j > ch->first) seg_put(L, ch, ",", 1);
        seg_put(L, ch, g->txt, g->len);
      }
      need += ch->len + 1;
    }
    need += (size_t)r->t.nfield * 49;
    r->t.tpl_need = need;
    r->t.tpl_valid = 1;
    r->t.tpl_gen = row->gen;
    r->t.tpl_ci = ci;
  }
  if (r->t.tpl_need + r->t.luaneed > r->t.rowcap) {
    size_t need = r->t.tpl_need + r->t.luaneed;
    char *t = realloc(r->t.rowbuf, need * 2);
    if (t == NULL) kvl_error(L, "out of memory for the sweep");
    r->t.rowbuf = t;
    r->t.rowcap = need * 2;
  }
  /* in the writer's buffer when it has room (rowcap covers the row and the
   * chunks' slack), else in rowbuf */
  char *p0 = r->t.rowcap <= 32768 ? kvp_csv_row_begin(w, r->t.rowcap) : NULL;
  char *p = p0 ? p0 : r->t.rowbuf;
  for (int k = 0; k < r->t.nitem; k++) {
    int it = r->t.items[k];
    if (k > 0) *p++ = ',';
    if (it >= 0) {
      const segment *ch = &r->t.chunks[it];
      p = copy_short(p, ch->txt, ch->len);
    } else {
      p = row_field(r, &r->cols[-it - 1], row, p);
    }
  }
  if (p0) {
    kvp_csv_row_end(w, (size_t)(p - p0));
    return;
  }
  kvp_csv_raw(w, r->t.rowbuf, (size_t)(p - r->t.rowbuf));
  kvp_csv_endrow(w);
}

/* The Lua columns of the row, called in column order, their texts into
 * r->t.luatxt (write_row_fast copies them). */
static void lua_columns(lua_State *L, run *r, int rowidx, int cols) {
  size_t need = 0;
  for (int i = 0; i < r->ncol; i++) {
    const column *c = &r->cols[i];
    if (c->id != C_LUA) continue;
    segment *g = &r->t.luatxt[c->lua];
    kvl_sweep_call(L, r->v.fn0 + c->lua, rowidx, cols, i);
    lua_value_text(L, g, lua_gettop(L), cols, i, c->prec);
    lua_pop(L, 1);
    need += g->len + 1;
  }
  r->t.luaneed = need;
}

/* One row, by segments (the Lua columns called with the row table at rowidx). */
static void write_row(lua_State *L, run *r, kvp_csv *w, const kvp_sweep_row *row, int rowidx,
                      int cols) {
  if (r->t.fast) {
    if (r->nlua > 0) lua_columns(L, r, rowidx, cols);
    write_row_fast(L, r, w, row);
    return;
  }
  for (int j = 0; j < r->t.nseg; j++) {
    segment *g = &r->t.segs[j];
    if (g->dep != DEP_ROW) {
      SEG_REFRESH(L, r, g, row);
      kvp_csv_raw(w, g->txt, g->len);
      continue;
    }
    int i = g->first;
    const column *c = &r->cols[i];
    if (c->id >= C_TPOT_MS) {
      write_time(L, r, w, row, c);
      continue;
    }
    switch (c->id) {
      case C_LUA: {
        segment *lt = &r->t.luatxt[c->lua];
        kvl_sweep_call(L, r->v.fn0 + c->lua, rowidx, cols, i);
        lua_value_text(L, lt, lua_gettop(L), cols, i, c->prec);
        lua_pop(L, 1);
        kvp_csv_raw(w, lt->txt, lt->len);
        break;
      }
      case C_FITS:
        kvp_csv_raw(w, row->fit.why == KVP_FITS ? "true" : "false", row->fit.why == KVP_FITS ? 4 : 5);
        break;
      case C_LIMIT: {
        const char *s = kvp_why_name(row->fit.why);
        kvp_csv_raw(w, s, strlen(s));
        break;
      }
      case C_WHY: {
        char buf[KVP_START_TEXT_MAX];
        int n = kvp_verdict_explain(row->ledger, &row->fit, row->start, buf, sizeof buf);
        if (n >= (int)sizeof buf) n = (int)sizeof buf - 1;
        kvp_csv_str(w, buf, n < 0 ? 0 : (size_t)n);
        break;
      }
      case C_CONCURRENCY:
        if (r->concn) {
          const label *lb = &r->concn[row->pos[KVP_AX_CONCURRENCY]];
          kvp_csv_raw(w, lb->s, lb->len);
          break;
        }
        /* fall through */
      default: {
        char buf[48];
        kvp_csv_raw(w, buf, number_text(c, row, buf));
      }
    }
  }
  kvp_csv_endrow(w);
}

/* Whether the row meets every condition of the declarative filter; else
 * what the first condition it fails depends on (*dep). */
static int keep_row(const run *r, const kvp_sweep_row *row, int *dep) {
  for (int i = 0; i < r->nrule; i++) {
    const rule *u = &r->rules[i];
    int64_t v = u->id == C_FITS    ? row->fit.why == KVP_FITS
                : u->id == C_LIMIT ? (int64_t)row->fit.why
                                   : number_value(u->id, row);
    int ok;
    switch (u->op) {
      case OP_EQ: ok = v == u->v; break;
      case OP_NE: ok = v != u->v; break;
      case OP_LT: ok = v < u->v; break;
      case OP_LE: ok = v <= u->v; break;
      case OP_GT: ok = v > u->v; break;
      default: ok = v >= u->v; break;
    }
    if (!ok) {
      *dep = u->dep;
      return 0;
    }
  }
  return 1;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* "sweep: 1200000/2000000 rows (60 %), 9.1M rows/s, 0.1 s left" on stderr */
static void progress(int64_t done, int64_t total, double start, int final) {
  double t = now() - start, rate = t > 0 ? (double)done / t : 0;
  double left = rate > 0 ? (double)(total - done) / rate : 0;
  fprintf(stderr, "\rsweep: %lld/%lld rows (%d %%), %.1fM rows/s, %.1f s left   %s",
          (long long)done, (long long)total, total ? (int)(100 * done / total) : 100,
          rate / 1e6, left, final ? "\n" : "");
  fflush(stderr);
}

/* The row loop (sweep_lua.h). */
int kvl_sweep_rows(lua_State *L, run *r, kvp_sweep *s, kvp_csv *w, int cols, int64_t first,
                   int64_t end, int64_t *written, kvp_diag *d) {
  lua_getfield(L, 1, "progress");
  int show = lua_toboolean(L, -1) && isatty(STDERR_FILENO);
  lua_pop(L, 1);
  double start = now(), last = start;
  kvp_sweep_row row;
  int got;
  int top = lua_gettop(L);
  while ((got = kvp_sweep_next(s, &row, d)) == 1) {
    int rowidx = 0;
    int dep;
    if (r->nrule > 0 && !keep_row(r, &row, &dep)) {
      /* the rows sharing what failed fail too: not evaluated */
      if (dep != DEP_ROW) kvp_sweep_skip(s, &row, dep == DEP_LEDGER);
      if ((++r->rejected & 0xfff) == 0) kvl_poll(L); /* a filter that keeps few rows */
      continue;
    }
    if (r->needrow) {
      kvl_sweep_push_row(L, r, &row);
      rowidx = r->v.rowtab;
      if (r->filter) {
        kvl_sweep_call(L, r->filter, rowidx, 0, 0);
        int keep = lua_toboolean(L, -1);
        lua_pop(L, 1);
        if (!keep) {
          r->v.cur = NULL;
          lua_settop(L, top);
          continue;
        }
      }
    }
    if (r->each) kvl_sweep_call(L, r->each, rowidx, -1, 0); /* its result ignored */
    else write_row(L, r, w, &row, rowidx, cols);
    if (r->needrow) {
      r->v.cur = NULL;
      lua_settop(L, top);
    }
    (*written)++;
    if ((row.index & 0xfff) == 0) kvl_poll(L); /* a time limit reached in this loop */
    if (show && (row.index & 0xffff) == 0 && now() - last > 0.25) {
      last = now();
      progress(row.index + 1 - first, end - first, start, 0);
    }
  }
  if (got >= 0 && show) progress(end - first, end - first, start, 1);
  return got;
}
