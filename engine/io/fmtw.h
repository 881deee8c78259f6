/*
 * fmtw.h: report formats other than CSV.
 * Output layer: no Lua; writes through the atomic writer, never prints or exits.
 *
 * The CSV writer (csvw.c) produces CSV bytes; for another format it hands
 * them here instead of to its file. The first row is the header.
 *   KVP_FMT_JSON      JSON Lines: one object a row, streamed as rows end;
 *                     keys and strings encoded by jansson; a cell that is a
 *                     JSON number is written as the CSV has it (fixed
 *                     precision kept), true/false as booleans, an empty
 *                     cell as null; a cell or name that is not UTF-8 is
 *                     an error naming its row and column (JSON text is
 *                     UTF-8), DEL and the C1 controls as \u escapes.
 *   KVP_FMT_TABLE     an aligned text table for terminals: columns padded
 *                     to their widest cell (UTF-8 characters), numeric
 *                     columns right-aligned, the header underlined;
 *                     line breaks and tabs in a cell as spaces, other
 *                     control characters as escapes (\x1b), in Markdown too;
 *                     on a terminal, fitted to its width (kvp_fmtw_fit).
 *   KVP_FMT_MARKDOWN  a GitHub-flavoured Markdown table, '|' escaped,
 *                     numeric columns right-aligned.
 *   KVP_FMT_HTML      a self-contained HTML page (htmlw.h): its inputs, the
 *                     table streamed row by row, its charts; the page's
 *                     description through kvp_fmtw_html before any row.
 *   KVP_FMT_VERTICAL  one record a row: a line "name: value" a column, the
 *                     names aligned, a blank line between records; cells
 *                     escaped as in tables; on a terminal the values cut to
 *                     its width (kvp_fmtw_fit). Nothing for a header alone.
 * Tables are aligned, so they are kept in memory until the report ends.
 */
#ifndef KVP_FMTW_H
#define KVP_FMTW_H

#include <stddef.h>

#include "afile.h"
#include "htmlw.h"

enum { KVP_FMT_AUTO = 0, KVP_FMT_CSV, KVP_FMT_TABLE, KVP_FMT_JSON, KVP_FMT_MARKDOWN, KVP_FMT_HTML,
       KVP_FMT_VERTICAL };

typedef struct kvp_fmtw kvp_fmtw;

/* A converter to format fmt (TABLE, JSON, MARKDOWN, HTML or VERTICAL) writing to f; NULL
 * when out of memory. */
kvp_fmtw *kvp_fmtw_new(int fmt, kvp_afile *f);
/* CSV bytes, any split; 0, or -1 with an errno kept for kvp_fmtw_error. */
int kvp_fmtw_feed(kvp_fmtw *c, const char *buf, size_t n);
/* The end of the report: write what is kept (tables); 0 or -1. */
int kvp_fmtw_finish(kvp_fmtw *c);
int kvp_fmtw_error(const kvp_fmtw *c);
/* What failed in words when an errno's text would not say it (a value
 * that is not UTF-8 for JSON: its row, column and byte), else NULL. */
const char *kvp_fmtw_why(const kvp_fmtw *c);
void kvp_fmtw_free(kvp_fmtw *c);
/* Tables written to a terminal from now on fit `columns` (0: none): the
 * columns of one value in every row are said once above the table as
 * "name: value", text columns wider than their name and 16 are cut with an
 * ellipsis, then columns are left out from the right and named under it. */
void kvp_fmtw_fit(size_t columns);
/* The columns kvp_fmtw_fit set (0: none), for text written beside a table. */
size_t kvp_fmtw_fit_width(void);
/* HTML: the page's description to fill before the header row is fed
 * (title, inputs, units, charts); NULL for another format. */
kvp_html *kvp_fmtw_html(kvp_fmtw *c);
/* "csv", "table", "json", "markdown", "html", "vertical", "auto" -> KVP_FMT_*, -1 if none. */
int kvp_fmt_named(const char *name);
/* 1 when s[0..len) is a JSON number (the numbers the CSV writer makes). */
int kvp_fmt_is_number(const char *s, size_t len);

#endif
