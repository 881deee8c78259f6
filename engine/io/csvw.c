/*
 * csvw.c: the CSV report writer (see csvw.h).
 * Output layer: no Lua; writes files, never prints or exits.
 */
#define _POSIX_C_SOURCE 200809L
#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "afile.h"
#include "csvw.h"
#include "fmtw.h"

#define BUFSZ (1 << 16)

/* The longest field the formula guard holds back to tell a number from
 * text: the longest number kvplan prints is 328 characters (-DBL_MAX at
 * 17 decimals, kvp_fmt_fixed); a longer field is text. */
#define GUARD_PEND 512

struct kvp_csv {
  kvp_afile *f;        /* the atomic file (afile.c) */
  kvp_fmtw *conv;      /* another format than CSV (fmtw.c), NULL for CSV */
  int nfield;          /* fields in the current row */
  int failed;          /* errno of the first failure, 0 if none */
  int tty;             /* CSV to a terminal: control characters escaped */
  int tkept;           /* tty: a 0xC2 kept back, which may begin a C1 control */
  int guard;           /* --escape-formulas: the state of the guard below, 0 off */
  size_t npend;        /* guard: bytes of a field held back */
  char *gout;          /* guard: the guarded text of one flush */
  char pend[GUARD_PEND];
  size_t len;
  char buf[BUFSZ];
};

/* CSV bytes to a terminal: control characters other than the line ends
 * and tabs of the CSV itself (C0, DEL, the C1 controls U+0080..U+009F in
 * UTF-8) as escapes such as \x1b, so a cell cannot move the cursor,
 * recolour or retitle the terminal. A 0xC2 at the end, which may begin a
 * C1 control the next bytes end, is kept back (w->tkept) unless `last`;
 * 0 or -1. */
static int write_tty(kvp_csv *w, const char *p, size_t n, int last) {
  const unsigned char *s = (const unsigned char *)p;
  size_t from = 0, i = 0;
  if (w->tkept) { /* the 0xC2 the last call kept back */
    w->tkept = 0;
    int c1 = n > 0 && s[0] >= 0x80 && s[0] <= 0x9F;
    char esc[16];
    int k = c1 ? snprintf(esc, sizeof esc, "\\xc2\\x%02x", s[0]) : 1;
    if (!c1) esc[0] = (char)0xC2;
    if (n == 0 && !last) {
      w->tkept = 1;
      return 0;
    }
    if (kvp_afile_write(w->f, esc, (size_t)k) < 0) return -1;
    if (c1) i = from = 1;
  }
  int kept = !last && n > i && s[n - 1] == 0xC2;
  if (kept) n--;
  for (; i < n; i++) {
    char esc[16];
    int k;
    if (s[i] < 0x20 && s[i] != '\n' && s[i] != '\t') k = snprintf(esc, sizeof esc, "\\x%02x", s[i]);
    else if (s[i] == 0x7F) k = snprintf(esc, sizeof esc, "\\x7f");
    else if (s[i] == 0xC2 && i + 1 < n && s[i + 1] >= 0x80 && s[i + 1] <= 0x9F)
      k = snprintf(esc, sizeof esc, "\\xc2\\x%02x", s[i + 1]);
    else continue;
    if (kvp_afile_write(w->f, s + from, i - from) < 0 || kvp_afile_write(w->f, esc, (size_t)k) < 0)
      return -1;
    if (s[i] == 0xC2) i++;
    from = i + 1;
  }
  if (kvp_afile_write(w->f, s + from, n - from) < 0) return -1;
  w->tkept = kept;
  return 0;
}

/* ---- the formula guard (--escape-formulas) ------------------------------------
 * OWASP "CSV Injection" (owasp.org/www-community/attacks/CSV_Injection):
 * a spreadsheet runs a cell that begins with '=', '+', '-', '@', a tab or a
 * carriage return as a formula; prepend a single quote so it is read as
 * text. It works on the CSV text itself, after every writer (report rows,
 * a sweep's prebuilt rows), so no path is missed: a field is watched from
 * its first byte; an unquoted one that begins with a trigger is held back
 * until its end and passes unchanged when it is a decimal number (numbers
 * are never touched: "-5", "+1.5e3"); a quoted one holds text (a comma, a
 * quote or a line break) and gets the quote after its opening '"'. */

enum { G_OFF, G_START, G_PLAIN, G_PEND, G_QSTART, G_QUOTED, G_QQ };

static int escape_formulas;

void kvp_csv_escape_formulas(int on) { escape_formulas = on != 0; }

static int trigger(char c) {
  return c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r';
}

/* s[0..n) a decimal number: [+-] digits [. digits] [e [+-] digits] */
static int is_number(const char *s, size_t n) {
  size_t i = 0, d = 0;
  if (i < n && (s[i] == '+' || s[i] == '-')) i++;
  while (i < n && s[i] >= '0' && s[i] <= '9') i++, d++;
  if (i < n && s[i] == '.') {
    i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++, d++;
  }
  if (d == 0) return 0;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    size_t e = 0;
    i++;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++, e++;
    if (e == 0) return 0;
  }
  return i == n;
}

/* The held-back field, behind a quote unless it is a number. */
static char *guard_pend(kvp_csv *w, char *o) {
  if (!is_number(w->pend, w->npend)) *o++ = '\'';
  memcpy(o, w->pend, w->npend);
  o += w->npend;
  w->npend = 0;
  return o;
}

/* Guard n bytes of CSV text into w->gout (at most 2n + GUARD_PEND + 2
 * bytes); its length. `last`: the text ends here. */
static size_t guard(kvp_csv *w, const char *s, size_t n, int last) {
  char *o = w->gout;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    switch (w->guard) {
      case G_START:
        if (c == '"') w->guard = G_QSTART;
        else if (trigger(c)) {
          w->pend[0] = c;
          w->npend = 1;
          w->guard = G_PEND;
          continue;
        } else if (c != ',' && c != '\n') w->guard = G_PLAIN;
        break;
      case G_PLAIN:
        if (c == ',' || c == '\n') w->guard = G_START;
        break;
      case G_PEND:
        if (c == ',' || c == '\n') {
          o = guard_pend(w, o);
          w->guard = G_START;
          break;
        }
        if (w->npend < GUARD_PEND) {
          w->pend[w->npend++] = c;
          continue;
        }
        *o++ = '\''; /* longer than any number: text */
        memcpy(o, w->pend, w->npend);
        o += w->npend;
        w->npend = 0;
        w->guard = G_PLAIN;
        break;
      case G_QSTART:
        if (c == '"') w->guard = G_QQ;
        else {
          if (trigger(c)) *o++ = '\'';
          w->guard = G_QUOTED;
        }
        break;
      case G_QUOTED:
        if (c == '"') w->guard = G_QQ;
        break;
      case G_QQ: /* a quote inside a quoted field: doubled, or its end */
        if (c == '"') w->guard = G_QUOTED;
        else w->guard = c == ',' || c == '\n' ? G_START : G_PLAIN;
        break;
    }
    *o++ = c;
  }
  if (last && w->guard == G_PEND) {
    o = guard_pend(w, o);
    w->guard = G_START;
  }
  return (size_t)(o - w->gout);
}

static int flush_last(kvp_csv *w, int last);
static int flush(kvp_csv *w) { return flush_last(w, 0); }

static int flush_last(kvp_csv *w, int last) {
  const char *s = w->buf;
  size_t n = w->len;
  if (w->guard != G_OFF && !w->failed) {
    if (w->gout == NULL && (w->gout = malloc(2 * (size_t)BUFSZ + GUARD_PEND + 2)) == NULL) {
      w->failed = ENOMEM;
      return -1;
    }
    n = guard(w, w->buf, w->len, last);
    s = w->gout;
  }
  if (w->tty && (n > 0 || last)) {
    if (write_tty(w, s, n, last) < 0) {
      if (!w->failed) w->failed = kvp_afile_error(w->f);
      return -1;
    }
    w->len = 0;
    return 0;
  }
  if (n > 0 && w->conv != NULL) {
    if (kvp_fmtw_feed(w->conv, s, n) < 0) {
      if (!w->failed) w->failed = kvp_fmtw_error(w->conv);
      return -1;
    }
  } else if (n > 0 && kvp_afile_write(w->f, s, n) < 0) {
    if (!w->failed) w->failed = kvp_afile_error(w->f);
    return -1;
  }
  w->len = 0;
  return 0;
}

/* Room for n more bytes in the buffer (n <= BUFSZ). */
static int room(kvp_csv *w, size_t n) {
  if (w->failed) return -1;
  if (BUFSZ - w->len < n) return flush(w);
  return 0;
}

static int put_slow(kvp_csv *w, const char *s, size_t n) {
  while (n > 0) {
    if (room(w, 1) < 0) return -1;
    size_t k = BUFSZ - w->len < n ? BUFSZ - w->len : n;
    memcpy(w->buf + w->len, s, k);
    w->len += k;
    s += k;
    n -= k;
  }
  return 0;
}

static inline int put(kvp_csv *w, const char *s, size_t n) {
  if (BUFSZ - w->len >= n && !w->failed) {
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    return 0;
  }
  return put_slow(w, s, n);
}

static inline int sep(kvp_csv *w) {
  if (w->nfield++ == 0) return 0;
  if (w->len < BUFSZ && !w->failed) {
    w->buf[w->len++] = ',';
    return 0;
  }
  return put_slow(w, ",", 1);
}

static int default_format = KVP_FMT_AUTO;

void kvp_csv_default_format(int fmt) { default_format = fmt; }

int kvp_csv_resolve_format(const char *path, int fmt) {
  if (fmt != KVP_FMT_AUTO) return fmt;
  if (default_format != KVP_FMT_AUTO) return default_format;
  if (path == NULL || strcmp(path, "-") == 0) return isatty(STDOUT_FILENO) ? KVP_FMT_TABLE : KVP_FMT_CSV;
  const char *dot = strrchr(path, '.');
  if (dot != NULL && strchr(dot, '/') == NULL) {
    if (strcmp(dot, ".json") == 0 || strcmp(dot, ".jsonl") == 0) return KVP_FMT_JSON;
    if (strcmp(dot, ".md") == 0) return KVP_FMT_MARKDOWN;
    if (strcmp(dot, ".txt") == 0) return KVP_FMT_TABLE;
    if (strcmp(dot, ".html") == 0 || strcmp(dot, ".htm") == 0) return KVP_FMT_HTML;
  }
  return KVP_FMT_CSV;
}

kvp_csv *kvp_csv_open_as(const char *path, int fmt, char *err, size_t errlen) {
  kvp_csv *w = calloc(1, sizeof *w);
  if (w == NULL) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  fmt = kvp_csv_resolve_format(path, fmt);
  w->f = kvp_afile_open(path, err, errlen);
  if (w->f == NULL) {
    free(w);
    return NULL;
  }
  if (fmt != KVP_FMT_CSV && (w->conv = kvp_fmtw_new(fmt, w->f)) == NULL) {
    snprintf(err, errlen, "out of memory");
    kvp_afile_discard(w->f);
    free(w);
    return NULL;
  }
  w->tty = fmt == KVP_FMT_CSV && kvp_afile_is_terminal(w->f);
  w->guard = fmt == KVP_FMT_CSV && escape_formulas ? G_START : G_OFF;
  return w;
}

kvp_html *kvp_csv_html(kvp_csv *w) { return w->conv != NULL ? kvp_fmtw_html(w->conv) : NULL; }

kvp_csv *kvp_csv_open(const char *path, char *err, size_t errlen) {
  return kvp_csv_open_as(path, KVP_FMT_AUTO, err, errlen);
}

int kvp_csv_needs_quotes(const char *s, size_t len) {
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (c == ',' || c == '"' || c == '\r' || c == '\n' || c == '\0') return 1;
  }
  return 0;
}

int kvp_csv_raw(kvp_csv *w, const char *s, size_t len) {
  if (sep(w) < 0) return -1;
  return put(w, s, len);
}

int kvp_csv_str(kvp_csv *w, const char *s, size_t len) {
  if (!kvp_csv_needs_quotes(s, len)) return kvp_csv_raw(w, s, len);
  if (sep(w) < 0) return -1;
  /* quoted: libcsv doubles the quotes; at most 2 * len + 2 bytes */
  size_t need = csv_write(NULL, 0, s, len);
  char small[256], *q = need <= sizeof small ? small : malloc(need);
  if (q == NULL) {
    if (!w->failed) w->failed = ENOMEM;
    return -1;
  }
  csv_write(q, need, s, len);
  int r = put(w, q, need);
  if (q != small) free(q);
  return r;
}

static const char digits2[201] =
  "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
  "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
  "8081828384858687888990919293949596979899";

size_t kvp_fmt_int(char *buf, int64_t v) {
  char tmp[24];
  size_t n = sizeof tmp, len = 0;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  while (u >= 100) { /* two digits a step */
    unsigned d = (unsigned)(u % 100) * 2;
    u /= 100;
    tmp[--n] = digits2[d + 1];
    tmp[--n] = digits2[d];
  }
  if (u >= 10) {
    tmp[--n] = digits2[u * 2 + 1];
    tmp[--n] = digits2[u * 2];
  } else {
    tmp[--n] = (char)('0' + u);
  }
  if (v < 0) buf[len++] = '-';
  memcpy(buf + len, tmp + n, sizeof tmp - n);
  len += sizeof tmp - n;
  buf[len] = '\0';
  return len;
}

size_t kvp_fmt_double(char *buf, double v) {
  /* the shortest %.*g that reads back as the same double */
  for (int p = 1; p <= 17; p++) {
    int n = snprintf(buf, 32, "%.*g", p, v);
    if (p == 17 || strtod(buf, NULL) == v) return (size_t)n;
  }
  return 0;
}

/* Digits of a non-negative integer r with `precision` of them after a point. */
static size_t put_fixed(char *buf, int neg, uint64_t r, int precision) {
  char tmp[48];
  size_t n = 0, len = 0;
  do {
    tmp[n++] = (char)('0' + r % 10);
    r /= 10;
  } while (r != 0 || n < (size_t)precision + 1);
  int zero = 1;
  for (size_t i = 0; i < n; i++) zero &= tmp[i] == '0';
  if (neg && !zero) buf[len++] = '-';
  while (n > 0) {
    buf[len++] = tmp[--n];
    if (n == (size_t)precision && precision > 0) buf[len++] = '.';
  }
  buf[len] = '\0';
  return len;
}

size_t kvp_fmt_scaled(char *buf, int64_t num, int shift, int precision) {
  int neg = num < 0;
  uint64_t u = neg ? (uint64_t)0 - (uint64_t)num : (uint64_t)num;
  uint64_t ip = u >> shift, frac = u & (((uint64_t)1 << shift) - 1), r = ip;
  uint64_t limit = UINT64_MAX / 10;
  for (int i = 0; i < precision; i++) limit /= 10;
  if (ip >= limit) { /* too many digits for 64 bits: the double is exact below 2^53 */
    int len = snprintf(buf, 48, "%.*f", precision, (double)num / (double)((uint64_t)1 << shift));
    return len < 0 ? 0 : (size_t)len;
  }
  for (int i = 0; i < precision; i++) { /* frac < 2^shift, shift <= 40: no overflow */
    frac *= 10;
    r = r * 10 + (frac >> shift);
    frac &= ((uint64_t)1 << shift) - 1;
  }
  uint64_t half = (uint64_t)1 << (shift - 1);
  if (shift > 0 && (frac > half || (frac == half && (r & 1)))) r++;
  return put_fixed(buf, neg, r, precision);
}

int kvp_fmt_fixed(char *buf, size_t n, double v, int precision) {
  if (!isfinite(v) || precision < 0 || precision > 17) return -1;
  static const double pow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
  if (precision <= 9 && n >= 48) {
    /* fast path: below 2^40 the product's error is under 2^-13, so the
     * rounding matches printf's unless the exact value sits near a tie */
    double x = fabs(v) * pow10[precision];
    if (x < 1099511627776.0) {
      double f = x - floor(x);
      if (fabs(f - 0.5) > 1e-3) return (int)put_fixed(buf, v < 0, (uint64_t)(f < 0.5 ? floor(x) : floor(x) + 1), precision);
    }
  }
  int len = snprintf(buf, n, "%.*f", precision, v);
  if (len < 0 || (size_t)len >= n) return -1;
  if (buf[0] == '-' && strspn(buf + 1, "0.") == (size_t)len - 1) { /* no "-0.00" */
    memmove(buf, buf + 1, (size_t)len);
    len--;
  }
  return len;
}

int kvp_csv_int(kvp_csv *w, int64_t v) {
  if (sep(w) < 0 || room(w, 24) < 0) return -1;
  w->len += kvp_fmt_int(w->buf + w->len, v);
  return 0;
}

int kvp_csv_double(kvp_csv *w, double v) {
  if (!isfinite(v)) {
    if (!w->failed) w->failed = EDOM;
    return -1;
  }
  if (sep(w) < 0 || room(w, 32) < 0) return -1;
  w->len += kvp_fmt_double(w->buf + w->len, v);
  return 0;
}

int kvp_csv_fixed(kvp_csv *w, double v, int precision) {
  char tmp[400];
  int n = kvp_fmt_fixed(tmp, sizeof tmp, v, precision);
  if (n < 0) {
    if (!w->failed) w->failed = EDOM;
    return -1;
  }
  if (sep(w) < 0) return -1;
  return put(w, tmp, (size_t)n);
}

int kvp_csv_endrow(kvp_csv *w) {
  w->nfield = 0;
  return put(w, "\n", 1);
}

char *kvp_csv_row_begin(kvp_csv *w, size_t n) {
  if (n > BUFSZ / 2 || w->nfield != 0 || room(w, n + 1) < 0) return NULL;
  return w->buf + w->len;
}

int kvp_csv_row_end(kvp_csv *w, size_t used) {
  w->len += used;
  w->buf[w->len++] = '\n'; /* kvp_csv_row_begin kept room for it */
  return 0;
}

int kvp_csv_close(kvp_csv *w, char *err, size_t errlen) {
  int rc = 0;
  if (w->len > 0 || w->tkept || w->npend > 0) flush_last(w, 1);
  const char *why = NULL;
  if (w->conv != NULL) {
    if (!w->failed && kvp_fmtw_finish(w->conv) < 0) w->failed = kvp_fmtw_error(w->conv);
    why = kvp_fmtw_why(w->conv);
  }
  if (w->failed && kvp_afile_error(w->f) == 0) { /* a value that cannot be written (NaN) */
    snprintf(err, errlen, "cannot write '%s': %s", kvp_afile_path(w->f),
             why != NULL ? why : strerror(w->failed));
    kvp_afile_discard(w->f);
    rc = -1;
  } else {
    rc = kvp_afile_commit(w->f, err, errlen);
  }
  kvp_fmtw_free(w->conv);
  free(w->gout);
  free(w);
  return rc;
}

void kvp_csv_discard(kvp_csv *w) {
  if (w->len > 0 || w->tkept || w->npend > 0) flush_last(w, 1); /* standard output: what was written stays written */
  kvp_fmtw_free(w->conv);
  kvp_afile_discard(w->f);
  free(w->gout);
  free(w);
}
