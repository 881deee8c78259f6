/*
 * csvw.h: the CSV report writer.
 * Output layer: no Lua; writes files, never prints or exits.
 *
 * RFC 4180 quoting through libcsv (only fields holding a comma, a quote or a
 * line break are quoted), LF line ends, integers as integers, doubles either
 * at a fixed precision or in the shortest form that reads back exactly.
 * A file goes through the atomic writer (afile.h): a temporary beside it,
 * renamed into place on kvp_csv_close(): readers never see a half-written
 * report, and a failed write is an error, never a short file.
 */
#ifndef KVP_CSVW_H
#define KVP_CSVW_H

#include <stddef.h>
#include <stdint.h>

typedef struct kvp_csv kvp_csv;

/* path NULL or "-" is standard output. NULL on failure, reason in err.
 * The format (fmtw.h: KVP_FMT_*) is CSV unless kvp_csv_open_as asks for
 * another, or kvp_csv_default_format set one; with KVP_FMT_AUTO a file
 * named *.json or *.jsonl is JSON Lines, *.md Markdown, *.txt a table,
 * *.html or *.htm an HTML page, and standard output a table when it is a
 * terminal. */
kvp_csv *kvp_csv_open(const char *path, char *err, size_t errlen);
kvp_csv *kvp_csv_open_as(const char *path, int fmt, char *err, size_t errlen);
/* The format writers opened with KVP_FMT_AUTO use (process-wide). */
void kvp_csv_default_format(int fmt);
/* on != 0: CSV writers opened from now on write a text field that begins
 * with '=', '+', '-', '@', a tab or a carriage return behind a single quote
 * (OWASP "CSV Injection"), so a spreadsheet shows it as text and does not
 * run it as a formula; numbers ("-5", "+1.5e3") are never touched, nor
 * other formats (process-wide; kvplan --escape-formulas). */
void kvp_csv_escape_formulas(int on);
/* An HTML report's page, to describe before the first flush (fmtw.h); NULL
 * for another format. */
typedef struct kvp_html kvp_html;
kvp_html *kvp_csv_html(kvp_csv *w);
/* The format a writer of path asked for fmt gets. */
int kvp_csv_resolve_format(const char *path, int fmt);
/* Each field call appends one field to the current row; 0 on success,
 * -1 on failure (reason kept for kvp_csv_close). */
int kvp_csv_str(kvp_csv *w, const char *s, size_t len);
/* A field known to need no quotes (kvp_csv_needs_quotes returned 0). */
int kvp_csv_raw(kvp_csv *w, const char *s, size_t len);
int kvp_csv_needs_quotes(const char *s, size_t len);
int kvp_csv_int(kvp_csv *w, int64_t v);
int kvp_csv_fixed(kvp_csv *w, double v, int precision);  /* NaN, inf: -1 */
int kvp_csv_double(kvp_csv *w, double v);                /* shortest exact */
int kvp_csv_endrow(kvp_csv *w);
/* A whole row of at most n bytes (n <= 32768) written in place, its fields
 * and commas already CSV text: room for n bytes in the writer's buffer, or
 * NULL after a write error (a row must not be open). kvp_csv_row_end then
 * takes the `used` bytes written there and ends the row. */
char *kvp_csv_row_begin(kvp_csv *w, size_t n);
int kvp_csv_row_end(kvp_csv *w, size_t used);
/* Flush, sync and rename into place; frees w. 0 or -1 with err. */
int kvp_csv_close(kvp_csv *w, char *err, size_t errlen);
/* Drop the report: remove the temporary file; frees w. */
void kvp_csv_discard(kvp_csv *w);
/* Formatting into a buffer of at least 32 bytes; returns the length. */
size_t kvp_fmt_int(char *buf, int64_t v);
size_t kvp_fmt_double(char *buf, double v);
int kvp_fmt_fixed(char *buf, size_t n, double v, int precision);
/* num / 2^shift at `precision` digits, exact and rounded half to even as
 * printf would round the same quotient (GiB columns: shift 30). */
size_t kvp_fmt_scaled(char *buf, int64_t num, int shift, int precision);

#endif
