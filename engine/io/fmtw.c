/*
 * fmtw.c: report formats other than CSV (see fmtw.h).
 * Output layer: no Lua; writes through the atomic writer, never prints or exits.
 */
#include <csv.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmtw.h"
#include "htmlw.h"

/* A growable byte buffer. */
typedef struct buf {
  char *p;
  size_t len, cap;
} buf;

static int grow(buf *b, size_t n) {
  if (b->cap - b->len >= n) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < n) {
    if (cap > ((size_t)-1) / 2) return -1;
    cap *= 2;
  }
  char *p = realloc(b->p, cap);
  if (p == NULL) return -1;
  b->p = p;
  b->cap = cap;
  return 0;
}

static int add(buf *b, const char *s, size_t n) {
  if (n == 0) return 0; /* b->p may be NULL yet: memcpy takes no NULL */
  if (grow(b, n) < 0) return -1;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  return 0;
}

struct kvp_fmtw {
  int fmt, failed;
  kvp_afile *f;
  struct csv_parser parser;
  buf row;                 /* the fields of the current row, each NUL-ended (a NUL inside
                            * one: JSON keeps it, its length in flen; the other
                            * formats hold the escape "\\x00" in its place) */
  size_t nfield;
  size_t *flen, flencap;   /* JSON: the length of each field of the row */
  size_t ncol;             /* columns of the header (0 before it ends) */
  char **keys;             /* JSON: the header's names, encoded */
  buf cells;               /* tables: every cell, NUL-ended, row after row */
  size_t nrows;            /* tables: rows kept, the header included */
  buf out;                 /* JSON: the line being built */
  kvp_html *html;          /* HTML: the page (htmlw.c) */
  const char **cellp;      /* HTML: the current row's cells */
  int *cellnum;            /* HTML: which of them are numbers */
  int head;                /* HTML: the page's head is written */
  size_t nrow;             /* JSON: data rows seen, for a message */
  char why[256];           /* what failed, when it is not an errno's text */
};

int kvp_fmt_named(const char *name) {
  static const char *const names[] = {"auto", "csv", "table", "json", "markdown", "html", "vertical"};
  for (int i = 0; i < 7; i++)
    if (strcmp(name, names[i]) == 0) return i;
  return -1;
}

int kvp_fmt_is_number(const char *s, size_t len) {
  size_t i = 0;
  if (i < len && s[i] == '-') i++;
  if (i >= len || s[i] < '0' || s[i] > '9') return 0;
  if (s[i] == '0') i++;
  else while (i < len && s[i] >= '0' && s[i] <= '9') i++;
  if (i < len && s[i] == '.') {
    i++;
    if (i >= len || s[i] < '0' || s[i] > '9') return 0;
    while (i < len && s[i] >= '0' && s[i] <= '9') i++;
  }
  if (i < len && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < len && (s[i] == '+' || s[i] == '-')) i++;
    if (i >= len || s[i] < '0' || s[i] > '9') return 0;
    while (i < len && s[i] >= '0' && s[i] <= '9') i++;
  }
  return i == len;
}

static void fail(kvp_fmtw *c, int err) {
  if (!c->failed) c->failed = err;
}

kvp_fmtw *kvp_fmtw_new(int fmt, kvp_afile *f) {
  kvp_fmtw *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  if (csv_init(&c->parser, CSV_APPEND_NULL) != 0) {
    free(c);
    return NULL;
  }
  csv_set_blk_size(&c->parser, 1 << 16); /* long cells: few reallocs */
  if (fmt == KVP_FMT_HTML && (c->html = kvp_html_new()) == NULL) {
    csv_free(&c->parser);
    free(c);
    return NULL;
  }
  c->fmt = fmt;
  c->f = f;
  return c;
}

/* The offset of the first byte of s[0..len) that is not well-formed UTF-8
 * (RFC 3629: no overlong form, no surrogate, nothing past U+10FFFF), or
 * len when all are. */
static size_t utf8_bad(const unsigned char *s, size_t len) {
  size_t i = 0;
  while (i < len) {
    unsigned c = s[i];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF; /* the second byte's range */
    if (c < 0x80) {
      i++;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) n = 1;
    else if (c == 0xE0) n = 2, lo = 0xA0;
    else if (c == 0xED) n = 2, hi = 0x9F;
    else if (c >= 0xE1 && c <= 0xEF) n = 2;
    else if (c == 0xF0) n = 3, lo = 0x90;
    else if (c == 0xF4) n = 3, hi = 0x8F;
    else if (c >= 0xF1 && c <= 0xF3) n = 3;
    else return i;
    if (len - i <= n) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (size_t k = 2; k <= n; k++)
      if ((s[i + k] & 0xC0) != 0x80) return i;
    i += n + 1;
  }
  return len;
}

/* A string as a JSON string (jansson's encoder; DEL and the C1 controls
 * U+0080..U+009F, which JSON lets through raw, as \u escapes too, so no
 * control character reaches a terminal), appended to b. -1 when out of
 * memory; the caller has checked that s is UTF-8. */
static int add_json_string(buf *b, const char *s, size_t len) {
  json_t *j = json_stringn_nocheck(s, len);
  if (j == NULL) return -1;
  char *t = json_dumps(j, JSON_ENCODE_ANY);
  json_decref(j);
  if (t == NULL) return -1;
  int rc = 0;
  for (const unsigned char *p = (const unsigned char *)t; *p && rc == 0; p++) {
    char esc[8];
    if (*p == 0x7F) {
      rc = add(b, "\\u007F", 6);
    } else if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) {
      snprintf(esc, sizeof esc, "\\u%04X", (unsigned)p[1]);
      rc = add(b, esc, 6);
      p++;
    } else {
      rc = add(b, (const char *)p, 1);
    }
  }
  free(t);
  return rc;
}

/* A cell or a column's name that is not UTF-8 cannot be JSON text: c->why
 * names the row (none for the header), the column and the byte, and the
 * converter fails with EILSEQ; 0 when it is UTF-8. */
static int not_utf8(kvp_fmtw *c, const char *s, size_t len, size_t col) {
  size_t at = utf8_bad((const unsigned char *)s, len);
  if (at == len) return 0;
  unsigned byte = (unsigned char)s[at];
  if (c->keys == NULL)
    snprintf(c->why, sizeof c->why, "the name of column %zu is not UTF-8 (byte 0x%02x at byte "
             "%zu), which JSON text must be", col + 1, byte, at + 1);
  else
    snprintf(c->why, sizeof c->why, "row %zu, column %.64s: the value is not UTF-8 (byte 0x%02x "
             "at byte %zu), which JSON text must be", c->nrow, c->keys[col], byte, at + 1);
  fail(c, EILSEQ);
  return -1;
}

static int json_row(kvp_fmtw *c) {
  const char *p = c->row.p;
  c->out.len = 0;
  c->nrow++;
  if (add(&c->out, "{", 1) < 0) return -1;
  for (size_t i = 0; i < c->nfield && i < c->ncol; i++) {
    size_t len = c->flen[i];
    if (i > 0 && add(&c->out, ",", 1) < 0) return -1;
    if (add(&c->out, c->keys[i], strlen(c->keys[i])) < 0 || add(&c->out, ":", 1) < 0) return -1;
    int rc;
    if (len == 0) rc = add(&c->out, "null", 4);
    else if ((len == 4 && memcmp(p, "true", 4) == 0) || (len == 5 && memcmp(p, "false", 5) == 0) ||
             kvp_fmt_is_number(p, len))
      rc = add(&c->out, p, len);
    else if (not_utf8(c, p, len, i) < 0) return -3;
    else rc = add_json_string(&c->out, p, len);
    if (rc < 0) return -1;
    p += len + 1;
  }
  if (add(&c->out, "}\n", 2) < 0) return -1;
  return kvp_afile_write(c->f, c->out.p, c->out.len) < 0 ? -2 : 0;
}

/* HTML: the current row's cells (at most the header's) into c->cellp; their number. */
static size_t html_cells(kvp_fmtw *c) {
  const char *p = c->row.p;
  size_t n = c->nfield < c->ncol ? c->nfield : c->ncol;
  for (size_t i = 0; i < n; i++) {
    c->cellp[i] = p;
    p += strlen(p) + 1;
  }
  return n;
}

/* A page writer's result: -1 a failed write, -2 out of memory. */
static void html_failed(kvp_fmtw *c, int rc) {
  if (rc == -1) fail(c, kvp_afile_error(c->f) ? kvp_afile_error(c->f) : EIO);
  if (rc == -2) fail(c, ENOMEM);
}

static void on_field(void *s, size_t len, void *data) {
  kvp_fmtw *c = data;
  if (c->failed) return;
  const char *f = s ? s : "";
  int rc = 0;
  if (c->fmt == KVP_FMT_JSON) { /* the bytes as they are, and their length */
    if (c->nfield == c->flencap) {
      size_t cap = c->flencap ? 2 * c->flencap : 16;
      size_t *p = realloc(c->flen, cap * sizeof *p);
      if (p == NULL) { fail(c, ENOMEM); return; }
      c->flen = p;
      c->flencap = cap;
    }
    c->flen[c->nfield] = len;
    rc = add(&c->row, f, len);
  } else { /* a NUL ended the cell for every strlen below: the escape cells give it */
    size_t from = 0;
    for (size_t i = 0; i < len && rc == 0; i++)
      if (f[i] == '\0') {
        rc = add(&c->row, f + from, i - from);
        if (rc == 0) rc = add(&c->row, "\\x00", 4);
        from = i + 1;
      }
    if (rc == 0) rc = add(&c->row, f + from, len - from);
  }
  if (rc < 0 || add(&c->row, "", 1) < 0) fail(c, ENOMEM);
  c->nfield++;
}

static void on_row(int term, void *data) {
  (void)term;
  kvp_fmtw *c = data;
  if (c->failed) goto done;
  if (c->ncol == 0) { /* the header */
    c->ncol = c->nfield;
    if (c->fmt == KVP_FMT_JSON) {
      const char *p = c->row.p;
      for (size_t i = 0; i < c->ncol; i++) { /* every name UTF-8, before any is kept */
        size_t len = c->flen[i];
        if (not_utf8(c, p, len, i) < 0) goto done;
        p += len + 1;
      }
      c->keys = calloc(c->ncol ? c->ncol : 1, sizeof *c->keys);
      if (c->keys == NULL) { fail(c, ENOMEM); goto done; }
      p = c->row.p;
      for (size_t i = 0; i < c->ncol; i++) {
        buf k = {0};
        size_t len = c->flen[i];
        if (add_json_string(&k, p, len) < 0 || add(&k, "", 1) < 0) { free(k.p); fail(c, ENOMEM); goto done; }
        c->keys[i] = k.p;
        p += len + 1;
      }
      goto done;
    }
    if (c->fmt == KVP_FMT_HTML) {
      c->cellp = calloc(c->ncol ? c->ncol : 1, sizeof *c->cellp);
      c->cellnum = calloc(c->ncol ? c->ncol : 1, sizeof *c->cellnum);
      if (c->cellp == NULL || c->cellnum == NULL) { fail(c, ENOMEM); goto done; }
      html_cells(c);
      c->head = 1;
      html_failed(c, kvp_html_head(c->html, c->f, c->cellp, c->ncol));
      goto done;
    }
  }
  if (c->fmt == KVP_FMT_HTML) {
    size_t n = html_cells(c);
    for (size_t i = 0; i < n; i++) c->cellnum[i] = kvp_fmt_is_number(c->cellp[i], strlen(c->cellp[i]));
    html_failed(c, kvp_html_row(c->html, c->f, c->cellp, c->cellnum, n));
  } else if (c->fmt == KVP_FMT_JSON) {
    int rc = json_row(c);
    if (rc == -1) fail(c, ENOMEM);
    if (rc == -2) fail(c, kvp_afile_error(c->f) ? kvp_afile_error(c->f) : EIO);
  } else { /* tables: keep ncol cells, missing ones empty */
    const char *p = c->row.p;
    for (size_t i = 0; i < c->ncol; i++) {
      size_t len = i < c->nfield ? strlen(p) : 0;
      if (add(&c->cells, i < c->nfield ? p : "", len) < 0 || add(&c->cells, "", 1) < 0) {
        fail(c, ENOMEM);
        break;
      }
      if (i < c->nfield) p += len + 1;
    }
    c->nrows++;
  }
done:
  c->row.len = 0;
  c->nfield = 0;
}

int kvp_fmtw_feed(kvp_fmtw *c, const char *b, size_t n) {
  if (c->failed) return -1;
  if (csv_parse(&c->parser, b, n, on_field, on_row, c) != n) fail(c, EINVAL);
  return c->failed ? -1 : 0;
}

static int pad(buf *b, size_t n) {
  while (n-- > 0)
    if (add(b, " ", 1) < 0) return -1;
  return 0;
}

/* One cell into b (NULL: only measured), its display width added to *w
 * (a UTF-8 character one column: continuation bytes count nothing): line
 * breaks and tabs become spaces, other control characters (C0, DEL, the C1
 * controls U+0080..U+009F in UTF-8) escapes such as \x1b, so a cell cannot
 * move the cursor, recolour or retitle the terminal; in Markdown '|' is
 * escaped. */
static int cell_cut(buf *b, const char *s, int md, size_t *w, size_t limit);
static int cell(buf *b, const char *s, int md, size_t *w) { return cell_cut(b, s, md, w, 0); }

/* The same, cut to at most limit columns (0: none) when it is wider: its
 * first limit - 1 columns and an ellipsis. */
static int cell_cut(buf *b, const char *s, int md, size_t *w, size_t limit) {
  size_t start = *w;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char esc[16];
    const char *out = (const char *)p;
    size_t n = 1;
    if (*p == '\n' || *p == '\r' || *p == '\t') {
      out = " ";
    } else if (*p < 0x20 || *p == 0x7F) {
      n = (size_t)snprintf(esc, sizeof esc, "\\x%02x", (unsigned)*p);
      out = esc;
    } else if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) {
      n = (size_t)snprintf(esc, sizeof esc, "\\xc2\\x%02x", (unsigned)p[1]);
      out = esc;
      p++;
    } else if (md && *p == '|') {
      out = "\\|";
      n = 2;
    }
    size_t cols = out == (const char *)p ? (*p & 0xC0) != 0x80 : n;
    if (limit > 0 && *w - start + cols > limit - 1 && cols > 0) {
      *w += 1; /* the ellipsis, U+2026 */
      return b != NULL && add(b, "\xe2\x80\xa6", 3) < 0 ? -1 : 0;
    }
    *w += cols;
    if (b != NULL && add(b, out, n) < 0) return -1;
  }
  return 0;
}

static size_t cell_width(const char *s, int md) {
  size_t w = 0;
  cell(NULL, s, md, &w);
  return w;
}

static size_t fit_width; /* kvp_fmtw_fit: a terminal's columns, 0 for none */

void kvp_fmtw_fit(size_t columns) { fit_width = columns; }

size_t kvp_fmtw_fit_width(void) { return fit_width; }

/* Words joined by sep (1 or 2) spaces into lines of at most width columns (a word
 * wider than that alone on its line), written to f: 0, -1 (memory) or -2
 * (the write failed). */
static int write_words(kvp_afile *f, const char *const *words, size_t n, size_t width, size_t sep) {
  buf line = {0};
  size_t used = 0;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    size_t ww = cell_width(words[i], 0);
    if (used > 0 && used + sep + ww > width) {
      if (add(&line, "\n", 1) < 0) rc = -1;
      used = 0;
    } else if (used > 0) {
      if (add(&line, "  ", sep) < 0) rc = -1;
      used += sep;
    }
    if (rc == 0 && cell(&line, words[i], 0, &used) < 0) rc = -1;
  }
  if (rc == 0 && used > 0 && add(&line, "\n", 1) < 0) rc = -1;
  if (rc == 0 && line.len > 0 && kvp_afile_write(f, line.p, line.len) < 0) rc = -2;
  free(line.p);
  return rc;
}

/* The width of a table line of the kept columns. */
static size_t span(const size_t *w, const int *keep, size_t ncol) {
  size_t t = 0, k = 0;
  for (size_t j = 0; j < ncol; j++)
    if (keep[j] == 1) t += w[j] + (k++ > 0 ? 2 : 0);
  return t;
}

/* A column name of printable ASCII broken into lines of at most target
 * characters after its underscores, packed greedily: the number of lines,
 * and of line `line` (when < the number) its start and length. A name with
 * another byte, or with a piece longer than target, is one line. */
static size_t header_lines(const char *h, size_t target, size_t line, const char **start, size_t *len) {
  size_t n = strlen(h), count = 0, at = 0;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)h[i] < 0x21 || (unsigned char)h[i] > 0x7e) target = n;
  while (at < n) {
    size_t end = at, best = at;
    while (end < n) { /* the longest run of whole pieces within target */
      size_t next = end;
      while (next < n && h[next] != '_') next++;
      if (next < n) next++; /* the underscore ends its piece */
      if (next - at > target && end > at) break;
      end = next;
      best = end;
      if (next - at > target) break;
    }
    if (count == line && start != NULL) *start = h + at, *len = best - at;
    count++;
    at = best;
  }
  return count ? count : 1;
}

/* The narrowest width at or above `least` that name h wraps into (its
 * longest piece, at most its own length). */
static size_t header_target(const char *h, size_t least) {
  size_t n = strlen(h), longest = 0, run = 0;
  for (size_t i = 0; i < n; i++) {
    if ((unsigned char)h[i] < 0x21 || (unsigned char)h[i] > 0x7e) return n;
    run++;
    if (h[i] == '_' || i + 1 == n) {
      if (run > longest) longest = run;
      run = 0;
    }
  }
  return longest > least ? longest : least;
}

/* A table wider than the terminal (fit_width), made to fit, in this order:
 * the columns that hold one value in every row are said once above it
 * ("name: value"); numeric columns whose name is wider than their figures
 * are left out; text columns wider than their name and 16 columns are cut
 * (an ellipsis ends a cut cell); columns are left out from the right. A
 * line under the table names what was left out. keep[j]: 1 shown, 0 left
 * out, 2 said above; cap[j]: the cut width, 0 none. */
static void fit_table(kvp_fmtw *c, const char **at, size_t *w, const int *num, int *keep, size_t *cap,
                      size_t *hw) {
  size_t ncol = c->ncol, width = fit_width, kept = ncol;
  if (span(w, keep, ncol) <= width) return;
  /* 1. one value in every row: said above the table */
  for (size_t j = 0; c->nrows > 2 && j < ncol && kept > 1; j++) {
    int same = 1;
    for (size_t r = 2; r < c->nrows && same; r++) same = strcmp(at[r * ncol + j], at[ncol + j]) == 0;
    if (same) keep[j] = 2, kept--;
  }
  /* 2. a name wider than its column's cells written on several lines,
   * broken after its underscores (throughput_ / tokens_s) */
  for (size_t j = 0; j < ncol && span(w, keep, ncol) > width; j++) {
    if (keep[j] != 1) continue;
    size_t most = 0;
    for (size_t r = 1; r < c->nrows; r++) {
      size_t cw = cell_width(at[r * ncol + j], 0);
      if (cw > most) most = cw;
    }
    size_t t = header_target(at[j], most);
    if (t < w[j]) w[j] = t, hw[j] = t;
  }
  /* 3. text columns wider than their name and 16 cut, the widest first */
  size_t *full = malloc(sizeof *full * ncol);
  if (full != NULL) memcpy(full, w, sizeof *full * ncol);
  for (;;) {
    size_t t = span(w, keep, ncol);
    if (t <= width) break;
    size_t best = ncol, floor = 0;
    for (size_t j = 0; j < ncol; j++) {
      size_t f = cell_width(at[j], 0);
      if (f < 16) f = 16;
      if (keep[j] == 1 && !num[j] && w[j] > f && (best == ncol || w[j] > w[best])) best = j, floor = f;
    }
    if (best == ncol) break;
    size_t over = t - width;
    w[best] = w[best] - floor > over ? w[best] - over : floor;
    cap[best] = w[best];
  }
  /* 4. from the right, sparing a text column that ends the table (a note,
   * a why: cut already) until the last */
  size_t tail = ncol;
  for (size_t j = ncol; j-- > 0;)
    if (keep[j] == 1) {
      if (!num[j]) tail = j;
      break;
    }
  while (kept > 1 && span(w, keep, ncol) > width) {
    size_t pick = ncol;
    for (size_t j = ncol; pick == ncol && j-- > 0;)
      if (keep[j] == 1 && j != tail) pick = j;
    keep[pick == ncol ? tail : pick] = 0;
    kept--;
  }
  /* room a left-out column freed goes back to the cut ones */
  for (size_t j = 0; full != NULL && j < ncol; j++) {
    size_t t = span(w, keep, ncol);
    if (keep[j] == 1 && cap[j] > 0 && t < width) {
      w[j] = full[j] - w[j] <= width - t ? full[j] : w[j] + (width - t);
      cap[j] = w[j] == full[j] ? 0 : w[j];
    }
  }
  free(full);
}

/* Row r of the kept cells as a record, one line a column: its name
 * (padded to nw, the widest name), then its value from column nw + 2;
 * with colon, "name:" and the padding after it (-f vertical), else two
 * spaces (a one-row table on a terminal). Values cut to `limit` columns
 * (0: none). 0, -1 (memory) or -2 (the write failed). */
static int write_record(kvp_fmtw *c, const char **at, size_t r, size_t nw, int colon, size_t limit,
                        buf *line) {
  size_t ncol = c->ncol;
  for (size_t j = 0; j < ncol; j++) {
    line->len = 0;
    size_t m = 0;
    if (cell(line, at[j], 0, &m) < 0) return -1;
    if (colon && add(line, ":", 1) < 0) return -1;
    if (pad(line, nw - m + (colon ? 1 : 2)) < 0) return -1;
    m = 0;
    if (cell_cut(line, at[r * ncol + j], 0, &m, limit) < 0) return -1;
    while (line->len > 0 && line->p[line->len - 1] == ' ') line->len--;
    if (add(line, "\n", 1) < 0) return -1;
    if (kvp_afile_write(c->f, line->p, line->len) < 0) return -2;
  }
  return 0;
}

/* The widest column name of the kept header. */
static size_t name_width(kvp_fmtw *c, const char **at) {
  size_t nw = 0;
  for (size_t j = 0; j < c->ncol; j++) {
    size_t w = cell_width(at[j], 0);
    if (w > nw) nw = w;
  }
  return nw;
}

/* -f vertical: every row a record ("name: value" lines, the names aligned),
 * a blank line between records; on a terminal (kvp_fmtw_fit) values are cut
 * to its width as a one-row table's are. */
static int write_vertical(kvp_fmtw *c) {
  size_t ncol = c->ncol;
  if (ncol == 0 || c->nrows < 2) return 0;
  const char **at = malloc(sizeof *at * ncol * c->nrows);
  buf line = {0};
  int rc = -1;
  if (at == NULL) goto out;
  const char *p = c->cells.p;
  for (size_t i = 0; i < ncol * c->nrows; i++) {
    at[i] = p;
    p += strlen(p) + 1;
  }
  size_t nw = name_width(c, at);
  size_t limit = fit_width > 0 && kvp_afile_is_terminal(c->f) ? (fit_width > nw + 2 ? fit_width - nw - 2 : 1) : 0;
  rc = 0;
  for (size_t r = 1; r < c->nrows && rc == 0; r++) {
    if (r > 1 && kvp_afile_write(c->f, "\n", 1) < 0) rc = -2;
    if (rc == 0) rc = write_record(c, at, r, nw, 1, limit, &line);
  }
out:
  if (rc == -1) fail(c, ENOMEM);
  if (rc == -2) fail(c, kvp_afile_error(c->f) ? kvp_afile_error(c->f) : EIO);
  free(at);
  free(line.p);
  return rc < 0 ? -1 : 0;
}

static int write_table(kvp_fmtw *c) {
  size_t ncol = c->ncol;
  if (ncol == 0 || c->nrows == 0) return 0;
  int md = c->fmt == KVP_FMT_MARKDOWN;
  const char **at = malloc(sizeof *at * ncol * c->nrows);
  size_t *w = calloc(ncol, sizeof *w), *cap = calloc(ncol, sizeof *cap), *hw = calloc(ncol, sizeof *hw);
  int *num = calloc(ncol, sizeof *num), *keep = calloc(ncol, sizeof *keep);
  const char **words = calloc(ncol + 1, sizeof *words);
  size_t *off = calloc(ncol + 1, sizeof *off);
  buf line = {0}, facts = {0};
  int rc = -1;
  if (at == NULL || w == NULL || num == NULL || cap == NULL || keep == NULL || words == NULL ||
      off == NULL || hw == NULL) goto out;
  const char *p = c->cells.p;
  for (size_t i = 0; i < ncol * c->nrows; i++) {
    at[i] = p;
    p += strlen(p) + 1;
  }
  for (size_t j = 0; j < ncol; j++) {
    num[j] = c->nrows > 1;
    keep[j] = 1;
    for (size_t r = 0; r < c->nrows; r++) {
      const char *s = at[r * ncol + j];
      size_t cw = cell_width(s, md);
      if (cw > w[j]) w[j] = cw;
      if (r > 0 && s[0] != '\0' && !kvp_fmt_is_number(s, strlen(s))) num[j] = 0;
    }
    if (md && w[j] < 3) w[j] = 3;
  }
  int fit = !md && fit_width > 0 && kvp_afile_is_terminal(c->f);
  if (fit && c->nrows == 2 && span(w, keep, ncol) > fit_width) {
    /* one row too wide: a name and its value a line (write_record) */
    size_t nw0 = name_width(c, at);
    rc = write_record(c, at, 1, nw0, 0, fit_width > nw0 + 2 ? fit_width - nw0 - 2 : 1, &line);
    goto out;
  }
  if (fit) fit_table(c, at, w, num, keep, cap, hw);
  /* the facts every row shares, above the table */
  size_t nw = 0;
  for (size_t j = 0; j < ncol; j++)
    if (keep[j] == 2 && at[ncol + j][0] != '\0') { /* an empty column says nothing */
      off[nw++] = facts.len;
      if (add(&facts, at[j], strlen(at[j])) < 0 || add(&facts, ": ", 2) < 0 ||
          add(&facts, at[ncol + j], strlen(at[ncol + j]) + 1) < 0) goto out;
    }
  for (size_t i = 0; i < nw; i++) words[i] = facts.p + off[i];
  if (nw > 0 && (rc = write_words(c->f, words, nw, fit_width, 2)) < 0) goto out;
  rc = -1;
  size_t last = 0; /* the last column shown */
  for (size_t j = 0; j < ncol; j++)
    if (keep[j] == 1) last = j;
  /* names wrapped onto several lines (fit_table): those lines first */
  size_t hl = 1;
  for (size_t j = 0; j < ncol; j++)
    if (keep[j] == 1 && hw[j] > 0) {
      size_t n = header_lines(at[j], hw[j], 0, NULL, NULL);
      if (n > hl) hl = n;
    }
  for (size_t i = 0; hl > 1 && i < hl; i++) {
    line.len = 0;
    int first = 1;
    for (size_t j = 0; j < ncol; j++) {
      if (keep[j] != 1) continue;
      const char *h = at[j];
      size_t len = 0;
      if (hw[j] > 0) header_lines(at[j], hw[j], i, &h, &len);
      else if (i == hl - 1) len = strlen(h); /* a name on one line: the last */
      buf piece = {0};
      size_t m = 0;
      if (add(&piece, h, len) < 0 || add(&piece, "", 1) < 0) { free(piece.p); goto out; }
      cell_cut(NULL, piece.p, 0, &m, cap[j]);
      size_t gap = w[j] > m ? w[j] - m : 0;
      if (!first && add(&line, "  ", 2) < 0) { free(piece.p); goto out; }
      if (num[j] && pad(&line, gap) < 0) { free(piece.p); goto out; }
      size_t shown = 0;
      int bad = cell_cut(&line, piece.p, 0, &shown, cap[j]) < 0;
      free(piece.p);
      if (bad || (!num[j] && j != last && pad(&line, gap) < 0)) goto out;
      first = 0;
    }
    while (line.len > 0 && line.p[line.len - 1] == ' ') line.len--;
    if (add(&line, "\n", 1) < 0) goto out;
    if (kvp_afile_write(c->f, line.p, line.len) < 0) {
      rc = -2;
      goto out;
    }
  }
  for (size_t r = hl > 1 ? 1 : 0; r < c->nrows; r++) {
    line.len = 0;
    int first = 1;
    if (r == 1 && hl > 1) { /* the rule under the wrapped names */
      for (size_t j = 0; j < ncol; j++) {
        if (keep[j] != 1) continue;
        if (!first && add(&line, "  ", 2) < 0) goto out;
        for (size_t k = 0; k < w[j]; k++)
          if (add(&line, "-", 1) < 0) goto out;
        first = 0;
      }
      if (add(&line, "\n", 1) < 0) goto out;
      first = 1;
    }
    for (size_t j = 0; j < ncol; j++) {
      if (keep[j] != 1) continue;
      const char *s = at[r * ncol + j];
      size_t m = 0;
      cell_cut(NULL, s, md, &m, cap[j]);
      size_t gap = w[j] - m;
      int right = num[j];
      if (md && add(&line, first ? "| " : " | ", first ? 2 : 3) < 0) goto out;
      if (!md && !first && add(&line, "  ", 2) < 0) goto out;
      if (right && pad(&line, gap) < 0) goto out;
      size_t shown = 0;
      if (cell_cut(&line, s, md, &shown, cap[j]) < 0) goto out;
      if (!right && (md || j != last) && pad(&line, gap) < 0) goto out;
      first = 0;
    }
    if (md && add(&line, " |", 2) < 0) goto out;
    while (!md && line.len > 0 && line.p[line.len - 1] == ' ') line.len--;
    if (add(&line, "\n", 1) < 0) goto out;
    if (r == 0) { /* the rule under the header */
      first = 1;
      for (size_t j = 0; j < ncol; j++) {
        if (keep[j] != 1) continue;
        if (md) {
          if (add(&line, "|", 1) < 0) goto out;
          for (size_t k = 0; k < w[j] + 2; k++)
            if (add(&line, k == w[j] + 1 && num[j] ? ":" : "-", 1) < 0) goto out;
        } else {
          if (!first && add(&line, "  ", 2) < 0) goto out;
          for (size_t k = 0; k < w[j]; k++)
            if (add(&line, "-", 1) < 0) goto out;
        }
        first = 0;
      }
      if (add(&line, md ? "|\n" : "\n", md ? 2 : 1) < 0) goto out;
    }
    if (kvp_afile_write(c->f, line.p, line.len) < 0) {
      rc = -2;
      goto out;
    }
  }
  /* the columns left out, named under the table, its words wrapped */
  facts.len = 0;
  size_t left = 0;
  for (size_t j = 0; j < ncol; j++)
    if (keep[j] == 0) {
      char head[64];
      snprintf(head, sizeof head, left++ == 0 ? "(not shown, to fit %zu columns: " : ", ", fit_width);
      if (add(&facts, head, strlen(head)) < 0 || add(&facts, at[j], strlen(at[j])) < 0) goto out;
    }
  if (left > 0) {
    static const char tail[] = "; --wide shows every column, -f csv writes them all)";
    if (add(&facts, tail, sizeof tail) < 0) goto out;
    const char **ws = malloc(sizeof *ws * (facts.len / 2 + 1));
    if (ws == NULL) goto out;
    size_t n = 0;
    for (char *q = strtok(facts.p, " "); q != NULL; q = strtok(NULL, " ")) ws[n++] = q;
    rc = write_words(c->f, ws, n, fit_width, 1);
    free(ws);
    if (rc < 0) goto out;
  }
  rc = 0;
out:
  if (rc == -1) fail(c, ENOMEM);
  if (rc == -2) fail(c, kvp_afile_error(c->f) ? kvp_afile_error(c->f) : EIO);
  free(at);
  free(w);
  free(cap);
  free(hw);
  free(num);
  free(keep);
  free(words);
  free(off);
  free(line.p);
  free(facts.p);
  return rc < 0 ? -1 : 0;
}

int kvp_fmtw_finish(kvp_fmtw *c) {
  if (c->failed) return -1;
  csv_fini(&c->parser, on_field, on_row, c);
  if (c->failed) return -1;
  if (c->fmt == KVP_FMT_TABLE || c->fmt == KVP_FMT_MARKDOWN) return write_table(c);
  if (c->fmt == KVP_FMT_VERTICAL) return write_vertical(c);
  if (c->fmt == KVP_FMT_HTML) {
    if (!c->head) html_failed(c, kvp_html_head(c->html, c->f, NULL, 0)); /* no header: no columns */
    if (!c->failed) html_failed(c, kvp_html_end(c->html, c->f));
    return c->failed ? -1 : 0;
  }
  return 0;
}

kvp_html *kvp_fmtw_html(kvp_fmtw *c) { return c->html; }

int kvp_fmtw_error(const kvp_fmtw *c) { return c->failed; }

const char *kvp_fmtw_why(const kvp_fmtw *c) { return c->why[0] != '\0' ? c->why : NULL; }

void kvp_fmtw_free(kvp_fmtw *c) {
  if (c == NULL) return;
  csv_free(&c->parser);
  if (c->keys != NULL)
    for (size_t i = 0; i < c->ncol; i++) free(c->keys[i]);
  free(c->keys);
  free(c->row.p);
  free(c->flen);
  free(c->cells.p);
  free(c->out.p);
  kvp_html_free(c->html);
  free(c->cellp);
  free(c->cellnum);
  free(c);
}
