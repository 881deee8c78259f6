/*
 * csv_lua.c: the Lua binding of the CSV writer and reader: require "kvplan.csv".
 * Binding layer: converts Lua values to fields and back; the writer is
 * csvw.c, the parser libcsv.
 */
#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "afile.h"
#include "csvw.h"
#include "fmtw.h"
#include "proc.h"
#include "kvplan_lua.h"

#define WRITER_MT "kvplan.CsvWriter"
#define MAX_COLUMNS 4096

typedef struct writer {
  kvp_csv *w;        /* NULL once closed or discarded */
  int ncol;
  int prec[];        /* per column: digits after the point, or -1 */
} writer;

static writer *check_writer(lua_State *L) {
  writer *w = luaL_checkudata(L, 1, WRITER_MT);
  if (w->w == NULL) kvl_error(L, "report is already closed");
  return w;
}

/* Name of column col (pushed on the stack, which keeps it alive). */
static const char *column_name(lua_State *L, int col) {
  lua_getiuservalue(L, 1, 1);
  lua_geti(L, -1, col);
  return lua_tostring(L, -1);
}

static void write_field(lua_State *L, writer *w, int col, int idx) {
  int rc;
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) {
        rc = kvp_csv_int(w->w, (int64_t)lua_tointeger(L, idx));
      } else {
        double v = lua_tonumber(L, idx);
        if (v != v || v - v != 0) { /* NaN or infinity: never in a report */
          const char *name = column_name(L, col);
          kvl_error(L, "column '%s' has no finite value (%s)", name, kvl_got(L, idx));
        }
        rc = w->prec[col - 1] >= 0 ? kvp_csv_fixed(w->w, v, w->prec[col - 1])
                                   : kvp_csv_double(w->w, v);
      }
      break;
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, idx, &len);
      rc = kvp_csv_str(w->w, s, len);
      break;
    }
    case LUA_TBOOLEAN:
      rc = lua_toboolean(L, idx) ? kvp_csv_str(w->w, "true", 4) : kvp_csv_str(w->w, "false", 5);
      break;
    default: {
      const char *name = column_name(L, col);
      kvl_error(L, "column '%s' must be a number, string or boolean, %s", name, kvl_got(L, idx));
      return;
    }
  }
  if (rc < 0) {
    char err[512];
    kvp_csv *c = w->w;
    w->w = NULL;
    kvp_csv_close(c, err, sizeof err);
    kvl_error(L, "%s", err);
  }
}

/* w:row(values): one row, values[1..ncol] in column order */
static int writer_row(lua_State *L) {
  writer *w = check_writer(L);
  luaL_checktype(L, 2, LUA_TTABLE);
  for (int c = 1; c <= w->ncol; c++) {
    lua_geti(L, 2, c);
    if (lua_isnil(L, -1)) return kvl_error(L, "row has no value for column '%s'", column_name(L, c));
    write_field(L, w, c, lua_gettop(L));
    lua_pop(L, 1);
  }
  if (kvp_csv_endrow(w->w) < 0) write_field(L, w, 1, 0); /* unreachable in practice */
  return 0;
}

/* w:close(): commit the report (rename into place) */
static int writer_close(lua_State *L) {
  writer *w = check_writer(L);
  char err[512];
  kvp_csv *c = w->w;
  w->w = NULL;
  if (kvp_csv_close(c, err, sizeof err) < 0) return kvl_error(L, "%s", err);
  return 0;
}

/* w:discard() and __gc/__close: drop an unfinished report */
static int writer_discard(lua_State *L) {
  writer *w = luaL_checkudata(L, 1, WRITER_MT);
  if (w->w != NULL) {
    kvp_csv_discard(w->w);
    w->w = NULL;
  }
  return 0;
}

/* w:chart(title, svg|nil, note): a chart of an HTML report, shown under
 * its table (the SVG document, or note saying why there is none); nothing
 * for another format. */
static int writer_chart(lua_State *L) {
  writer *w = check_writer(L);
  const char *title = luaL_checkstring(L, 2);
  size_t len = 0;
  const char *svg = luaL_optlstring(L, 3, NULL, &len);
  const char *note = luaL_optstring(L, 4, "");
  kvp_html *h = kvp_csv_html(w->w);
  if (h != NULL && kvp_html_chart(h, title, svg, len, note) < 0) return kvl_error(L, "out of memory");
  return 0;
}

static int writer_isopen(lua_State *L) {
  writer *w = luaL_checkudata(L, 1, WRITER_MT);
  lua_pushboolean(L, w->w != NULL);
  return 1;
}

/* A string field of the table at idx, or NULL (a number is converted). */
static const char *opt_string(lua_State *L, int idx, const char *key) {
  lua_getfield(L, idx, key);
  const char *s = lua_tostring(L, -1);
  lua_pop(L, 1); /* the table keeps it */
  return s;
}

/* The page's description at idx into h (kvl_html_page); nonzero when out of memory. */
static int describe(lua_State *L, int idx, kvp_html *h) {
  if (h == NULL || !lua_istable(L, idx)) return 0;
  idx = lua_absindex(L, idx);
  int bad = 0;
  const char *s;
  if ((s = opt_string(L, idx, "title")) != NULL) bad |= kvp_html_title(h, s);
  if ((s = opt_string(L, idx, "version")) != NULL) bad |= kvp_html_version(h, s);
  if (lua_getfield(L, idx, "inputs") == LUA_TTABLE) {
    for (lua_Integer i = 1; lua_geti(L, -1, i) == LUA_TTABLE; i++) {
      lua_geti(L, -1, 1);
      lua_geti(L, -2, 2);
      const char *name = lua_tostring(L, -2), *value = lua_tostring(L, -1);
      if (name != NULL && value != NULL) bad |= kvp_html_input(h, name, value);
      lua_pop(L, 3);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (lua_getfield(L, idx, "units") == LUA_TTABLE) {
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      if (lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1 && lua_type(L, -1) == LUA_TSTRING)
        bad |= kvp_html_unit(h, (size_t)(lua_tointeger(L, -2) - 1), lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  /* charts drawn before the rows are written (a sweep's): {{title, svg, note}, ...} */
  if (lua_getfield(L, idx, "charts") == LUA_TTABLE) {
    for (lua_Integer i = 1; lua_geti(L, -1, i) == LUA_TTABLE; i++) {
      const char *title = opt_string(L, -1, "title"), *note = opt_string(L, -1, "note");
      lua_getfield(L, -1, "svg");
      size_t len = 0;
      const char *svg = lua_tolstring(L, -1, &len);
      bad |= kvp_html_chart(h, title ? title : "", svg, svg ? len : 0, note ? note : "") < 0;
      lua_pop(L, 2);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return bad;
}

void kvl_html_page(lua_State *L, int idx, kvp_csv *w) {
  if (describe(L, idx, kvp_csv_html(w))) kvl_error(L, "out of memory");
}

/* The format named by argument i (fmtw.h KVP_FMT_*), KVP_FMT_AUTO when none. */
static int opt_format(lua_State *L, int i) {
  if (lua_isnoneornil(L, i)) return KVP_FMT_AUTO;
  int fmt = kvp_fmt_named(luaL_checkstring(L, i));
  if (fmt < 0)
    kvl_error(L, "field 'format' must be csv, table, vertical, json, markdown or html, got '%s'", lua_tostring(L, i));
  return fmt;
}

/* csv.open(path|nil, columns, precisions[, format[, page]]): a writer,
 * header written; format "csv", "table", "json", "markdown", "html", "vertical" or
 * "auto" (fmtw.h); page, for HTML: {title, version, inputs = {{name,
 * value}, ...}, units = {[column] = unit}} (kvl_html_page) */
static int l_open(lua_State *L) {
  const char *path = kvl_path_arg(L, 1, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  int fmt = opt_format(L, 4);
  lua_settop(L, 5);
  lua_remove(L, 4); /* the page at 4, the writer above it */
  lua_Integer ncol = luaL_len(L, 2);
  if (ncol < 1 || ncol > MAX_COLUMNS)
    return kvl_error(L, "a report needs 1..%d columns, got %I", MAX_COLUMNS, ncol);
  writer *w = lua_newuserdatauv(L, sizeof *w + sizeof(int) * (size_t)ncol, 1);
  w->w = NULL;
  w->ncol = (int)ncol;
  for (int c = 1; c <= w->ncol; c++) {
    w->prec[c - 1] = -1;
    if (lua_istable(L, 3) && lua_geti(L, 3, c) != LUA_TNIL) {
      int64_t p = kvl_toint(L, -1, "precision");
      if (p < 0 || p > 17) return kvl_error(L, "precision of column %d must be 0..17, got %I", c,
                                            (lua_Integer)p);
      w->prec[c - 1] = (int)p;
    }
    if (lua_istable(L, 3)) lua_pop(L, 1);
  }
  lua_pushvalue(L, 2);
  lua_setiuservalue(L, -2, 1);
  luaL_setmetatable(L, WRITER_MT);
  char err[512];
  kvl_check_file(L, path, "w");
  w->w = kvp_csv_open_as(path, fmt, err, sizeof err);
  if (w->w == NULL) return kvl_error(L, "%s", err);
  kvl_html_page(L, 4, w->w);
  for (int c = 1; c <= w->ncol; c++) {
    lua_geti(L, 2, c);
    if (lua_type(L, -1) != LUA_TSTRING)
      return kvl_error(L, "column %d must be named by a string, %s", c, kvl_got(L, -1));
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    kvp_csv_str(w->w, s, len);
    lua_pop(L, 1);
  }
  kvp_csv_endrow(w->w);
  return 1;
}

/* ---- atomic files ---------------------------------------------------------------- */

#define AFILE_MT "kvplan.AtomicFile"

static kvp_afile **check_afile(lua_State *L) {
  kvp_afile **f = luaL_checkudata(L, 1, AFILE_MT);
  if (*f == NULL) kvl_error(L, "file is already committed or discarded");
  return f;
}

/* f:write(s, ...): append strings; a failed write is an error (the
 * temporary is removed, the target untouched) */
static int afile_write(lua_State *L) {
  kvp_afile **f = check_afile(L);
  for (int i = 2; i <= lua_gettop(L); i++) {
    size_t len;
    const char *s = luaL_checklstring(L, i, &len);
    if (kvp_afile_write(*f, s, len) < 0) {
      char err[512];
      kvp_afile *g = *f;
      *f = NULL;
      kvp_afile_commit(g, err, sizeof err); /* fails: reports the write error, drops g */
      return kvl_error(L, "%s", err);
    }
  }
  return 0;
}

/* f:temp(): the temporary's path, for a program that writes the file itself */
static int afile_temp(lua_State *L) {
  kvp_afile **f = check_afile(L);
  const char *t = kvp_afile_temp(*f);
  if (t == NULL) return kvl_error(L, "standard output has no temporary file");
  lua_pushstring(L, t);
  return 1;
}

/* Commit box f's file (emptied first); a failed write or commit raised */
static int commit_box(lua_State *L, kvp_afile **f) {
  kvp_afile *g = *f;
  char err[512];
  *f = NULL;
  if (kvp_afile_commit(g, err, sizeof err) < 0) return kvl_error(L, "%s", err);
  return 0;
}

/* f:commit(): fsync, close and rename into place */
static int afile_commit(lua_State *L) {
  return commit_box(L, check_afile(L));
}

/* f:discard(), __gc, __close: remove the temporary */
static int afile_discard(lua_State *L) {
  kvp_afile **f = luaL_checkudata(L, 1, AFILE_MT);
  if (*f != NULL) {
    kvp_afile_discard(*f);
    *f = NULL;
  }
  return 0;
}

/* Push the box of the atomic file opened at path (NULL: standard output) */
static kvp_afile **open_box(lua_State *L, const char *path) {
  kvl_check_file(L, path, "w");
  kvp_afile **f = lua_newuserdatauv(L, sizeof *f, 0);
  *f = NULL;
  luaL_setmetatable(L, AFILE_MT);
  char err[512];
  *f = kvp_afile_open(path, err, sizeof err);
  if (*f == NULL) kvl_error(L, "%s", err);
  return f;
}

/* csv.atomic(path|nil): a file written through the atomic writer (afile.c) */
static int l_atomic(lua_State *L) {
  open_box(L, kvl_path_arg(L, 1, 1));
  return 1;
}

/* csv.text(path|nil, text[, format[, page]]): a command's text written
 * whole and atomically to path (nil: standard output); as an HTML page
 * (htmlw.h kvp_html_text) when the format resolves to html */
static int l_text(lua_State *L) {
  const char *path = kvl_path_arg(L, 1, 1);
  size_t len;
  const char *text = luaL_checklstring(L, 2, &len);
  int fmt = opt_format(L, 3);
  kvp_afile **f = open_box(L, path);
  int rc = 0;
  if (kvp_csv_resolve_format(path, fmt) == KVP_FMT_HTML) {
    kvp_html *h = kvp_html_new();
    rc = h == NULL || describe(L, 4, h) ? -2 : kvp_html_text(h, *f, text);
    kvp_html_free(h);
    if (rc == -2) return kvl_error(L, "out of memory");
  } else {
    rc = kvp_afile_write(*f, text, len);
  }
  return commit_box(L, f); /* a failed write too */
}

static const luaL_Reg afile_meth[] = {
  {"write", afile_write}, {"commit", afile_commit}, {"discard", afile_discard},
  {"temp", afile_temp}, {NULL, NULL}
};

/* ---- reader ------------------------------------------------------------------ */

typedef struct reader {
  lua_State *L;
  int rows;          /* index of the rows table on the stack */
  int lines;         /* index of the lines table */
  lua_Integer nrow;  /* rows done */
  int nfield;        /* fields in the current row */
  lua_Integer line;  /* line where the current row starts */
  lua_Integer cur;   /* current physical line */
  int open;          /* a row table is on the stack */
  size_t linelen;    /* bytes of the current physical line so far */
} reader;

/* The longest physical line the reader takes, in bytes (16 MiB, as kvplan
 * merge): past it the input is no CSV report or catalog (/dev/zero, a
 * binary file without line breaks grew one field without end). */
#define CSV_MAX_LINE ((size_t)1 << 24)

static void on_field(void *s, size_t len, void *data) {
  reader *r = data;
  lua_State *L = r->L;
  if (!r->open) {
    lua_newtable(L);
    r->open = 1;
    r->nfield = 0;
  }
  lua_pushlstring(L, s ? (const char *)s : "", s ? len : 0);
  lua_rawseti(L, -2, ++r->nfield);
}

static void on_row(int c, void *data) {
  reader *r = data;
  lua_State *L = r->L;
  (void)c;
  if (!r->open) on_field(NULL, 0, data); /* an empty line still makes one (empty) field */
  r->nrow++;
  lua_rawseti(L, r->rows, r->nrow);
  lua_pushinteger(L, r->line);
  lua_rawseti(L, r->lines, r->nrow);
  r->open = 0;
}

/* Feed n bytes to the parser one physical line a time, so each row knows
 * its first line; 0, or -1 when the CSV is malformed. */
static int feed_lines(struct csv_parser *p, reader *r, const char *buf, size_t n) {
  size_t start = 0;
  for (size_t i = 0; i < n; i++) {
    if (buf[i] != '\n') {
      if (++r->linelen > CSV_MAX_LINE) return -2;
      continue;
    }
    r->linelen = 0;
    if (csv_parse(p, buf + start, i + 1 - start, on_field, on_row, r) != i + 1 - start) return -1;
    start = i + 1;
    r->cur++;
    if (p->pstate == 0) r->line = r->cur; /* no row in progress: the next starts here */
  }
  if (start < n && csv_parse(p, buf + start, n - start, on_field, on_row, r) != n - start) return -1;
  return 0;
}

/* The bytes of a UTF-8 byte order mark that begins buf (3), else 0: a
 * spreadsheet's "CSV UTF-8" export begins with one, which made the first
 * header name '\xef\xbb\xbfgpu' (prices=, trace=: "expected columns 'gpu'
 * ..."); catalog_csv.lua dropped it on its own. */
static size_t bom(const char *buf, size_t n) {
  return n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
}

/* csv.read(path [, text]) -> rows, lines | nil, message. rows[i] is a list
 * of strings; lines[i] the line where row i starts (for error messages).
 * path "-" reads standard input; nil, message when it is empty. With text,
 * text is parsed instead of the file, named path in messages (a file
 * already read whole: standard input cannot be read twice). */
static int l_read(lua_State *L) {
  const char *path = kvl_path_arg(L, 1, 0);
  size_t tlen = 0;
  const char *text = luaL_optlstring(L, 2, NULL, &tlen);
  int std_in = strcmp(path, "-") == 0;
  if (text == NULL) kvl_check_file(L, path, "r");
  /* "-": standard input, which the command line lets one argument name */
  const char *shown = std_in ? "standard input" : path;
  FILE *f = text != NULL ? NULL : std_in ? stdin : fopen(path, "rb");
  if (text == NULL && f == NULL) {
    luaL_pushfail(L);
    lua_pushfstring(L, "cannot open '%s': %s", path, strerror(errno));
    return 2;
  }
  struct stat st;
  if (f != NULL && !std_in && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    return kvl_error(L, "cannot read '%s': it is a directory (expected a CSV file)", path);
  }
  lua_settop(L, 2); /* the text stays on the stack while it is parsed */
  struct csv_parser p;
  csv_init(&p, CSV_STRICT | CSV_APPEND_NULL | CSV_STRICT_FINI);
  /* the parser's field buffer through this file's realloc and free, which
   * the kvplan binary counts against --max-memory (engine/cli/limits.c) */
  csv_set_realloc_func(&p, realloc);
  csv_set_free_func(&p, free);
  /* libcsv grows a field's buffer by blk_size bytes a time (128 by
   * default): a megabyte cell would be thousands of reallocs */
  csv_set_blk_size(&p, 1 << 16);
  lua_newtable(L);
  lua_newtable(L);
  reader r = {L, lua_gettop(L) - 1, lua_gettop(L), 0, 0, 1, 1, 0, 0};
  char buf[4096];
  size_t n;
  int bad = 0, ioerr = 0;
  int read_any = 0;
  if (text != NULL) {
    read_any = tlen > 0;
    size_t skip = bom(text, tlen);
    bad = feed_lines(&p, &r, text + skip, tlen - skip);
  } else {
    while (!bad && (n = fread(buf, 1, sizeof buf, f)) > 0) {
      size_t skip = !read_any ? bom(buf, n) : 0;
      read_any = 1;
      bad = feed_lines(&p, &r, buf + skip, n - skip);
    }
    ioerr = ferror(f) ? (errno != 0 ? errno : EIO) : 0;
    if (std_in) clearerr(f);
    else fclose(f);
  }
  if (!bad && csv_fini(&p, on_field, on_row, &r) != 0) bad = 1;
  const char *why = csv_strerror(csv_error(&p));
  int nomem = csv_error(&p) == CSV_ENOMEM;
  csv_free(&p);
  if (ioerr) return kvl_error(L, "cannot read '%s': %s", shown, strerror(ioerr));
  if (bad == -2)
    return kvl_error(L, "%s:%I: a line longer than %I bytes (a CSV file's lines are at most 16 MiB)",
                     shown, r.cur, (lua_Integer)CSV_MAX_LINE);
  if (bad && nomem) /* a field past --max-memory is no malformed CSV */
    return kvl_error(L, "%s:%I: not enough memory for a field of %s (%s)", shown, r.cur, shown, why);
  if (bad) return kvl_error(L, "%s:%I: malformed CSV (%s)", shown, r.cur, why);
  if (std_in && !read_any) {
    luaL_pushfail(L);
    lua_pushliteral(L, "standard input ('-') is empty: nothing was piped in");
  }
  return 2; /* rows, lines; or fail, message above them */
}

/* csv.gnuplot(script) -> status, stderr: gnuplot (found in PATH) run
 * without a shell, script its standard input (proc.c); status 127 when it
 * is not installed. nil, why under the sandbox, where no program runs. A
 * time limit reached while it runs kills it and raises. */
static int l_gnuplot(lua_State *L) {
  size_t len;
  const char *script = luaL_checklstring(L, 1, &len);
  if (lua_getfield(L, LUA_REGISTRYINDEX, KVL_FILE_CHECK) == LUA_TFUNCTION) {
    luaL_pushfail(L);
    lua_pushliteral(L, "the sandbox runs no other program");
    return 2;
  }
  lua_pop(L, 1);
  static char name[] = "gnuplot";
  char *const argv[] = {name, NULL};
  char err[2048];
  int rc = kvp_proc_run(argv, script, len, &kvl_stop, err, sizeof err);
  if (rc < 0) {
    kvl_poll(L);
    return kvl_error(L, "%s", err);
  }
  lua_pushinteger(L, rc);
  lua_pushstring(L, err);
  return 2;
}

static const luaL_Reg writer_meth[] = {
  {"row", writer_row}, {"close", writer_close}, {"discard", writer_discard},
  {"isopen", writer_isopen}, {"chart", writer_chart}, {NULL, NULL}
};

/* csv.format_of(path|nil [, format]): the format a report of path asked
 * for format gets ("csv", "table", "json", "markdown", "html" or "vertical"; kvp_csv_resolve_format),
 * and the columns a table on the terminal is fitted to (0: none) */
static int l_format_of(lua_State *L) {
  static const char *const names[] = {"auto", "csv", "table", "json", "markdown", "html", "vertical"};
  const char *path = kvl_path_arg(L, 1, 1);
  int fmt = kvp_csv_resolve_format(path, opt_format(L, 2));
  lua_pushstring(L, names[fmt]);
  lua_pushinteger(L, (lua_Integer)kvp_fmtw_fit_width());
  return 2;
}

/* csv.replaces(path) -> whether writing a report to path replaces a file
 * (path absent or a regular file: the atomic writer renames over it), not
 * writes in place into a device, FIFO, socket or one of the process's own
 * descriptors (kvp_afile_in_place). The
 * path is checked as a report's would be (--sandbox: under the output
 * directory). */
static int l_replaces(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  kvl_check_file(L, path, "w");
  lua_pushboolean(L, !kvp_afile_in_place(path));
  return 1;
}

static const luaL_Reg funcs[] = {
  {"open", l_open}, {"read", l_read}, {"atomic", l_atomic}, {"gnuplot", l_gnuplot},
  {"format_of", l_format_of}, {"text", l_text}, {"replaces", l_replaces}, {NULL, NULL}
};


int luaopen_kvplan_csv(lua_State *L) {
  kvl_new_class(L, WRITER_MT, writer_meth, writer_discard);
  kvl_new_class(L, AFILE_MT, afile_meth, afile_discard);
  luaL_newlib(L, funcs);
  return 1;
}
