/*
 * htmlw.c: reports as HTML pages, and the index page of a batch (see htmlw.h).
 * Output layer: no Lua; writes through the atomic writer, never prints or exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "htmlw.h"

typedef struct chart {
  char *title, *svg, *note; /* svg NULL: note says why there is none */
  size_t len;
} chart;

struct kvp_html {
  char *title, *version;
  char **inputs;            /* name, value, name, value, ... */
  size_t ninputs;           /* pairs */
  char **units;             /* by column, NULL for none */
  size_t nunits;
  chart *charts;
  size_t ncharts;
  size_t ncol, nrows;
  int failed;               /* -1 write, -2 memory: every later call fails so */
  kvp_afile *f;
  size_t len;
  char buf[1 << 15];        /* bytes not yet written to f */
};

static char *dup(const char *s) {
  if (s == NULL) return NULL;
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  return p ? memcpy(p, s, n) : NULL;
}

static void *grow(void *p, size_t n, size_t size) {
  if (size != 0 && n > ((size_t)-1) / size) return NULL;
  return realloc(p, n * size);
}

kvp_html *kvp_html_new(void) { return calloc(1, sizeof(kvp_html)); }

void kvp_html_free(kvp_html *h) {
  if (h == NULL) return;
  free(h->title);
  free(h->version);
  for (size_t i = 0; i < 2 * h->ninputs; i++) free(h->inputs[i]);
  free(h->inputs);
  for (size_t i = 0; i < h->nunits; i++) free(h->units[i]);
  free(h->units);
  for (size_t i = 0; i < h->ncharts; i++) {
    free(h->charts[i].title);
    free(h->charts[i].svg);
    free(h->charts[i].note);
  }
  free(h->charts);
  free(h);
}

static int set(char **at, const char *s) {
  char *p = dup(s);
  if (p == NULL) return -1;
  free(*at);
  *at = p;
  return 0;
}

int kvp_html_title(kvp_html *h, const char *title) { return set(&h->title, title); }
int kvp_html_version(kvp_html *h, const char *version) { return set(&h->version, version); }

int kvp_html_input(kvp_html *h, const char *name, const char *value) {
  char **p = grow(h->inputs, 2 * (h->ninputs + 1), sizeof *p);
  if (p == NULL) return -1;
  h->inputs = p;
  p[2 * h->ninputs] = dup(name);
  p[2 * h->ninputs + 1] = dup(value);
  h->ninputs++;
  return p[2 * h->ninputs - 2] && p[2 * h->ninputs - 1] ? 0 : -1;
}

int kvp_html_unit(kvp_html *h, size_t col, const char *unit) {
  if (col >= h->nunits) {
    char **p = grow(h->units, col + 1, sizeof *p);
    if (p == NULL) return -1;
    for (size_t i = h->nunits; i <= col; i++) p[i] = NULL;
    h->units = p;
    h->nunits = col + 1;
  }
  return set(&h->units[col], unit);
}

int kvp_html_chart(kvp_html *h, const char *title, const char *svg, size_t len, const char *note) {
  chart *p = grow(h->charts, h->ncharts + 1, sizeof *p);
  if (p == NULL) return -1;
  h->charts = p;
  chart *c = &p[h->ncharts++];
  memset(c, 0, sizeof *c);
  c->title = dup(title ? title : "");
  c->note = dup(note ? note : "");
  if (svg != NULL && (c->svg = malloc(len + 1)) != NULL) {
    memcpy(c->svg, svg, len);
    c->svg[len] = '\0';
    c->len = len;
  }
  return c->title && c->note && (svg == NULL || c->svg) ? 0 : -1;
}

/* ---- writing -------------------------------------------------------------------- */

static int flush(kvp_html *h) {
  if (h->failed) return -1;
  if (h->len > 0 && kvp_afile_write(h->f, h->buf, h->len) < 0) h->failed = -1;
  h->len = 0;
  return h->failed ? -1 : 0;
}

static int put(kvp_html *h, const char *s, size_t n) {
  if (h->failed) return -1;
  if (sizeof h->buf - h->len < n) {
    if (flush(h) < 0) return -1;
    if (n > sizeof h->buf) {
      if (kvp_afile_write(h->f, s, n) < 0) h->failed = -1;
      return h->failed ? -1 : 0;
    }
  }
  memcpy(h->buf + h->len, s, n);
  h->len += n;
  return 0;
}

static int puts_(kvp_html *h, const char *s) { return put(h, s, strlen(s)); }

/* s escaped for HTML text and attribute values: & < > " ' as references,
 * control characters but line breaks and tabs as escapes (\x1b, \xc2\x9b),
 * as the text tables show them. */
static int esc(kvp_html *h, const char *s) {
  const unsigned char *p = (const unsigned char *)s, *from = p;
  for (; *p; p++) {
    const char *r = NULL;
    char e[16];
    int two = 0;
    switch (*p) {
      case '&': r = "&amp;"; break;
      case '<': r = "&lt;"; break;
      case '>': r = "&gt;"; break;
      case '"': r = "&quot;"; break;
      case '\'': r = "&#39;"; break;
      default:
        if ((*p < 0x20 && *p != '\n' && *p != '\t' && *p != '\r') || *p == 0x7F) {
          snprintf(e, sizeof e, "\\x%02x", (unsigned)*p);
          r = e;
        } else if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) {
          snprintf(e, sizeof e, "\\xc2\\x%02x", (unsigned)p[1]);
          r = e;
          two = 1;
        }
    }
    if (r == NULL) continue;
    if (put(h, (const char *)from, (size_t)(p - from)) < 0 || puts_(h, r) < 0) return -1;
    p += two;
    from = p + 1;
  }
  return put(h, (const char *)from, (size_t)(p - from));
}

/* The page's style: readable on a screen and printed, no font fetched. */
static const char style[] =
  "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:1.5em;color:#1a1a1a;"
  "background:#fff}\n"
  "h1{font-size:1.4em;margin:0 0 .6em}h2{font-size:1.1em;margin:1.4em 0 .5em}\n"
  "table{border-collapse:collapse;font-size:.9em}\n"
  "th,td{border:1px solid #ccc;padding:.25em .55em;vertical-align:top}\n"
  "th{background:#eef2f7;text-align:left;white-space:nowrap}\n"
  "#report th{cursor:pointer;user-select:none}\n"
  "#report th:hover,#report th:focus{background:#dde6f0}\n"
  "#report th[aria-sort=ascending]::after{content:' \\25B2'}\n"
  "#report th[aria-sort=descending]::after{content:' \\25BC'}\n"
  "th .unit{font-weight:normal;color:#555}\n"
  "#report td{white-space:nowrap}#report td.w{white-space:normal;min-width:22em;max-width:44em}\n"
  "td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
  "tbody tr:nth-child(even){background:#f8f9fb}\n"
  "#inputs th{background:none;border:none;padding:.1em 1em .1em 0}\n"
  "#inputs td{border:none;padding:.1em 0;font-family:ui-monospace,monospace;white-space:pre-wrap}\n"
  ".note{color:#8a4b00}\n"
  "figure{margin:1em 0}figcaption{font-weight:bold;margin-bottom:.3em}\n"
  "figure svg{max-width:100%;height:auto}\n"
  "footer{margin-top:2em;color:#666;font-size:.85em}\n";

/* The sort: a click (or Enter, Space) on a header orders the rows by that
 * column, again the other way. A column whose non-empty cells are all
 * numbers as kvplan writes them sorts as numbers; text by code point (the
 * same order everywhere); empty cells last; ties keep their order. */
static const char script[] =
  "(function(){\n"
  "var t=document.getElementById('report');if(!t||!t.tHead)return;\n"
  "var hs=t.tHead.rows[0].cells,num=/^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?$/;\n"
  "function sortBy(i){\n"
  "var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),isnum=true;\n"
  "var v=rows.map(function(r,k){var s=r.cells[i]?r.cells[i].textContent:'';"
  "if(s!==''&&!num.test(s))isnum=false;return {r:r,s:s,k:k};});\n"
  "var d=hs[i].getAttribute('aria-sort')==='ascending'?-1:1;\n"
  "v.sort(function(a,c){if(a.s===''||c.s==='')return a.s===c.s?a.k-c.k:a.s===''?1:-1;\n"
  "var x=isnum?parseFloat(a.s)-parseFloat(c.s):a.s<c.s?-1:a.s>c.s?1:0;return x!==0?d*x:a.k-c.k;});\n"
  "for(var j=0;j<hs.length;j++)hs[j].removeAttribute('aria-sort');\n"
  "hs[i].setAttribute('aria-sort',d>0?'ascending':'descending');\n"
  "v.forEach(function(e){b.appendChild(e.r);});}\n"
  "Array.prototype.forEach.call(hs,function(h,i){h.tabIndex=0;\n"
  "h.addEventListener('click',function(){sortBy(i);});\n"
  "h.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();sortBy(i);}});});\n"
  "})();\n";

/* The document's start: its head (title, the policy, the style) and the h1. */
static int doc_head(kvp_html *h, const char *title) {
  puts_(h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
           "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
           "<meta name=\"generator\" content=\"kvplan ");
  esc(h, h->version ? h->version : "");
  puts_(h, "\">\n<title>");
  esc(h, title);
  puts_(h, "</title>\n<style>\n");
  puts_(h, style);
  puts_(h, "</style>\n</head>\n<body>\n<h1>");
  esc(h, title);
  return puts_(h, "</h1>\n");
}

static int footer(kvp_html *h) {
  puts_(h, "<footer>Written by kvplan ");
  esc(h, h->version ? h->version : "");
  return puts_(h, ".</footer>\n");
}

static int end(kvp_html *h, int rc) {
  if (rc < 0 && !h->failed) h->failed = -2;
  return h->failed;
}

/* The inputs of the run, a table of names and values. */
static int inputs(kvp_html *h) {
  if (h->ninputs > 0) {
    puts_(h, "<h2>Inputs</h2>\n<table id=\"inputs\">\n");
    for (size_t i = 0; i < h->ninputs; i++) {
      puts_(h, "<tr><th scope=\"row\">");
      esc(h, h->inputs[2 * i]);
      puts_(h, "</th><td>");
      esc(h, h->inputs[2 * i + 1]);
      puts_(h, "</td></tr>\n");
    }
    puts_(h, "</table>\n");
  }
  return h->failed;
}

int kvp_html_head(kvp_html *h, kvp_afile *f, const char *const *names, size_t ncol) {
  h->f = f;
  h->ncol = ncol;
  doc_head(h, h->title ? h->title : "kvplan report");
  inputs(h);
  puts_(h, "<h2>Report</h2>\n<table id=\"report\">\n<thead><tr>");
  for (size_t j = 0; j < ncol; j++) {
    puts_(h, "<th scope=\"col\" title=\"sort by this column\">");
    esc(h, names[j]);
    if (j < h->nunits && h->units[j] != NULL && h->units[j][0] != '\0') {
      puts_(h, " <span class=\"unit\">(");
      esc(h, h->units[j]);
      puts_(h, ")</span>");
    }
    puts_(h, "</th>");
  }
  return end(h, puts_(h, "</tr></thead>\n<tbody>\n"));
}

int kvp_html_row(kvp_html *h, kvp_afile *f, const char *const *cells, const int *number, size_t n) {
  h->f = f;
  puts_(h, "<tr>");
  for (size_t j = 0; j < h->ncol; j++) {
    const char *s = j < n ? cells[j] : "";
    /* short cells on one line, long ones (a why, a note) wrapped in a wide column */
    puts_(h, j < n && number[j] ? "<td class=\"n\">" : strlen(s) > 40 ? "<td class=\"w\">" : "<td>");
    esc(h, s);
    puts_(h, "</td>");
  }
  h->nrows++;
  return end(h, puts_(h, "</tr>\n"));
}

/* An SVG document is embedded from its <svg> tag to its end; NULL when it
 * has none, or holds what could run or fetch in a page (a script, an event
 * handler attribute, foreign content). gnuplot escapes the text it writes,
 * so data never makes such a thing: this is the second line. */
static const char *svg_body(const char *svg, size_t len, size_t *n) {
  const char *at = NULL;
  for (size_t i = 0; i + 4 <= len; i++)
    if (strncmp(svg + i, "<svg", 4) == 0) {
      at = svg + i;
      break;
    }
  if (at == NULL) return NULL;
  size_t rest = len - (size_t)(at - svg);
  for (size_t i = 0; i < rest; i++) {
    if (at[i] == '\0') return NULL;
    if (at[i] == '<' && (strncasecmp(at + i, "<script", 7) == 0 || strncasecmp(at + i, "<foreignObject", 14) == 0))
      return NULL;
    /* an attribute named on...= (onload, onclick) */
    if ((at[i] == ' ' || at[i] == '\t' || at[i] == '\n') && i + 3 < rest && (at[i + 1] | 0x20) == 'o' &&
        (at[i + 2] | 0x20) == 'n') {
      size_t k = i + 3;
      while (k < rest && ((at[k] | 0x20) >= 'a' && (at[k] | 0x20) <= 'z')) k++;
      if (k > i + 3 && k < rest && at[k] == '=') return NULL;
    }
  }
  *n = rest;
  return at;
}

int kvp_html_end(kvp_html *h, kvp_afile *f) {
  char count[64];
  h->f = f;
  snprintf(count, sizeof count, "</tbody>\n</table>\n<p id=\"rows\">%zu row%s</p>\n", h->nrows,
           h->nrows == 1 ? "" : "s");
  puts_(h, count);
  if (h->ncharts > 0) puts_(h, "<h2>Charts</h2>\n");
  for (size_t i = 0; i < h->ncharts; i++) {
    const chart *c = &h->charts[i];
    size_t n = 0;
    const char *body = c->svg ? svg_body(c->svg, c->len, &n) : NULL;
    puts_(h, "<figure class=\"chart\">\n<figcaption>");
    esc(h, c->title);
    puts_(h, "</figcaption>\n");
    if (body != NULL) {
      put(h, body, n);
      puts_(h, "\n");
    } else {
      puts_(h, "<p class=\"note\">No chart: ");
      esc(h, c->svg != NULL ? "the SVG gnuplot wrote holds a script or foreign content; refused" : c->note);
      puts_(h, "</p>\n");
    }
    puts_(h, "</figure>\n");
  }
  footer(h);
  puts_(h, "<script>\n");
  puts_(h, script);
  puts_(h, "</script>\n</body>\n</html>\n");
  if (end(h, 0) == 0) flush(h);
  return h->failed;
}

int kvp_html_text(kvp_html *h, kvp_afile *f, const char *text) {
  h->f = f;
  doc_head(h, h->title ? h->title : "kvplan");
  inputs(h);
  puts_(h, "<h2>Output</h2>\n<pre id=\"text\">");
  esc(h, text);
  puts_(h, "</pre>\n");
  footer(h);
  puts_(h, "</body>\n</html>\n");
  if (end(h, 0) == 0) flush(h);
  return h->failed;
}

/* ---- the index of a batch ----------------------------------------------------- */

/* A relative path as an href: bytes but unreserved ones and '/' percent-encoded. */
static int href(kvp_html *h, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char e[4];
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
        strchr("-._~/", *p) != NULL) {
      if (put(h, (const char *)p, 1) < 0) return -1;
    } else {
      snprintf(e, sizeof e, "%%%02X", (unsigned)*p);
      if (put(h, e, 3) < 0) return -1;
    }
  }
  return 0;
}

int kvp_html_index(kvp_afile *f, const char *title, const char *version, const kvp_html_job *jobs,
                   size_t njobs) {
  kvp_html *h = kvp_html_new();
  if (h == NULL) return -2;
  h->f = f;
  if (kvp_html_version(h, version) < 0) {
    kvp_html_free(h);
    return -2;
  }
  size_t ok = 0;
  for (size_t i = 0; i < njobs; i++) ok += jobs[i].ok != 0;
  doc_head(h, title);
  char line[160];
  snprintf(line, sizeof line, "<p id=\"summary\">%zu script%s, %zu ok, %zu failed.</p>\n", njobs,
           njobs == 1 ? "" : "s", ok, njobs - ok);
  puts_(h, line);
  puts_(h, "<table id=\"report\">\n<thead><tr><th scope=\"col\">report</th><th scope=\"col\">status"
           "</th><th scope=\"col\">script</th><th scope=\"col\">arguments</th><th scope=\"col\">files"
           "</th></tr></thead>\n<tbody>\n");
  for (size_t i = 0; i < njobs; i++) {
    const kvp_html_job *j = &jobs[i];
    puts_(h, "<tr><td>");
    esc(h, j->name);
    puts_(h, j->ok ? "</td><td>ok</td><td>" : "</td><td class=\"note\">FAILED</td><td>");
    esc(h, j->script);
    puts_(h, "</td><td>");
    esc(h, j->words ? j->words : "");
    puts_(h, "</td><td>");
    for (size_t k = 0; k < j->nfiles; k++) {
      puts_(h, k > 0 ? "<br><a href=\"" : "<a href=\"");
      href(h, j->files[k]);
      puts_(h, "\">");
      esc(h, j->files[k]);
      puts_(h, "</a>");
    }
    if (j->nfiles == 0) puts_(h, j->ok ? "none" : "none (the batch's standard error says why)");
    puts_(h, "</td></tr>\n");
  }
  puts_(h, "</tbody>\n</table>\n");
  footer(h);
  puts_(h, "<script>\n");
  puts_(h, script);
  puts_(h, "</script>\n</body>\n</html>\n");
  int rc = end(h, 0) == 0 ? flush(h) : h->failed;
  if (rc == 0) rc = h->failed;
  kvp_html_free(h);
  return rc;
}
