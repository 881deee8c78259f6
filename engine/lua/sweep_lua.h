/*
 * sweep_lua.h: the sweep binding's private interface (engine/lua/sweep_*.c).
 * One sweep_core.run is one `run`: what the spec table says, read once
 * (sweep_spec_lua.c), the row table a filter, Lua column or spec.each sees
 * (sweep_row_lua.c, run.v), the rows' text (sweep_text_lua.c, run.t), and
 * the loop that ties them (sweep_lua.c). The loop calls the three; the text
 * calls the row table (Lua columns); the spec and the row table call none of
 * the others.
 */
#ifndef KVP_SWEEP_LUA_H
#define KVP_SWEEP_LUA_H

#include <stdlib.h>

#include "csvw.h"
#include "kvplan_lua.h"

/* Built-in columns. */
typedef enum col_id {
  C_LABEL,  /* a value of a Lua-level axis, per base deployment */
  C_LUA,    /* a Lua function of the row */
  C_ROW, C_TP, C_PP, C_KV, C_WEIGHTS, C_CONTEXT, C_CONCURRENCY,
  C_GPU_BYTES, C_USABLE_BYTES, C_WEIGHTS_BYTES, C_ACTIVATION_BYTES, C_OVERHEAD_BYTES,
  C_KV_BUDGET_BYTES, C_GPU_GIB, C_USABLE_GIB, C_WEIGHTS_GIB, C_ACTIVATION_GIB,
  C_OVERHEAD_GIB, C_KV_BUDGET_GIB, C_KV_BYTES_PER_TOKEN, C_SEQ_BYTES, C_KV_BLOCKS,
  C_KV_TOKENS, C_MAX_CONCURRENCY, C_MAX_CONTEXT, C_FITS, C_LIMIT, C_WHY, C_STARTS,
  C_TPOT_MS, C_TTFT_MS, C_TOKENS_PER_S, C_BOUND, C_KV_READ_SHARE, C_USD_PER_MTOK,  /* time */
  C_STEPS_PER_TOKEN, C_KV_WRITE_BYTES_PER_TOKEN,
  /* ranges: at the slow (perf[1]) or the fast (perf[2]) end of the factors */
  C_TPOT_MS_LO, C_TPOT_MS_HI, C_TTFT_MS_LO, C_TTFT_MS_HI, C_TOKENS_PER_S_LO, C_TOKENS_PER_S_HI
} col_id;

/* A label value resolved once: a string (kept alive by the labels table on
 * the stack) or an integer. */
typedef struct label {
  const char *s;
  size_t len;
  int quote;
  char num[24];       /* an integer's digits (s points here) */
} label;

/* What a column's text depends on. The columns of the deployment (and of
 * its context) are formatted once per deployment and context: runs of them
 * form a segment whose text is copied to the following rows while neither
 * changes (a deployment's rows differ in their request axes only). A new
 * built-in column says here what it depends on. */
enum { DEP_ROW, DEP_LEDGER, DEP_CTX };

/* The last texts of a GiB column, by value (direct-mapped): a sweep's
 * deployments repeat few weights and budgets, and exact GiB formatting costs
 * more than the lookup. */
#define GIB_MEMO 64
typedef struct gib_memo {
  int64_t v[GIB_MEMO];
  uint8_t len[GIB_MEMO]; /* 0: empty */
  char txt[GIB_MEMO][40];
} gib_memo;

typedef struct column {
  col_id id;
  int prec;           /* digits for floats and GiB columns */
  int label;          /* C_LABEL: index in the labels of a base */
  int dep;            /* DEP_* */
  gib_memo *memo;     /* GiB columns of the deployment: texts by value */
  int lua;            /* C_LUA: index in run.luatxt */
} column;

/* A condition of a declarative filter (sweep.lua M.filter_rules): the
 * column's value (fits: 1 or 0; limit: the why code) against v. */
enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };
typedef struct rule {
  col_id id;
  int op;
  int dep;  /* DEP_*: what the value depends on (rules sorted by it) */
  int64_t v;
} rule;

/* Consecutive columns written together: one column of DEP_ROW, or a run of
 * columns of one dependency (DEP_LEDGER, DEP_CTX) whose text is kept. */
typedef struct segment {
  int first, count;
  int dep;            /* DEP_ROW, or the widest dependency of the run */
  int valid;
  uint64_t gen;       /* the text's deployment position and context */
  int64_t ci;
  char *txt;
  size_t len, cap;
} segment;

/* The row table a filter, Lua column or spec.each sees (sweep_row_lua.c). */
typedef struct sweep_view {
  int rowtab;                           /* stack index of the row table (kvl_sweep_rowtab) */
  int key0, why0;                       /* stack indices of its keys and the limits' names */
  int dirty;                            /* stack index of the keys a script added to it */
  int fn0;                              /* stack index of the first Lua column's function */
  int row_eager;                        /* an axis named "row": the built-in set per row */
  lua_Integer ndirty;                   /* how many */
  uint32_t rowvalid;                    /* RK_* fields whose rowlast is in the table */
  int64_t rowlast[16];                  /* the values set (RK_N of them) */
  int rowgen_valid;
  uint64_t rowgen;                      /* the deployment position the table holds */
  int64_t rowapos[KVP_SWEEP_MAX_AXES];  /* its positions on the axes set in C */
  int64_t named_b;                      /* the base whose labels it holds, -1 none */
  int64_t mctx, mctx_index;             /* max_context of row mctx_index (row_index) */
  kvp_start start;                      /* row.starts of ledger start_id (row_index) */
  int64_t start_id;
  const void *cur_tab;                  /* the row table */
  const kvp_sweep_row *cur;             /* its row */
} sweep_view;

/* The rows' text (sweep_text_lua.c). */
typedef struct sweep_text {
  segment *segs;
  int nseg;
  int fast;           /* every column built in and short: write_row_fast */
  segment *chunks;    /* fast path: runs of kept segments (first, count: segments) */
  int nchunk;
  int *items;         /* the row: chunk k (>= 0) or column -i - 1 of the row itself */
  int nitem, nfield;
  int tpl_valid;
  uint64_t tpl_gen;
  int64_t tpl_ci;
  char *rowbuf;
  size_t rowcap;
  size_t tpl_need;    /* the row's room but its Lua columns' */
  segment *luatxt;    /* the texts of the Lua columns of the row (column.lua) */
  size_t luaneed;     /* their room in the row */
  kvp_cost cost;      /* of the ledger cost_id (step-time columns) */
  int64_t cost_id;
  kvp_cost range_cost[2]; /* the same at the factors' slow and fast ends (range columns) */
  int64_t range_id[2];
} sweep_text;

/* Everything the loop needs, collected from the spec table once. */
typedef struct run {
  kvp_sweep_axes ax;
  kvp_sweep_axis uax[KVP_SWEEP_MAX_AXES];  /* deployment axes, outermost first */
  void *vals[KVP_SWEEP_MAX_AXES];          /* their values (int64_t or double) */
  kvp_gpu_facts *gpu[KVP_SWEEP_MAX_AXES];  /* the gpu axis: each GPU's facts */
  kvp_non_torch non_torch;                 /* the non-torch rule's constants (spec.non_torch) */
  label *alab[KVP_SWEEP_MAX_AXES];         /* per position labels (not BASE axes) */
  int axes;                                /* stack index of spec.axes */
  kvp_deploy *base;   /* base 0 (the axis values' check) and the current base */
  lua_State *L;       /* fetch_base's */
  int basefn;         /* stack index of spec.base: base b's table, made when its rows start */
  int entry;          /* stack index of the current base's table */
  int64_t entry_b;    /* its index, -1 none */
  int64_t *tp, *pp, *context, *concurrency;
  kvp_format *kv, *weights;
  column *cols;
  int ncol;
  int nlua;           /* Lua columns */
  label *lab;       /* the current base's: [label - 1] */
  int nlabel;
  label *kvn, *wn;  /* names along the kv and weights axes */
  int optim_axis;   /* the deployment axis of field optim, -1 none */
  label *okv;       /* its combinations' KV format names (s NULL: the base's) */
  int kv_label;     /* the label index of "kv" (label columns), 0 none */
  kvp_deploy *scratch; /* read_combos' */
  void *mcombo;        /* a mixed optim axis (spec.combos): the combinations a base
                        * deployment takes over its plain one (combo_index, 1-based) */
  int64_t nmcombo;
  label *concn;     /* the concurrency values' digits */
  unsigned want;
  int kv_names, weights_names;          /* stack indices of name tables */
  int filter;                           /* stack index of the filter, or 0 */
  int each;                             /* stack index of spec.each (rows to it, no file), or 0 */
  rule *rules;                          /* a declarative filter, evaluated in C */
  int nrule;
  int64_t rejected;                     /* its rejections (time limit polls) */
  int funcs;                            /* stack index of spec.funcs, or 0 */
  int needrow;                          /* Lua sees rows */
  int time;                             /* a time column: step times per row */
  kvp_perf *perf;                       /* the current base's GPU's rates (time columns); with
                                           range columns also at the factors' slow and fast ends:
                                           perf[3 w + end], w the weights axis position */
  int nperf;                            /* sets of rates: the weights axis' values (1: none) */
  int range;                            /* a range column is asked for: perf[1], perf[2] */
  sweep_view v;
  sweep_text t;
} run;

static inline void *xcalloc(lua_State *L, size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (p == NULL) kvl_error(L, "out of memory for the sweep");
  return p;
}

static inline int64_t gib_num(int64_t v) { return v > 0 ? v : 0; }

/* ---- the spec (sweep_spec_lua.c) -------------------------------------------- */

/* Read the spec table at index 1 into r: the bases, the deployment axes and
 * their combinations, the request axes, the names, the filter and spec.each,
 * the columns, the declarative rules, the first base's labels. The tables it
 * reads stay on the stack for the run; returns the stack index of
 * spec.columns. */
int kvl_sweep_read(lua_State *L, run *r);
/* sweep_core.columns(): the built-in column names, in order */
int kvl_sweep_columns(lua_State *L);

/* ---- the row table (sweep_row_lua.c) ------------------------------------------ */

/* The row table, its metatable and the interned keys, on the stack for the
 * run (after the holder at index 2). */
void kvl_sweep_rowtab(lua_State *L, run *r);
/* Make the row table hold this row. */
void kvl_sweep_push_row(lua_State *L, run *r, const kvp_sweep_row *row);
/* Call the function at fn with the row table at rowidx; one result. An
 * error names the filter (cols 0), spec.each (cols < 0), or the column at
 * cols[col + 1]. */
void kvl_sweep_call(lua_State *L, int fn, int rowidx, int cols, int col);

/* ---- the rows' text (sweep_text_lua.c) ------------------------------------------ */

/* Group the columns into segments (after kvl_sweep_read). */
void kvl_sweep_plan(lua_State *L, run *r);
/* The row loop over s: each row the declarative filter and spec.filter keep
 * is written to w (the Lua columns called with the row table), or handed to
 * spec.each; progress on a terminal when spec.progress; rows counted in
 * *written. Returns kvp_sweep_next's last answer (0 at the end, < 0 an
 * error, -kvp_err, with d filled). */
int kvl_sweep_rows(lua_State *L, run *r, kvp_sweep *s, kvp_csv *w, int cols, int64_t first,
                   int64_t end, int64_t *written, kvp_diag *d);

#endif
