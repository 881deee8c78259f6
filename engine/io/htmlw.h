/*
 * htmlw.h: reports as HTML pages for people, and the index page of a batch.
 * Output layer: no Lua; writes through the atomic writer, never prints or exits.
 *
 * A page is one self-contained file: its CSS and its script inline, nothing
 * fetched (a Content-Security-Policy that allows no source but the page's
 * own inline code, data: images and nothing else), deterministic bytes (no
 * time is written; kvplan's version is). It holds the title, the inputs of
 * the run (name and value), the table with every column, each header with
 * its unit when one is given and sortable by a click (a column whose
 * non-empty cells are all numbers sorts as numbers, empty cells last), the
 * number of rows, then the charts: an SVG document embedded inline (from
 * its <svg> tag; one holding a script, an event handler or foreign content
 * is refused and said so), or the note saying why there is none. Every
 * string is HTML-escaped (& < > " '), and control characters (C0 but line
 * breaks and tabs, DEL, the C1 controls in UTF-8) are shown as escapes such
 * as \x1b, as the text tables show them.
 * The table is streamed: rows are written as they come, the charts at the
 * end, so a page is as large as its rows and the memory stays small.
 */
#ifndef KVP_HTMLW_H
#define KVP_HTMLW_H

#include <stddef.h>

#include "afile.h"

typedef struct kvp_html kvp_html;

/* A page's description, filled before its head is written; NULL when out of memory. */
kvp_html *kvp_html_new(void);
void kvp_html_free(kvp_html *h);
/* The page's title (default "kvplan report") and kvplan's version; 0 or -1 (memory). */
int kvp_html_title(kvp_html *h, const char *title);
int kvp_html_version(kvp_html *h, const char *version);
/* One input of the run, shown in the order given: 0 or -1. */
int kvp_html_input(kvp_html *h, const char *name, const char *value);
/* The unit of column col (0-based), shown in its header: 0 or -1. */
int kvp_html_unit(kvp_html *h, size_t col, const char *unit);
/* A chart under the table: svg[0..len) (NULL: none, then note says why),
 * titled; 0 or -1. */
int kvp_html_chart(kvp_html *h, const char *title, const char *svg, size_t len, const char *note);

/* The page up to the table's first row, with these column names; then each
 * row (n cells, missing ones empty; number[j]: cell j is a number, aligned
 * right); then the rest of the page. Each 0,
 * or -1 after a failed write (kvp_afile_error) or -2 out of memory. */
int kvp_html_head(kvp_html *h, kvp_afile *f, const char *const *names, size_t ncol);
int kvp_html_row(kvp_html *h, kvp_afile *f, const char *const *cells, const int *number, size_t n);
int kvp_html_end(kvp_html *h, kvp_afile *f);

/* A page of a command's text (kvplan startup, kvplan launch): the title,
 * the inputs, the text as preformatted lines, kvplan's version. 0, -1 or -2. */
int kvp_html_text(kvp_html *h, kvp_afile *f, const char *text);

/* The index page of a batch: one entry a script (its report name, the script, its
 * words, ok or FAILED) with links to the files it wrote (hrefs relative to
 * the page, percent-encoded). 0, -1 (write) or -2 (memory). */
typedef struct kvp_html_job {
  const char *name, *script, *words; /* words: its key=value pairs, space-separated */
  int ok;
  size_t nfiles;
  const char *const *files;          /* relative to the index page */
} kvp_html_job;
int kvp_html_index(kvp_afile *f, const char *title, const char *version, const kvp_html_job *jobs,
                   size_t njobs);

#endif
