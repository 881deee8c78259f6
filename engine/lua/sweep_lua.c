/*
 * sweep_lua.c: the Lua binding of sweeps: require "kvplan.sweep_core".
 * Binding layer: converts the axes once, runs the core's row loop
 * (sweep.c) and streams each row to the CSV writer (csvw.c). Lua is
 * entered per row only for a filter or a Lua column (the slow path).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "csvw.h"
#include "fmtw.h"
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
  C_STEPS_PER_TOKEN, C_KV_WRITE_BYTES_PER_TOKEN
} col_id;

static const struct { const char *name; col_id id; unsigned want; } builtin[] = {
  {"row", C_ROW, 0}, {"tp", C_TP, 0}, {"pp", C_PP, 0}, {"kv", C_KV, 0},
  {"weights", C_WEIGHTS, 0}, {"context", C_CONTEXT, 0}, {"concurrency", C_CONCURRENCY, 0},
  {"gpu_bytes", C_GPU_BYTES, 0}, {"usable_bytes", C_USABLE_BYTES, 0},
  {"weights_bytes", C_WEIGHTS_BYTES, 0}, {"activation_bytes", C_ACTIVATION_BYTES, 0},
  {"overhead_bytes", C_OVERHEAD_BYTES, 0}, {"kv_budget_bytes", C_KV_BUDGET_BYTES, 0},
  {"gpu_gib", C_GPU_GIB, 0}, {"usable_gib", C_USABLE_GIB, 0}, {"weights_gib", C_WEIGHTS_GIB, 0},
  {"activation_gib", C_ACTIVATION_GIB, 0}, {"overhead_gib", C_OVERHEAD_GIB, 0},
  {"kv_budget_gib", C_KV_BUDGET_GIB, 0}, {"kv_bytes_per_token", C_KV_BYTES_PER_TOKEN, 0},
  {"seq_bytes", C_SEQ_BYTES, 0}, {"kv_blocks", C_KV_BLOCKS, 0}, {"kv_tokens", C_KV_TOKENS, 0},
  {"max_concurrency", C_MAX_CONCURRENCY, KVP_WANT_MAXCONC},
  {"max_context", C_MAX_CONTEXT, KVP_WANT_MAXCTX}, {"fits", C_FITS, KVP_WANT_FIT},
  {"limit", C_LIMIT, KVP_WANT_FIT}, {"why", C_WHY, KVP_WANT_FIT | KVP_WANT_FIT_NEED},
  {"starts", C_STARTS, KVP_WANT_START},
  {"tpot_ms", C_TPOT_MS, 0}, {"ttft_ms", C_TTFT_MS, 0}, {"tokens_per_s", C_TOKENS_PER_S, 0},
  {"bound", C_BOUND, 0}, {"kv_read_share", C_KV_READ_SHARE, 0}, {"usd_per_mtok", C_USD_PER_MTOK, 0},
  {"steps_per_token", C_STEPS_PER_TOKEN, 0}, {"kv_write_bytes_per_token", C_KV_WRITE_BYTES_PER_TOKEN, 0},
  /* the same columns by names that say they are for one GPU (as reports name them) */
  {"usable_bytes_per_gpu", C_USABLE_BYTES, 0}, {"weights_bytes_per_gpu", C_WEIGHTS_BYTES, 0},
  {"activation_bytes_per_gpu", C_ACTIVATION_BYTES, 0}, {"overhead_bytes_per_gpu", C_OVERHEAD_BYTES, 0},
  {"kv_budget_bytes_per_gpu", C_KV_BUDGET_BYTES, 0}, {"usable_gib_per_gpu", C_USABLE_GIB, 0},
  {"weights_gib_per_gpu", C_WEIGHTS_GIB, 0}, {"activation_gib_per_gpu", C_ACTIVATION_GIB, 0},
  {"overhead_gib_per_gpu", C_OVERHEAD_GIB, 0}, {"kv_budget_gib_per_gpu", C_KV_BUDGET_GIB, 0},
  {"kv_bytes_per_token_per_gpu", C_KV_BYTES_PER_TOKEN, 0},
};
#define NBUILTIN (sizeof builtin / sizeof builtin[0])

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

/* Everything the loop needs, collected from the spec table once. */
typedef struct run {
  kvp_sweep_axes ax;
  kvp_sweep_axis uax[KVP_SWEEP_MAX_AXES];  /* deployment axes, outermost first */
  void *vals[KVP_SWEEP_MAX_AXES];          /* their values (int64_t or double) */
  int32_t *a100[KVP_SWEEP_MAX_AXES];       /* the gpu memory axis: which GPUs are A100s */
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
  int nlua;
  size_t luaneed;     /* their room in the row */
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
  kvp_perf *perf;                       /* the current base's GPU's rates (time columns) */
  kvp_cost cost;                        /* of the ledger cost_id */
  int64_t cost_id;
  int rowtab;                           /* stack index of the row table (make_rowtab) */
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
} run;

/* Userdata holding the run's C arrays, freed by __gc even after an error. */
typedef struct holder {
  run r;
  kvp_sweep *s;
  kvp_csv *w;
} holder;

static int holder_gc(lua_State *L) {
  holder *h = lua_touserdata(L, 1);
  free(h->r.base);
  free(h->r.tp);
  free(h->r.pp);
  free(h->r.context);
  free(h->r.concurrency);
  free(h->r.kv);
  free(h->r.weights);
  for (int i = 0; h->r.cols && i < h->r.ncol; i++) free(h->r.cols[i].memo);
  free(h->r.cols);
  free(h->r.rules);
  free(h->r.perf);
  for (int j = 0; h->r.segs && j < h->r.nseg; j++) free(h->r.segs[j].txt);
  free(h->r.segs);
  free(h->r.rowbuf);
  for (int j = 0; h->r.chunks && j < h->r.nchunk; j++) free(h->r.chunks[j].txt);
  free(h->r.chunks);
  free(h->r.items);
  for (int j = 0; h->r.luatxt && j < h->r.nlua; j++) free(h->r.luatxt[j].txt);
  free(h->r.luatxt);
  free(h->r.lab);
  free(h->r.kvn);
  free(h->r.wn);
  free(h->r.okv);
  free(h->r.scratch);
  free(h->r.mcombo);
  free(h->r.concn);
  for (int j = 0; j < KVP_SWEEP_MAX_AXES; j++) {
    free(h->r.vals[j]);
    free(h->r.a100[j]);
    free(h->r.alab[j]);
  }
  if (h->s) {
    kvp_sweep_free(h->s);
    free(h->s);
  }
  if (h->w) kvp_csv_discard(h->w);
  memset(h, 0, sizeof *h);
  return 0;
}

static void *xcalloc(lua_State *L, size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (p == NULL) kvl_error(L, "out of memory for the sweep");
  return p;
}

/* An integer axis from spec[name] (absent: 0 values). */
static int64_t *int_axis(lua_State *L, int spec, const char *name, int64_t *n) {
  *n = 0;
  if (lua_getfield(L, spec, name) == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  luaL_checktype(L, -1, LUA_TTABLE);
  *n = (int64_t)luaL_len(L, -1);
  int64_t *v = xcalloc(L, (size_t)*n, sizeof *v);
  for (int64_t i = 0; i < *n; i++) {
    lua_geti(L, -1, i + 1);
    v[i] = kvl_toint(L, -1, name);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return v;
}

static kvp_format *format_axis(lua_State *L, int spec, const char *name, int64_t *n) {
  *n = 0;
  if (lua_getfield(L, spec, name) == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  luaL_checktype(L, -1, LUA_TTABLE);
  *n = (int64_t)luaL_len(L, -1);
  kvp_format *v = xcalloc(L, (size_t)*n, sizeof *v);
  for (int64_t i = 0; i < *n; i++) {
    lua_geti(L, -1, i + 1);
    v[i] = kvl_check_format(L, lua_gettop(L), name);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return v;
}

/* The dependency of a built-in column's text. */
static int column_dep(col_id id) {
  if (id >= C_TPOT_MS) return DEP_ROW; /* step times: of the row's context and concurrency */
  switch (id) {
    case C_ROW: case C_FITS: case C_LIMIT: case C_WHY: case C_LUA: case C_CONCURRENCY:
    case C_MAX_CONTEXT:
      return DEP_ROW;
    case C_CONTEXT: case C_SEQ_BYTES: case C_MAX_CONCURRENCY: return DEP_CTX;
    default: return DEP_LEDGER; /* labels, kv and weights included */
  }
}

/* Deployment axes: spec.axes[j] = {name =, field =, values =, labels =,
 * rowvals =}: field "base" (a digit of the base index; n values, labels per
 * base), "none" (labels only) or a deployment field set in C. */
static const struct { const char *name; kvp_field f; } field_names[] = {
  {"base", KVP_FIELD_BASE}, {"none", KVP_FIELD_NONE}, {"gpu_bytes", KVP_FIELD_GPU_BYTES},
  {"tp", KVP_FIELD_TP}, {"pp", KVP_FIELD_PP}, {"weight_bytes", KVP_FIELD_WEIGHT_BYTES},
  {"utilization", KVP_FIELD_UTILIZATION}, {"activation", KVP_FIELD_ACTIVATION},
  {"overhead", KVP_FIELD_OVERHEAD}, {"block", KVP_FIELD_BLOCK},
  {"max_num_batched_tokens", KVP_FIELD_STEP_TOKENS}, {"max_model_len", KVP_FIELD_MAX_MODEL_LEN},
  {"max_kv_tokens", KVP_FIELD_MAX_KV_TOKENS}, {"prefix", KVP_FIELD_PREFIX},
  {"samples", KVP_FIELD_SAMPLES}, {"prompt", KVP_FIELD_PROMPT}, {"output", KVP_FIELD_OUTPUT},
  {"max_num_seqs", KVP_FIELD_MAX_NUM_SEQS},
  {"optim", KVP_FIELD_OPTIM},
};

static void resolve(lua_State *L, int idx, label *lb);

/* An optim axis's combinations: values[p] = {spec = the deployment of the
 * sweep's first base with combination p (its spec table), set = {names of
 * the field groups its members set} (kvp_combo_bit), kv = the KV format's
 * name when it sets one}. Each becomes a kvp_combo, resolved here once. */
/* The n combinations of the table at `list` (false: one not resolved, left
 * zero) into *out (freed by holder_gc), with the KV format names in okv. */
static kvp_combo *combo_list(lua_State *L, int list, run *r, int64_t n, label *okv, void **out) {
  kvp_combo *c = *out = xcalloc(L, (size_t)n, sizeof *c);
  kvp_deploy *d = r->scratch = xcalloc(L, 1, sizeof *d); /* freed by holder_gc on error */
  for (int64_t i = 0; i < n; i++) {
    if (lua_geti(L, list, i + 1) == LUA_TBOOLEAN && !lua_toboolean(L, -1)) { /* not resolved */
      lua_pop(L, 1);
      continue;
    }
    luaL_checktype(L, -1, LUA_TTABLE);
    uint32_t set = 0;
    lua_getfield(L, -1, "set");
    luaL_checktype(L, -1, LUA_TTABLE);
    for (lua_Integer k = 1; k <= luaL_len(L, -1); k++) {
      lua_geti(L, -1, k);
      uint32_t bit = kvp_combo_bit(lua_tostring(L, -1));
      if (bit == 0)
        kvl_error(L, "sweep: optimization field '%s' is not one a combination sets in C",
                  lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
      set |= bit;
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (set != 0) { /* the empty combination (none) needs no deployment */
      lua_getfield(L, -1, "spec");
      kvl_check_deploy(L, lua_gettop(L), d);
      lua_pop(L, 1);
    }
    kvp_diag diag = {{0}};
    if (kvp_combo_take(&c[i], set, d, &diag) != KVP_OK)
      kvl_core_error(L, KVP_EINVAL, &diag, "optimization combination");
    if (okv != NULL) {
      if (lua_getfield(L, -1, "kv") == LUA_TSTRING) resolve(L, -1, &okv[i]);
      lua_pop(L, 1); /* the name stays alive in its table, which the spec keeps */
    }
    lua_pop(L, 1);
  }
  free(r->scratch);
  r->scratch = NULL;
  return c;
}

static kvp_combo *read_combos(lua_State *L, int t, run *r, int j, int64_t n) {
  r->okv = xcalloc(L, (size_t)n, sizeof *r->okv);
  r->optim_axis = j;
  lua_getfield(L, t, "values");
  luaL_checktype(L, -1, LUA_TTABLE);
  kvp_combo *c = combo_list(L, lua_gettop(L), r, n, r->okv, &r->vals[j]);
  lua_pop(L, 1);
  return c;
}

static void read_axes(lua_State *L, int spec, run *r) {
  if (lua_getfield(L, spec, "axes") == LUA_TNIL) {
    lua_pop(L, 1);
    lua_newtable(L);
  }
  r->axes = lua_gettop(L);
  luaL_checktype(L, r->axes, LUA_TTABLE);
  lua_Integer n = luaL_len(L, r->axes);
  if (n > KVP_SWEEP_MAX_AXES) kvl_error(L, "a sweep takes at most %d axes, got %I", KVP_SWEEP_MAX_AXES, n);
  r->ax.naxis = (int32_t)n;
  r->ax.axis = r->uax;
  for (int j = 0; j < (int)n; j++) {
    kvp_sweep_axis *x = &r->uax[j];
    lua_geti(L, r->axes, j + 1);
    int t = lua_gettop(L);
    lua_getfield(L, t, "name");
    const char *name = lua_tostring(L, -1);
    lua_getfield(L, t, "field");
    const char *f = lua_tostring(L, -1);
    size_t k = 0;
    while (f && k < sizeof field_names / sizeof field_names[0] && strcmp(field_names[k].name, f)) k++;
    if (f == NULL || k == sizeof field_names / sizeof field_names[0])
      kvl_error(L, "sweep axis '%s': unknown field '%s'", name ? name : "?", f ? f : "nil");
    x->field = field_names[k].f;
    x->n = kvl_int_field(L, t, "n", 0);
    if (x->n < 1) kvl_error(L, "sweep axis '%s' is empty", name ? name : "?");
    if (x->field != KVP_FIELD_BASE) {
      lua_getfield(L, t, "labels");
      r->alab[j] = xcalloc(L, (size_t)x->n, sizeof *r->alab[j]);
      for (int64_t i = 0; i < x->n; i++) {
        lua_geti(L, -1, i + 1);
        resolve(L, -1, &r->alab[j][i]);
        lua_pop(L, 1); /* the string stays alive in the labels table */
      }
      lua_pop(L, 1);
    }
    if (x->field == KVP_FIELD_OPTIM) {
      if (r->optim_axis >= 0) kvl_error(L, "a sweep takes one optim axis");
      x->combo = read_combos(L, t, r, j, x->n);
    } else if (x->field != KVP_FIELD_BASE && x->field != KVP_FIELD_NONE) {
      lua_getfield(L, t, "values");
      luaL_checktype(L, -1, LUA_TTABLE);
      if (x->field == KVP_FIELD_UTILIZATION) {
        double *v = xcalloc(L, (size_t)x->n, sizeof *v);
        r->vals[j] = v;
        x->f = v;
        for (int64_t i = 0; i < x->n; i++) {
          lua_geti(L, -1, i + 1);
          v[i] = kvl_tonum(L, -1, name);
          lua_pop(L, 1);
        }
      } else {
        int64_t *v = xcalloc(L, (size_t)x->n, sizeof *v);
        r->vals[j] = v;
        x->i = v;
        for (int64_t i = 0; i < x->n; i++) {
          lua_geti(L, -1, i + 1);
          v[i] = kvl_toint(L, -1, name);
          lua_pop(L, 1);
        }
      }
      lua_pop(L, 1);
    }
    /* the GPUs' names for vLLM's defaults (a predicted activation peak) */
    if (x->field == KVP_FIELD_GPU_BYTES && lua_getfield(L, t, "a100") == LUA_TTABLE) {
      int32_t *v = xcalloc(L, (size_t)x->n, sizeof *v);
      r->a100[j] = v;
      x->gpu_a100 = v;
      for (int64_t i = 0; i < x->n; i++) {
        lua_geti(L, -1, i + 1);
        v[i] = lua_toboolean(L, -1);
        lua_pop(L, 1);
      }
    }
    lua_settop(L, t - 1);
  }
}

/* Columns: spec.columns[i] is a name; spec.precision[i] digits or nil;
 * spec.label_names lists the Lua-level axes (values per base in
 * spec.labels); spec.funcs[i] a Lua function column. "kv" and "weights"
 * are labels unless the sweep has a kv or weights axis. */
static void read_columns(lua_State *L, int spec, int cols, run *r) {
  int top = lua_gettop(L);
  lua_getfield(L, spec, "precision");
  int prec = lua_gettop(L);
  lua_getfield(L, spec, "label_names");
  int lnames = lua_gettop(L);
  r->ncol = (int)luaL_len(L, cols);
  r->cols = xcalloc(L, (size_t)r->ncol, sizeof *r->cols);
  for (int i = 0; i < r->ncol; i++) {
    column *c = &r->cols[i];
    lua_geti(L, cols, i + 1);
    const char *name = lua_tostring(L, -1);
    c->prec = -1;
    if (lua_geti(L, prec, i + 1) != LUA_TNIL) c->prec = (int)kvl_toint(L, -1, "precision");
    lua_pop(L, 1);
    if (r->funcs && lua_geti(L, r->funcs, i + 1) == LUA_TFUNCTION) {
      c->id = C_LUA;
      c->dep = DEP_ROW;
      c->lua = r->nlua++;
      r->needrow = 1;
      r->want |= KVP_WANT_FIT | KVP_WANT_MAXCONC;
      lua_pop(L, 2);
      continue;
    }
    if (r->funcs) lua_pop(L, 1);
    size_t k = 0;
    while (k < NBUILTIN && strcmp(builtin[k].name, name) != 0) k++;
    if (k < NBUILTIN && !(builtin[k].id == C_KV && !r->kv_names) &&
        !(builtin[k].id == C_WEIGHTS && !r->weights_names)) {
      c->id = builtin[k].id;
      c->dep = column_dep(c->id);
      if (c->id >= C_TPOT_MS) r->time = 1;
      r->want |= builtin[k].want;
      if (c->prec < 0 && c->id >= C_GPU_GIB && c->id <= C_KV_BUDGET_GIB) c->prec = 2;
      if (c->prec > 9 && c->id >= C_GPU_GIB && c->id <= C_KV_BUDGET_GIB)
        kvl_error(L, "precision of column '%s' must be 0..9, got %d", name, c->prec);
    } else {
      int n = lua_istable(L, lnames) ? (int)luaL_len(L, lnames) : 0, j = 1;
      for (; j <= n; j++) {
        lua_geti(L, lnames, j);
        int same = strcmp(lua_tostring(L, -1), name) == 0;
        lua_pop(L, 1);
        if (same) break;
      }
      if (j > n) kvl_error(L, "unknown sweep column '%s'", name);
      c->id = C_LABEL;
      c->dep = DEP_LEDGER;
      c->label = j;
    }
    lua_pop(L, 1);
  }
  lua_settop(L, top);
}

static int64_t gib_num(int64_t v) { return v > 0 ? v : 0; }

/* The row table a filter or Lua column sees: one table for the whole sweep
 * (r->rowtab), its fields updated in place when their value changes, from
 * keys interned once (r->key0 + RK_*): most rows differ from the previous
 * one in row and concurrency only, so a row costs a few raw sets and no
 * allocation. The built-in fields, in the order they win over axis names. */
enum {
  RK_TP, RK_PP, RK_GPU_BYTES, RK_USABLE, RK_WBYTES, RK_KVBUDGET, RK_KVBLOCKS, RK_KVTOKENS, /* ledger */
  RK_ROW, RK_CONTEXT, RK_CONCURRENCY, RK_MAXCONC, RK_FITS, RK_LIMIT, RK_KV, RK_WEIGHTS,   /* row */
  RK_N
};
_Static_assert(RK_N <= 16, "run.rowlast holds RK_N fields");
static const char *const row_keys[RK_N] = {
  "tp", "pp", "gpu_bytes", "usable_bytes", "weights_bytes", "kv_budget_bytes", "kv_blocks",
  "kv_tokens", "row", "context", "concurrency", "max_concurrency", "fits", "limit", "kv", "weights",
};

/* The row's fields computed when read (row_index), by name in the table
 * that is row_index's upvalue 2. */
enum { LZ_ROW = 1, LZ_MAX_CONTEXT, LZ_KV_BYTES_PER_TOKEN, LZ_ACTIVATION_BYTES, LZ_OVERHEAD_BYTES,
       LZ_STARTS, LZ_WHY, LZ_MC_LIMIT, LZ_MC_WHY };
static const char *const lazy_names[] = {
  "row", "max_context", "kv_bytes_per_token", "activation_bytes", "overhead_bytes", "starts", "why",
  "max_concurrency_limit", "max_concurrency_why",
};

/* __index of the row table (upvalue 1: the run's holder; 2: the lazy
 * fields' ids by name): answers computed only when a filter or column reads
 * them: max_context (a bisection over the context, once per row, kept in
 * C), kv_bytes_per_token, activation_bytes, overhead_bytes, and row (the one
 * field that changes on every row, rarely read). Nothing is stored in the
 * table: it holds the next row's fields soon. */
static int row_index(lua_State *L) {
  run *r = lua_touserdata(L, lua_upvalueindex(1)); /* the holder starts with its run */
  lua_settop(L, 2);
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(2));
  int id = (int)lua_tointeger(L, -1); /* 0: not one of them */
  if (id == 0) return 0;
  if (r->cur == NULL || lua_topointer(L, 1) != r->cur_tab)
    return kvl_error(L, "row.%s is known only while the sweep calls a filter or "
                        "column with that row", lua_tostring(L, 2));
  const kvp_ledger *l = r->cur->ledger;
  const kvp_stage *st = l->nstage ? &l->stage[l->tight] : NULL;
  switch (id) {
    case LZ_ROW: lua_pushinteger(L, (lua_Integer)(r->cur->index + 1)); break;
    case LZ_ACTIVATION_BYTES: lua_pushinteger(L, (lua_Integer)l->d.activation_bytes); break;
    case LZ_OVERHEAD_BYTES: lua_pushinteger(L, (lua_Integer)l->d.overhead_bytes); break;
    case LZ_STARTS: /* the row's, else once per ledger here */
      if (r->cur->start != NULL) {
        lua_pushboolean(L, r->cur->start->starts);
        break;
      }
      if (r->start_id != r->cur->ledger_id) {
        kvp_err e = kvp_start_check(l, &r->start);
        if (e != KVP_OK) return kvl_core_error(L, e, NULL, "starts");
        r->start_id = r->cur->ledger_id;
      }
      lua_pushboolean(L, r->start.starts);
      break;
    case LZ_WHY: case LZ_MC_LIMIT: case LZ_MC_WHY: {
      /* the verdict in words, as the why column (need and have evaluated), or
       * max_concurrency's (l:max_concurrency's limit and why) */
      kvp_verdict v;
      int64_t n;
      char buf[KVP_START_TEXT_MAX];
      kvp_err e = id == LZ_WHY ? kvp_verdict_fit(l, r->cur->context, r->cur->concurrency, &v)
                               : kvp_verdict_max_concurrency(l, r->cur->context, &n, &v);
      if (e != KVP_OK) return kvl_core_error(L, e, NULL, lua_tostring(L, 2));
      if (id == LZ_MC_LIMIT) {
        lua_pushstring(L, kvp_why_name(v.fit.why));
        break;
      }
      int len = kvp_verdict_explain(l, &v.fit, &v.start, buf, sizeof buf);
      lua_pushlstring(L, buf, len < 0 ? 0 : (size_t)len < sizeof buf ? (size_t)len : sizeof buf - 1);
      break;
    }
    case LZ_KV_BYTES_PER_TOKEN:
      if (st == NULL || st->token_bits % 8 == 0) lua_pushinteger(L, st ? (lua_Integer)(st->token_bits / 8) : 0);
      else lua_pushnumber(L, (double)st->token_bits / 8.0);
      break;
    default:
      if (r->mctx_index != r->cur->index) {
        kvp_fit f;
        kvp_err e = kvp_ledger_max_context(l, r->cur->concurrency, &r->mctx, &f);
        if (e != KVP_OK) return kvl_core_error(L, e, NULL, "max_context");
        r->mctx_index = r->cur->index;
      }
      lua_pushinteger(L, (lua_Integer)r->mctx);
  }
  return 1;
}

/* __newindex of the row table (upvalues: the holder, the list of keys a
 * script added): a key a filter or column adds lasts for its row only (the
 * next row starts without it, as a fresh table would). */
static int row_newindex(lua_State *L) {
  run *r = lua_touserdata(L, lua_upvalueindex(1));
  lua_settop(L, 3);
  if (lua_isnil(L, 3)) return 0; /* the key is absent: nothing to remove */
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 3);
  lua_rawset(L, 1); /* a nil or NaN key raises here, as in any table */
  lua_pushvalue(L, 2);
  lua_rawseti(L, lua_upvalueindex(2), ++r->ndirty);
  return 0;
}

/* rowtab[key RK_k] = the value on top of the stack (popped). */
static inline void row_set(lua_State *L, const run *r, int k) {
  lua_pushvalue(L, r->key0 + k);
  lua_insert(L, -2);
  lua_rawset(L, r->rowtab);
}

/* An integer field, set when its value changed (or was invalidated). */
static inline void row_seti(lua_State *L, run *r, int k, int64_t v) {
  if ((r->rowvalid >> k & 1u) && r->rowlast[k] == v) return;
  r->rowlast[k] = v;
  r->rowvalid |= 1u << k;
  lua_pushvalue(L, r->key0 + k);
  lua_pushinteger(L, (lua_Integer)v);
  lua_rawset(L, r->rowtab);
}

/* The fields that change with the deployment axes only, when they moved:
 * the base's labels by axis name (when the base changed), the axes set in
 * C by name (those that moved), then the ledger's fields. Every built-in
 * field is set again after them (they win over an axis of the same name). */
static void row_deployment(lua_State *L, run *r, const kvp_sweep_row *row) {
  const kvp_ledger *l = row->ledger;
  const kvp_stage *st = l->nstage ? &l->stage[l->tight] : NULL;
  if (r->named_b != r->entry_b) {
    lua_getfield(L, r->entry, "named");
    lua_pushnil(L);
    while (lua_next(L, -2)) { /* the base's labels, by axis name */
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, r->rowtab);
    }
    lua_pop(L, 1);
    r->named_b = r->entry_b;
  }
  for (int j = 0; j < r->ax.naxis; j++) { /* the axes set in C: by name */
    if (r->uax[j].field == KVP_FIELD_BASE || (r->rowgen_valid && r->rowapos[j] == row->apos[j])) continue;
    r->rowapos[j] = row->apos[j];
    lua_geti(L, r->axes, j + 1);
    lua_getfield(L, -1, "name");
    lua_getfield(L, -2, "rowvals");
    lua_geti(L, -1, row->apos[j] + 1);
    lua_remove(L, -2);
    lua_rawset(L, r->rowtab);
    lua_pop(L, 1);
  }
  if (r->optim_axis >= 0 && !r->kv_names) { /* the KV format: the combination's, else the base's */
    const label *k = &r->okv[row->apos[r->optim_axis]];
    if (k->s != NULL) {
      lua_pushlstring(L, k->s, k->len);
    } else {
      lua_getfield(L, r->entry, "named");
      lua_getfield(L, -1, "kv");
      lua_remove(L, -2);
    }
    row_set(L, r, RK_KV);
  }
  r->rowvalid = 0;
  row_seti(L, r, RK_TP, l->d.tp);
  row_seti(L, r, RK_PP, l->d.pp);
  row_seti(L, r, RK_GPU_BYTES, l->total);
  row_seti(L, r, RK_USABLE, l->usable);
  row_seti(L, r, RK_WBYTES, st ? st->weights : 0);
  row_seti(L, r, RK_KVBUDGET, st ? gib_num(st->kv_budget) : 0);
  row_seti(L, r, RK_KVBLOCKS, l->fit.why == KVP_FITS && st ? st->blocks : 0);
  row_seti(L, r, RK_KVTOKENS, kvp_ledger_kv_tokens(l));
  r->rowgen = row->gen;
  r->rowgen_valid = 1;
}

/* Make the row table hold this row (the slow path): its fields that
 * changed since the previous row, seen by the filter and then by the Lua
 * columns; the keys a script added to the previous row removed. */
static void push_row(lua_State *L, run *r, const kvp_sweep_row *row) {
  if (r->ndirty > 0) {
    for (lua_Integer i = 1; i <= r->ndirty; i++) {
      lua_rawgeti(L, r->dirty, i);
      lua_pushnil(L);
      lua_rawset(L, r->rowtab);
    }
    r->ndirty = 0;
  }
  if (!r->rowgen_valid || r->rowgen != row->gen) row_deployment(L, r, row);
  if (r->row_eager) {
    lua_pushvalue(L, r->key0 + RK_ROW);
    lua_pushinteger(L, (lua_Integer)(row->index + 1));
    lua_rawset(L, r->rowtab);
  }
  row_seti(L, r, RK_CONTEXT, row->context);
  row_seti(L, r, RK_CONCURRENCY, row->concurrency);
  row_seti(L, r, RK_MAXCONC, row->max_concurrency);
  int64_t why = (int64_t)row->fit.why;
  if (!(r->rowvalid >> RK_FITS & 1u) || r->rowlast[RK_FITS] != why) {
    r->rowlast[RK_FITS] = why;
    r->rowvalid |= 1u << RK_FITS;
    lua_pushboolean(L, row->fit.why == KVP_FITS);
    row_set(L, r, RK_FITS);
    lua_pushvalue(L, r->why0 + (int)why);
    row_set(L, r, RK_LIMIT);
  }
  if (r->kv_names && (!(r->rowvalid >> RK_KV & 1u) || r->rowlast[RK_KV] != row->pos[KVP_AX_KV])) {
    r->rowlast[RK_KV] = row->pos[KVP_AX_KV];
    r->rowvalid |= 1u << RK_KV;
    lua_rawgeti(L, r->kv_names, row->pos[KVP_AX_KV] + 1);
    row_set(L, r, RK_KV);
  }
  if (r->weights_names &&
      (!(r->rowvalid >> RK_WEIGHTS & 1u) || r->rowlast[RK_WEIGHTS] != row->pos[KVP_AX_WEIGHTS])) {
    r->rowlast[RK_WEIGHTS] = row->pos[KVP_AX_WEIGHTS];
    r->rowvalid |= 1u << RK_WEIGHTS;
    lua_rawgeti(L, r->weights_names, row->pos[KVP_AX_WEIGHTS] + 1);
    row_set(L, r, RK_WEIGHTS);
  }
  r->cur = row;
}

/* The row table, its metatable and the interned keys, on the stack for the
 * run (after the holder at index 2). */
static void make_rowtab(lua_State *L, run *r) {
  luaL_checkstack(L, RK_N + KVP_NWHY + 8, "sweep");
  lua_newtable(L);
  r->dirty = lua_gettop(L);
  lua_createtable(L, 0, 2); /* the rows' metatable */
  lua_pushvalue(L, 2);      /* the holder */
  lua_createtable(L, 0, (int)(sizeof lazy_names / sizeof lazy_names[0]));
  for (size_t k = 0; k < sizeof lazy_names / sizeof lazy_names[0]; k++) {
    lua_pushinteger(L, (lua_Integer)k + LZ_ROW);
    lua_setfield(L, -2, lazy_names[k]);
  }
  lua_pushcclosure(L, row_index, 2);
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, 2);
  lua_pushvalue(L, r->dirty);
  lua_pushcclosure(L, row_newindex, 2);
  lua_setfield(L, -2, "__newindex");
  lua_createtable(L, 0, RK_N + 8);
  lua_insert(L, -2);
  lua_setmetatable(L, -2);
  r->rowtab = lua_gettop(L);
  r->cur_tab = lua_topointer(L, -1);
  r->key0 = r->rowtab + 1;
  for (int k = 0; k < RK_N; k++) lua_pushstring(L, row_keys[k]);
  r->why0 = lua_gettop(L) + 1;
  for (int w = 0; w < KVP_NWHY; w++) lua_pushstring(L, kvp_why_name((kvp_why)w));
  luaL_checkstack(L, r->nlua + 4, "sweep");
  r->fn0 = lua_gettop(L) + 1; /* the Lua columns' functions, in order */
  for (int i = 0; i < r->ncol; i++)
    if (r->cols[i].id == C_LUA) lua_rawgeti(L, r->funcs, i + 1);
  /* row is computed when read, unless an axis of that name would hide it */
  for (int j = 1; j <= r->ax.naxis; j++) {
    lua_geti(L, r->axes, j);
    lua_getfield(L, -1, "name");
    if (lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "row") == 0) r->row_eager = 1;
    lua_pop(L, 2);
  }
  r->named_b = -1;
  r->mctx_index = -1;
  r->start_id = -1;
}

/* Call the function at fn with the row table at rowidx; one result. An
 * error names the filter (cols 0), spec.each (cols < 0), or the column at
 * cols[col + 1]. */
static void call_lua(lua_State *L, int fn, int rowidx, int cols, int col) {
  lua_pushvalue(L, fn);
  lua_pushvalue(L, rowidx);
  if (lua_pcall(L, 1, 1, 0) == LUA_OK) return;
  if (cols <= 0) kvl_error(L, "sweep %s: %s", cols < 0 ? "each" : "filter", lua_tostring(L, -1));
  lua_geti(L, cols, col + 1);
  kvl_error(L, "%s: %s", lua_tostring(L, -1), lua_tostring(L, -2));
}

/* Resolve the value at idx (a string or number, converted in place to a
 * string when it is a float) into lb. */
static void resolve(lua_State *L, int idx, label *lb) {
  if (lua_isinteger(L, idx)) {
    lb->len = kvp_fmt_int(lb->num, (int64_t)lua_tointeger(L, idx));
    lb->s = lb->num;
  } else {
    lb->s = lua_tolstring(L, idx, &lb->len);
    if (lb->s == NULL) lb->s = "", lb->len = 0;
    lb->quote = kvp_csv_needs_quotes(lb->s, lb->len);
  }
}

/* Make base b the current one (spec.base(b + 1), kept at r->entry while its
 * rows are written, then dropped for the GC): its deployment into
 * r->base[1], its labels into r->lab (the strings stay alive in its table),
 * its GPU's rates. */
static void load_entry(lua_State *L, run *r, int64_t b) {
  lua_pushvalue(L, r->basefn);
  lua_pushinteger(L, (lua_Integer)(b + 1));
  lua_call(L, 1, 1);
  if (!lua_istable(L, -1)) kvl_error(L, "sweep: base %I is not a table", (lua_Integer)(b + 1));
  lua_replace(L, r->entry);
  r->entry_b = b;
  /* its deployment, checked once and kept in its table (a base visited
   * again, under a C axis outside its own, is not checked again); a base
   * of a mixed optim axis with a combination of fixed built-ins: its plain
   * deployment (converted once, kept in the plain table several bases
   * share) with the combination written over it */
  if (lua_getfield(L, r->entry, "_deploy") == LUA_TUSERDATA) {
    r->base[1] = *(const kvp_deploy *)lua_touserdata(L, -1);
  } else if (lua_getfield(L, r->entry, "plain") == LUA_TTABLE) {
    int plain = lua_gettop(L);
    int64_t ci = kvl_int_field(L, r->entry, "combo_index", 0);
    if (ci < 1 || ci > r->nmcombo) kvl_error(L, "sweep: base %I: combination %I of %I",
                                             (lua_Integer)(b + 1), (lua_Integer)ci,
                                             (lua_Integer)r->nmcombo);
    if (lua_getfield(L, plain, "_deploy") == LUA_TUSERDATA) {
      r->base[1] = *(const kvp_deploy *)lua_touserdata(L, -1);
    } else {
      lua_getfield(L, plain, "spec");
      kvl_check_deploy(L, lua_gettop(L), &r->base[1]);
      *(kvp_deploy *)lua_newuserdatauv(L, sizeof(kvp_deploy), 0) = r->base[1];
      lua_setfield(L, plain, "_deploy");
      lua_pop(L, 1);
    }
    kvp_combo_apply(&((const kvp_combo *)r->mcombo)[ci - 1], &r->base[1]);
    lua_pop(L, 2);
  } else {
    lua_pop(L, 1);
    lua_getfield(L, r->entry, "spec");
    kvl_check_deploy(L, lua_gettop(L), &r->base[1]);
    *(kvp_deploy *)lua_newuserdatauv(L, sizeof(kvp_deploy), 0) = r->base[1];
    lua_setfield(L, r->entry, "_deploy");
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_getfield(L, r->entry, "label");
  luaL_checktype(L, -1, LUA_TTABLE);
  for (int j = 1; j <= r->nlabel; j++) {
    if (j <= r->ax.naxis && r->uax[j - 1].field != KVP_FIELD_BASE) continue;
    lua_geti(L, -1, j);
    resolve(L, -1, &r->lab[j - 1]);
    lua_pop(L, 1); /* strings stay alive in the label table (floats come as strings) */
  }
  lua_pop(L, 1);
  if (r->time) {
    lua_getfield(L, r->entry, "perf");
    r->perf[0] = kvl_check_perf(L, lua_gettop(L));
    lua_pop(L, 1);
  }
  /* the previous base's tables are garbage now (unless its group keeps
   * it, sweep.lua): Lua's collector reclaims them as it goes; a step here
   * per base would cost more than the rows of a small base */
}

/* The core's fetch: base b when its rows start. */
static kvp_err fetch_base(void *ctx, int64_t b, kvp_deploy *out, kvp_diag *d) {
  (void)d;
  run *r = ctx;
  if (b != r->entry_b) load_entry(r->L, r, b);
  *out = r->base[1];
  return KVP_OK;
}

/* Resolve the label columns' count and base 1, and the kv and weights axis
 * names. The strings stay alive in the tables, which stay on the stack for
 * the run. */
static void resolve_labels(lua_State *L, run *r) {
  r->nlabel = 0;
  for (int i = 0; i < r->ncol; i++)
    if (r->cols[i].id == C_LABEL && r->cols[i].label > r->nlabel) r->nlabel = r->cols[i].label;
  r->lab = xcalloc(L, (size_t)(r->nlabel ? r->nlabel : 1), sizeof *r->lab);
  r->perf = xcalloc(L, 1, sizeof *r->perf);
  load_entry(L, r, 0);
  r->base[0] = r->base[1];
  label **dst[2] = {&r->kvn, &r->wn};
  int src[2] = {r->kv_names, r->weights_names};
  for (int k = 0; k < 2; k++) {
    if (!src[k]) continue;
    int n = (int)luaL_len(L, src[k]);
    *dst[k] = xcalloc(L, (size_t)n, sizeof **dst[k]);
    for (int j = 1; j <= n; j++) {
      lua_geti(L, src[k], j);
      resolve(L, -1, &(*dst[k])[j - 1]);
      lua_pop(L, 1);
    }
  }
}

/* The step times of a row (roofline.c), from the costs of its ledger,
 * derived once per ledger. */
static void write_time(lua_State *L, run *r, kvp_csv *w, const kvp_sweep_row *row,
                       const column *c) {
  if (r->cost_id != row->ledger_id) {
    kvp_diag d = {{0}};
    kvp_err e = kvp_cost_init(&r->cost, row->ledger, r->perf, &d);
    if (e != KVP_OK) kvl_core_error(L, e, &d, "step time");
    r->cost_id = row->ledger_id;
  }
  kvp_time t;
  if (kvp_time_at(&r->cost, row->context, row->concurrency, &t) != KVP_OK)
    kvl_error(L, "step time at context %I and concurrency %I overflows",
              (lua_Integer)row->context, (lua_Integer)row->concurrency);
  double v = 0.0;
  int prec = 4;
  switch (c->id) {
    case C_BOUND:
      kvp_csv_raw(w, t.compute_bound ? "compute" : "memory", t.compute_bound ? 7 : 6);
      return;
    case C_TPOT_MS: v = t.tpot_s * 1e3; break;
    case C_TTFT_MS: v = t.ttft_s * 1e3; break;
    case C_TOKENS_PER_S: v = t.tokens_per_s; prec = 1; break;
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

/* Group the columns into segments (after read_columns). */
static void plan_segments(lua_State *L, run *r) {
  r->segs = xcalloc(L, (size_t)r->ncol, sizeof *r->segs);
  r->nseg = 0;
  for (int i = 0; i < r->ncol; i++) {
    segment *g = r->nseg > 0 ? &r->segs[r->nseg - 1] : NULL;
    int dep = r->cols[i].dep;
    if (dep != DEP_ROW && g != NULL && g->dep == dep) {
      g->count++;
      continue;
    }
    g = &r->segs[r->nseg++];
    g->first = i;
    g->count = 1;
    g->dep = dep;
  }
  for (int i = 0; i < r->ncol; i++)
    if (r->cols[i].id >= C_GPU_GIB && r->cols[i].id <= C_KV_BUDGET_GIB && r->cols[i].dep != DEP_ROW &&
        r->cols[i].prec <= 17)
      r->cols[i].memo = xcalloc(L, 1, sizeof *r->cols[i].memo);
  r->fast = 1;
  for (int i = 0; i < r->ncol; i++) {
    col_id id = r->cols[i].id;
    if (id == C_WHY || id >= C_TPOT_MS) r->fast = 0;
  }
  /* the fast path's template: chunks of consecutive kept segments */
  r->luatxt = xcalloc(L, (size_t)r->nlua, sizeof *r->luatxt);
  r->chunks = xcalloc(L, (size_t)r->nseg, sizeof *r->chunks);
  r->items = xcalloc(L, (size_t)r->nseg, sizeof *r->items);
  for (int j = 0; j < r->nseg; j++) {
    if (r->segs[j].dep == DEP_ROW) {
      r->items[r->nitem++] = -r->segs[j].first - 1;
      r->nfield++;
    } else if (j > 0 && r->segs[j - 1].dep != DEP_ROW) {
      r->chunks[r->nchunk - 1].count++;
    } else {
      r->chunks[r->nchunk].first = j;
      r->chunks[r->nchunk].count = 1;
      r->items[r->nitem++] = r->nchunk++;
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
      const segment *g = &r->luatxt[c->lua];
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
  if (!r->tpl_valid || r->tpl_gen != row->gen || r->tpl_ci != ci) {
    size_t need = SLACK + 2;
    for (int k = 0; k < r->nchunk; k++) {
      segment *ch = &r->chunks[k];
      ch->len = 0;
      for (int j = ch->first; j < ch->first + ch->count; j++) {
        segment *g = &r->segs[j];
        SEG_REFRESH(L, r, g, row);
        if (j > ch->first) seg_put(L, ch, ",", 1);
        seg_put(L, ch, g->txt, g->len);
      }
      need += ch->len + 1;
    }
    need += (size_t)r->nfield * 49;
    r->tpl_need = need;
    r->tpl_valid = 1;
    r->tpl_gen = row->gen;
    r->tpl_ci = ci;
  }
  if (r->tpl_need + r->luaneed > r->rowcap) {
    size_t need = r->tpl_need + r->luaneed;
    char *t = realloc(r->rowbuf, need * 2);
    if (t == NULL) kvl_error(L, "out of memory for the sweep");
    r->rowbuf = t;
    r->rowcap = need * 2;
  }
  /* in the writer's buffer when it has room (rowcap covers the row and the
   * chunks' slack), else in rowbuf */
  char *p0 = r->rowcap <= 32768 ? kvp_csv_row_begin(w, r->rowcap) : NULL;
  char *p = p0 ? p0 : r->rowbuf;
  for (int k = 0; k < r->nitem; k++) {
    int it = r->items[k];
    if (k > 0) *p++ = ',';
    if (it >= 0) {
      const segment *ch = &r->chunks[it];
      p = copy_short(p, ch->txt, ch->len);
    } else {
      p = row_field(r, &r->cols[-it - 1], row, p);
    }
  }
  if (p0) {
    kvp_csv_row_end(w, (size_t)(p - p0));
    return;
  }
  kvp_csv_raw(w, r->rowbuf, (size_t)(p - r->rowbuf));
  kvp_csv_endrow(w);
}

/* The Lua columns of the row, called in column order, their texts into
 * r->luatxt (write_row_fast copies them). */
static void lua_columns(lua_State *L, run *r, int rowidx, int cols) {
  size_t need = 0;
  for (int i = 0; i < r->ncol; i++) {
    const column *c = &r->cols[i];
    if (c->id != C_LUA) continue;
    segment *g = &r->luatxt[c->lua];
    call_lua(L, r->fn0 + c->lua, rowidx, cols, i);
    lua_value_text(L, g, lua_gettop(L), cols, i, c->prec);
    lua_pop(L, 1);
    need += g->len + 1;
  }
  r->luaneed = need;
}

static void write_row(lua_State *L, run *r, kvp_csv *w, const kvp_sweep_row *row, int rowidx,
                      int cols) {
  if (r->fast) {
    if (r->nlua > 0) lua_columns(L, r, rowidx, cols);
    write_row_fast(L, r, w, row);
    return;
  }
  for (int j = 0; j < r->nseg; j++) {
    segment *g = &r->segs[j];
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
        segment *lt = &r->luatxt[c->lua];
        call_lua(L, r->fn0 + c->lua, rowidx, cols, i);
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

/* spec.rules: {{column, op, value}, ...} as sweep.lua checked them. */
static void read_rules(lua_State *L, int idx, run *r) {
  static const char *const ops[] = {"==", "~=", "<", "<=", ">", ">="};
  r->nrule = (int)luaL_len(L, idx);
  r->rules = xcalloc(L, (size_t)r->nrule, sizeof *r->rules);
  for (int i = 0; i < r->nrule; i++) {
    rule *u = &r->rules[i];
    lua_geti(L, idx, i + 1);
    lua_geti(L, -1, 1);
    lua_geti(L, -2, 2);
    lua_geti(L, -3, 3);
    const char *name = lua_tostring(L, -3), *op = lua_tostring(L, -2);
    size_t k = 0;
    while (name && k < NBUILTIN && strcmp(builtin[k].name, name) != 0) k++;
    if (name == NULL || k == NBUILTIN) kvl_error(L, "filter: unknown column '%s'", name ? name : "?");
    u->id = builtin[k].id;
    r->want |= builtin[k].want;
    u->op = -1;
    for (int j = 0; op && j < (int)(sizeof ops / sizeof ops[0]); j++)
      if (strcmp(ops[j], op) == 0) u->op = j;
    if (u->op < 0) kvl_error(L, "filter: unknown operator '%s'", op ? op : "?");
    if (u->id == C_LIMIT) {
      const char *want = lua_tostring(L, -1);
      u->v = -1;
      for (int w = 0; want && w < KVP_NWHY; w++)
        if (strcmp(kvp_why_name((kvp_why)w), want) == 0) u->v = w;
      if (u->v < 0) {
        char names[256] = "";
        for (int w = 0; w < KVP_NWHY; w++) {
          if (w) strncat(names, ", ", sizeof names - strlen(names) - 1);
          strncat(names, kvp_why_name((kvp_why)w), sizeof names - strlen(names) - 1);
        }
        kvl_error(L, "filter: limit '%s' is not one of %s", want ? want : "?", names);
      }
    } else {
      u->v = kvl_toint(L, -1, "filter value");
    }
    u->dep = column_dep(u->id);
    lua_pop(L, 4);
  }
  /* conditions of the deployment first, then of the context, then of the
   * row: a failure of the first kinds skips the rows that share it */
  for (int i = 1; i < r->nrule; i++)
    for (int j = i; j > 0 && r->rules[j - 1].dep > r->rules[j].dep; j--) {
      rule t = r->rules[j];
      r->rules[j] = r->rules[j - 1];
      r->rules[j - 1] = t;
    }
}

/* Whether the row meets every condition of the declarative filter; else
 * what the first condition it fails depends on (*dep). */
static int rules_keep(const run *r, const kvp_sweep_row *row, int *dep) {
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

/* sweep_core.run(spec) -> rows written, total rows of the whole sweep */
/* The rows of spec.each: each row the filters keep, to the function at
 * r->each (its result ignored). Returns the rows given. */
static int each_row(lua_State *L, run *r, holder *h) {
  kvp_diag d = {{0}};
  kvp_sweep_row row;
  int64_t given = 0;
  int got, dep, top = lua_gettop(L);
  while ((got = kvp_sweep_next(h->s, &row, &d)) == 1) {
    if (r->nrule > 0 && !rules_keep(r, &row, &dep)) {
      if (dep != DEP_ROW) kvp_sweep_skip(h->s, &row, dep == DEP_LEDGER);
      if ((++r->rejected & 0xfff) == 0) kvl_poll(L);
      continue;
    }
    push_row(L, r, &row);
    int keep = 1;
    if (r->filter) {
      call_lua(L, r->filter, r->rowtab, 0, 0);
      keep = lua_toboolean(L, -1);
    }
    if (keep) {
      call_lua(L, r->each, r->rowtab, -1, 0);
      given++;
    }
    r->cur = NULL;
    lua_settop(L, top);
    if ((row.index & 0xfff) == 0) kvl_poll(L);
  }
  if (got < 0) return kvl_core_error(L, (kvp_err)-got, &d, "sweep");
  lua_pushinteger(L, (lua_Integer)given);
  return 1;
}

static int l_run(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  holder *h = lua_newuserdatauv(L, sizeof *h, 0);
  memset(h, 0, sizeof *h);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, holder_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  run *r = &h->r;

  /* base deployments */
  lua_getfield(L, 1, "nbase");
  r->ax.nbase = kvl_toint(L, -1, "nbase");
  lua_pop(L, 1);
  lua_getfield(L, 1, "base");
  luaL_checktype(L, -1, LUA_TFUNCTION);
  r->basefn = lua_gettop(L);
  lua_pushnil(L);
  r->entry = lua_gettop(L);
  r->entry_b = -1;
  r->L = L;
  r->base = xcalloc(L, 2, sizeof *r->base);
  r->ax.base = r->base;
  r->ax.fetch = fetch_base;
  r->ax.fetch_ctx = r;
  r->optim_axis = -1;
  r->kv_label = (int)kvl_int_field(L, 1, "kv_label", 0);
  read_axes(L, 1, r);
  if (lua_getfield(L, 1, "combos") == LUA_TTABLE) {
    r->nmcombo = (int64_t)luaL_len(L, -1);
    combo_list(L, lua_gettop(L), r, r->nmcombo, NULL, &r->mcombo);
  }
  lua_pop(L, 1);
  if (lua_getfield(L, 1, "non_torch") != LUA_TNIL) {
    kvl_check_non_torch(L, lua_gettop(L), &r->non_torch);
    r->ax.non_torch = &r->non_torch;
  }
  lua_pop(L, 1);
  r->ax.tp = r->tp = int_axis(L, 1, "tp", &r->ax.ntp);
  r->ax.pp = r->pp = int_axis(L, 1, "pp", &r->ax.npp);
  r->ax.context = r->context = int_axis(L, 1, "context", &r->ax.ncontext);
  r->ax.concurrency = r->concurrency = int_axis(L, 1, "concurrency", &r->ax.nconcurrency);
  if (r->ax.nconcurrency > 0) {
    r->concn = xcalloc(L, (size_t)r->ax.nconcurrency, sizeof *r->concn);
    for (int64_t i = 0; i < r->ax.nconcurrency; i++) {
      r->concn[i].len = kvp_fmt_int(r->concn[i].num, r->concurrency[i]);
      r->concn[i].s = r->concn[i].num;
    }
  }
  r->ax.kv = r->kv = format_axis(L, 1, "kv", &r->ax.nkv);
  r->ax.weights = r->weights = format_axis(L, 1, "weights", &r->ax.nweights);

  r->kv_names = lua_getfield(L, 1, "kv_names") == LUA_TTABLE ? lua_gettop(L) : 0;
  r->weights_names = lua_getfield(L, 1, "weights_names") == LUA_TTABLE ? lua_gettop(L) : 0;
  r->funcs = lua_getfield(L, 1, "funcs") == LUA_TTABLE ? lua_gettop(L) : 0;
  lua_getfield(L, 1, "filter");
  r->filter = lua_isfunction(L, -1) ? lua_gettop(L) : 0;
  lua_getfield(L, 1, "each");
  r->each = lua_isfunction(L, -1) ? lua_gettop(L) : 0;
  if (r->filter || r->each) {
    r->needrow = 1;
    r->want |= KVP_WANT_FIT | KVP_WANT_MAXCONC;
  }
  lua_getfield(L, 1, "columns");
  int cols = lua_gettop(L);
  luaL_checktype(L, cols, LUA_TTABLE);
  read_columns(L, 1, cols, r);
  if (r->needrow) make_rowtab(L, r);
  if (lua_getfield(L, 1, "rules") == LUA_TTABLE) read_rules(L, lua_gettop(L), r);
  lua_pop(L, 1);
  r->cost_id = -1;
  resolve_labels(L, r);
  plan_segments(L, r);

  /* the slice: shard k of n */
  int64_t first = 0, end = 0, k = 1, n = 1, total;
  if (lua_getfield(L, 1, "shard") == LUA_TTABLE) {
    lua_geti(L, -1, 1);
    lua_geti(L, -2, 2);
    k = kvl_toint(L, -2, "shard");
    n = kvl_toint(L, -1, "shard");
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  kvp_diag d = {{0}};
  kvp_err e = kvp_sweep_total(&r->ax, &total);
  if (e != KVP_OK) return kvl_error(L, "the sweep has more than 2^63 rows");
  if (kvp_sweep_shard(total, k, n, &first, &end) != KVP_OK)
    return kvl_error(L, "shard %I/%I: expected K/N with 1 <= K <= N", (lua_Integer)k, (lua_Integer)n);
  h->s = xcalloc(L, 1, sizeof *h->s);
  e = kvp_sweep_init(h->s, &r->ax, first, end, r->want, &d);
  if (e != KVP_OK) {
    free(h->s);
    h->s = NULL;
    return kvl_core_error(L, e, &d, "sweep");
  }
  if (lua_getfield(L, 1, "check") != LUA_TNIL) return 0; /* checked: write nothing */
  lua_pop(L, 1);

  /* spec.each: every row to it, nothing written */
  if (r->each) return each_row(L, r, h);

  /* the writer: header now, rows streamed, renamed into place at the end */
  lua_getfield(L, 1, "path");
  const char *path = lua_tostring(L, -1);
  char err[512];
  kvl_check_file(L, path, "w");
  int fmt = KVP_FMT_AUTO; /* spec.format: csv, table, json, markdown (fmtw.h) */
  if (lua_getfield(L, 1, "format") == LUA_TSTRING && (fmt = kvp_fmt_named(lua_tostring(L, -1))) < 0)
    return kvl_error(L, "field 'format' must be csv, table, json or markdown, got '%s'", lua_tostring(L, -1));
  lua_pop(L, 1);
  h->w = kvp_csv_open_as(path, fmt, err, sizeof err);
  if (h->w == NULL) return kvl_error(L, "%s", err);
  for (int i = 0; i < r->ncol; i++) {
    lua_geti(L, cols, i + 1);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    kvp_csv_str(h->w, s, len);
    lua_pop(L, 1);
  }
  kvp_csv_endrow(h->w);

  lua_getfield(L, 1, "progress");
  int show = lua_toboolean(L, -1) && isatty(STDERR_FILENO);
  lua_pop(L, 1);
  double start = now(), last = start;
  int64_t written = 0;
  kvp_sweep_row row;
  int got;
  int top = lua_gettop(L);
  while ((got = kvp_sweep_next(h->s, &row, &d)) == 1) {
    int rowidx = 0;
    int dep;
    if (r->nrule > 0 && !rules_keep(r, &row, &dep)) {
      /* the rows sharing what failed fail too: not evaluated */
      if (dep != DEP_ROW) kvp_sweep_skip(h->s, &row, dep == DEP_LEDGER);
      if ((++r->rejected & 0xfff) == 0) kvl_poll(L); /* a filter that keeps few rows */
      continue;
    }
    if (r->needrow) {
      push_row(L, r, &row);
      rowidx = r->rowtab;
      if (r->filter) {
        call_lua(L, r->filter, rowidx, 0, 0);
        int keep = lua_toboolean(L, -1);
        lua_pop(L, 1);
        if (!keep) {
          r->cur = NULL;
          lua_settop(L, top);
          continue;
        }
      }
    }
    write_row(L, r, h->w, &row, rowidx, cols);
    if (r->needrow) {
      r->cur = NULL;
      lua_settop(L, top);
    }
    written++;
    if ((row.index & 0xfff) == 0) kvl_poll(L); /* a time limit reached in this loop */
    if (show && (row.index & 0xffff) == 0 && now() - last > 0.25) {
      last = now();
      progress(row.index + 1 - first, end - first, start, 0);
    }
  }
  if (got < 0) return kvl_core_error(L, (kvp_err)-got, &d, "sweep");
  if (show) progress(end - first, end - first, start, 1);
  kvp_csv *w = h->w;
  h->w = NULL;
  if (kvp_csv_close(w, err, sizeof err) < 0) return kvl_error(L, "%s", err);
  lua_pushinteger(L, (lua_Integer)written);
  lua_pushinteger(L, (lua_Integer)total);
  return 2;
}

/* sweep_core.columns(): the built-in column names, in order */
static int l_columns(lua_State *L) {
  lua_createtable(L, (int)NBUILTIN, 0);
  for (size_t i = 0; i < NBUILTIN; i++) {
    lua_pushstring(L, builtin[i].name);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* sweep_core.shard(total, k, n) -> first, end (0-based, end exclusive) */
static int l_shard(lua_State *L) {
  int64_t first, end;
  if (kvp_sweep_shard(kvl_toint(L, 1, "total"), kvl_toint(L, 2, "shard"), kvl_toint(L, 3, "shard"),
                      &first, &end) != KVP_OK)
    return kvl_error(L, "bad shard %s/%s", lua_tostring(L, 2), lua_tostring(L, 3));
  lua_pushinteger(L, (lua_Integer)first);
  lua_pushinteger(L, (lua_Integer)end);
  return 2;
}

static const luaL_Reg funcs[] = {
  {"run", l_run}, {"columns", l_columns}, {"shard", l_shard}, {NULL, NULL}
};


int luaopen_kvplan_sweep_core(lua_State *L) {
  luaL_newlib(L, funcs);
  return 1;
}
