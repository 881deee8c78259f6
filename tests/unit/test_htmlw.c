/* test_htmlw.c: HTML pages: every string escaped, units in the headers,
 * numbers marked, charts embedded from their <svg> tag or refused, the same
 * bytes however the CSV is split, a failed write reported; the batch index
 * with percent-encoded links. */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "afile.h"
#include "csvw.h"
#include "fmtw.h"
#include "htmlw.h"

static char dir[] = "/tmp/kvplan_test_htmlw_XXXXXX";
static char path[512];

static int setup(void **state) {
  (void)state;
  if (mkdtemp(dir) == NULL) return -1;
  snprintf(path, sizeof path, "%s/r.html", dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  unlink(path);
  return rmdir(dir);
}

static char *slurp(const char *p) {
  FILE *f = fopen(p, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  size_t got = fread(buf, 1, (size_t)n, f);
  buf[got] = '\0';
  fclose(f);
  return buf;
}

static const char csv[] =
  "model,gib,why\n"
  "\"<script>alert(1)</script>\",16.43,\"a & b \"\"c\"\" 'd'\"\n"
  "x\x1b[31my,1e+20,\n"
  "short,-2,\n";

static const char svg[] =
  "<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n<svg width=\"10\" height=\"10\"><text>&lt;b></text></svg>\n";

/* csv converted to a page, fed in pieces of `step` bytes; a malloc'd copy. */
static char *page(size_t step, const char *chart_svg) {
  char err[256];
  kvp_afile *f = kvp_afile_open(path, err, sizeof err);
  assert_non_null(f);
  kvp_fmtw *c = kvp_fmtw_new(KVP_FMT_HTML, f);
  assert_non_null(c);
  kvp_html *h = kvp_fmtw_html(c);
  assert_non_null(h);
  assert_int_equal(kvp_html_title(h, "kvplan <fit>"), 0);
  assert_int_equal(kvp_html_version(h, "0.1.0"), 0);
  assert_int_equal(kvp_html_input(h, "command", "kvplan fit model=\"x\""), 0);
  assert_int_equal(kvp_html_unit(h, 1, "GiB"), 0);
  assert_int_equal(kvp_html_chart(h, "bars", chart_svg, chart_svg ? strlen(chart_svg) : 0,
                                  "gnuplot is not installed"), 0);
  for (size_t i = 0; i < sizeof csv - 1; i += step) {
    size_t n = sizeof csv - 1 - i < step ? sizeof csv - 1 - i : step;
    assert_int_equal(kvp_fmtw_feed(c, csv + i, n), 0);
  }
  assert_int_equal(kvp_fmtw_finish(c), 0);
  kvp_fmtw_free(c);
  assert_int_equal(kvp_afile_commit(f, err, sizeof err), 0);
  return slurp(path);
}

static void every_string_is_escaped(void **state) {
  (void)state;
  char *p = page(4096, svg);
  assert_non_null(strstr(p, "<title>kvplan &lt;fit&gt;</title>"));
  assert_non_null(strstr(p, "<td>kvplan fit model=&quot;x&quot;</td>"));
  assert_non_null(strstr(p, "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>"));
  assert_non_null(strstr(p, "<td class=\"n\">16.43</td><td>a &amp; b &quot;c&quot; &#39;d&#39;</td>"));
  assert_non_null(strstr(p, "<td>x\\x1b[31my</td>")); /* no escape byte reaches the page */
  assert_null(strchr(p, '\x1b'));
  /* the one script of the page is its own, at its end */
  char *s = strstr(p, "<script>");
  assert_non_null(s);
  assert_null(strstr(s + 1, "<script>"));
  assert_non_null(strstr(s, "</script>\n</body>\n</html>\n"));
  free(p);
}

static void headers_units_rows_and_numbers(void **state) {
  (void)state;
  char *p = page(4096, svg);
  assert_non_null(strstr(p, ">model</th>"));
  assert_non_null(strstr(p, ">gib <span class=\"unit\">(GiB)</span></th>"));
  assert_non_null(strstr(p, "<td class=\"n\">1e+20</td><td></td></tr>"));
  assert_non_null(strstr(p, "<td class=\"n\">-2</td>"));
  assert_non_null(strstr(p, "<p id=\"rows\">3 rows</p>"));
  assert_non_null(strstr(p, "Written by kvplan 0.1.0."));
  assert_non_null(strstr(p, "default-src 'none'")); /* nothing fetched */
  free(p);
}

static void the_same_bytes_however_split(void **state) {
  (void)state;
  char *whole = page(4096, svg);
  for (size_t step = 1; step < sizeof csv; step += 3) {
    char *p = page(step, svg);
    assert_string_equal(p, whole);
    free(p);
  }
  free(whole);
}

static void charts_embedded_refused_or_said_missing(void **state) {
  (void)state;
  char *p = page(4096, svg);
  assert_non_null(strstr(p, "<figcaption>bars</figcaption>\n<svg width=\"10\" height=\"10\"><text>&lt;b></text></svg>"));
  assert_null(strstr(p, "<?xml"));
  free(p);
  p = page(4096, NULL);
  assert_non_null(strstr(p, "<p class=\"note\">No chart: gnuplot is not installed</p>"));
  assert_null(strstr(p, "<svg"));
  free(p);
  static const char *const bad[] = {
    "<svg><script>alert(1)</script></svg>", "<svg><SCRIPT>x</SCRIPT></svg>",
    "<svg onload=\"alert(1)\"></svg>", "<svg><foreignObject><p>x</p></foreignObject></svg>",
    "no svg at all",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    p = page(4096, bad[i]);
    assert_null(strstr(p, "alert(1)</script>"));
    assert_null(strstr(p, "onload"));
    assert_non_null(strstr(p, "<p class=\"note\">No chart: "));
    free(p);
  }
}

static void a_failed_write_is_an_error(void **state) {
  (void)state;
  char err[256];
  kvp_afile *f = kvp_afile_open("/dev/full", err, sizeof err);
  if (f == NULL) skip();
  kvp_fmtw *c = kvp_fmtw_new(KVP_FMT_HTML, f);
  assert_int_equal(kvp_fmtw_feed(c, csv, sizeof csv - 1), 0);
  assert_int_equal(kvp_fmtw_finish(c), -1); /* the page is written whole at the end (32 KiB buffer) */
  assert_int_not_equal(kvp_fmtw_error(c), 0);
  kvp_fmtw_free(c);
  assert_int_equal(kvp_afile_commit(f, err, sizeof err), -1);
}

static void the_csv_writer_picks_html_by_name(void **state) {
  (void)state;
  assert_int_equal(kvp_fmt_named("html"), KVP_FMT_HTML);
  assert_int_equal(kvp_csv_resolve_format("r.html", KVP_FMT_AUTO), KVP_FMT_HTML);
  assert_int_equal(kvp_csv_resolve_format("r.htm", KVP_FMT_AUTO), KVP_FMT_HTML);
  assert_int_equal(kvp_csv_resolve_format("r.html", KVP_FMT_CSV), KVP_FMT_CSV);
  char err[256];
  kvp_csv *w = kvp_csv_open(path, err, sizeof err);
  assert_non_null(w);
  assert_non_null(kvp_csv_html(w));
  kvp_csv_str(w, "a", 1);
  kvp_csv_endrow(w);
  kvp_csv_int(w, 7);
  kvp_csv_endrow(w);
  assert_int_equal(kvp_csv_close(w, err, sizeof err), 0);
  char *p = slurp(path);
  assert_non_null(strstr(p, "<td class=\"n\">7</td>"));
  assert_non_null(strstr(p, "<title>kvplan report</title>"));
  free(p);
  snprintf(err, sizeof err, "%s/r.csv", dir);
  w = kvp_csv_open(err, err, sizeof err);
  assert_null(kvp_csv_html(w));
  kvp_csv_discard(w);
}

static void the_index_links_each_report(void **state) {
  (void)state;
  char err[256];
  static const char *const fa[] = {"fit.html", "fit-a b#1.html"};
  kvp_html_job jobs[] = {
    {"fit", "scripts/fit.lua", "model=<m>", 1, 2, fa},
    {"bad", "bad.lua", "", 0, 0, NULL},
  };
  kvp_afile *f = kvp_afile_open(path, err, sizeof err);
  assert_int_equal(kvp_html_index(f, "kvplan batch", "0.1.0", jobs, 2), 0);
  assert_int_equal(kvp_afile_commit(f, err, sizeof err), 0);
  char *p = slurp(path);
  assert_non_null(strstr(p, "2 scripts, 1 ok, 1 failed."));
  assert_non_null(strstr(p, "<a href=\"fit.html\">fit.html</a><br><a href=\"fit-a%20b%231.html\">fit-a b#1.html</a>"));
  assert_non_null(strstr(p, "<td>model=&lt;m&gt;</td>"));
  assert_non_null(strstr(p, "<td class=\"note\">FAILED</td>"));
  free(p);
}

static void a_text_page_is_escaped_preformatted_text(void **state) {
  (void)state;
  char err[256];
  kvp_html *h = kvp_html_new();
  assert_int_equal(kvp_html_title(h, "kvplan startup"), 0);
  assert_int_equal(kvp_html_input(h, "command", "kvplan startup model=m"), 0);
  kvp_afile *f = kvp_afile_open(path, err, sizeof err);
  assert_int_equal(kvp_html_text(h, f, "GPU KV cache size: 1 tokens\n<b>&\x1b\n"), 0);
  kvp_html_free(h);
  assert_int_equal(kvp_afile_commit(f, err, sizeof err), 0);
  char *p = slurp(path);
  assert_non_null(strstr(p, "<pre id=\"text\">GPU KV cache size: 1 tokens\n&lt;b&gt;&amp;\\x1b\n</pre>"));
  assert_non_null(strstr(p, "<td>kvplan startup model=m</td>"));
  assert_null(strstr(p, "<script"));
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(every_string_is_escaped),
    cmocka_unit_test(headers_units_rows_and_numbers),
    cmocka_unit_test(the_same_bytes_however_split),
    cmocka_unit_test(charts_embedded_refused_or_said_missing),
    cmocka_unit_test(a_failed_write_is_an_error),
    cmocka_unit_test(the_csv_writer_picks_html_by_name),
    cmocka_unit_test(the_index_links_each_report),
    cmocka_unit_test(a_text_page_is_escaped_preformatted_text),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
