/* test_fmtw.c: report formats other than CSV: JSON Lines typed and encoded
 * by jansson, aligned tables and Markdown, from CSV bytes split anywhere;
 * tables on a terminal (a pseudo-terminal here) fitted to its width. */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include "afile.h"
#include "csvw.h"
#include "fmtw.h"

static char dir[] = "/tmp/kvplan_test_fmtw_XXXXXX";
static char path[512];

static int setup(void **state) {
  (void)state;
  if (mkdtemp(dir) == NULL) return -1;
  snprintf(path, sizeof path, "%s/r.out", dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  unlink(path);
  return rmdir(dir);
}

static const char *slurp(const char *p) {
  static char buf[8192];
  FILE *f = fopen(p, "rb");
  if (f == NULL) return NULL;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static const char csv[] =
  "model,tp,gib,fits,why\n"
  "llama-3.1-70b,8,16.43,true,\n"
  "\"a,b\",16,0.50,false,\"needs \"\"more\"\" | room\nnow\"\n"
  "été,1,1e+20,false,x\n";

/* Convert csv to fmt, fed in pieces of `step` bytes. */
static const char *convert(int fmt, size_t step) {
  char err[256];
  kvp_afile *f = kvp_afile_open(path, err, sizeof err);
  assert_non_null(f);
  kvp_fmtw *c = kvp_fmtw_new(fmt, f);
  assert_non_null(c);
  for (size_t i = 0; i < sizeof csv - 1; i += step) {
    size_t n = sizeof csv - 1 - i < step ? sizeof csv - 1 - i : step;
    assert_int_equal(kvp_fmtw_feed(c, csv + i, n), 0);
  }
  assert_int_equal(kvp_fmtw_finish(c), 0);
  kvp_fmtw_free(c);
  assert_int_equal(kvp_afile_commit(f, err, sizeof err), 0);
  return slurp(path);
}

/* Convert the n bytes of text to fmt in one piece. */
static const char *convert_text(int fmt, const char *text, size_t n) {
  char err[256];
  kvp_afile *f = kvp_afile_open(path, err, sizeof err);
  assert_non_null(f);
  kvp_fmtw *c = kvp_fmtw_new(fmt, f);
  assert_non_null(c);
  assert_int_equal(kvp_fmtw_feed(c, text, n), 0);
  assert_int_equal(kvp_fmtw_finish(c), 0);
  kvp_fmtw_free(c);
  assert_int_equal(kvp_afile_commit(f, err, sizeof err), 0);
  return slurp(path);
}

/* A NUL inside a quoted cell ended it for every reader of the fields (each
 * NUL-ended): the rest went to the next column ({"model":"ab","n":"cd","z":1},
 * 'q' lost). JSON says \u0000; the other formats the escape of every other
 * control character. */
static void a_nul_in_a_cell_stays_in_its_column(void **state) {
  (void)state;
  static const char text[] = "model,n,z\n\"ab\0cd\",1,q\n";
  assert_string_equal(convert_text(KVP_FMT_JSON, text, sizeof text - 1),
                      "{\"model\":\"ab\\u0000cd\",\"n\":1,\"z\":\"q\"}\n");
  assert_string_equal(convert_text(KVP_FMT_VERTICAL, text, sizeof text - 1),
                      "model: ab\\x00cd\nn:     1\nz:     q\n");
  const char *md = convert_text(KVP_FMT_MARKDOWN, text, sizeof text - 1);
  assert_non_null(strstr(md, "| ab\\x00cd |"));
  assert_non_null(strstr(md, "|   1 | q   |"));
}

static void json_lines_are_typed_objects(void **state) {
  (void)state;
  static const char want[] =
    "{\"model\":\"llama-3.1-70b\",\"tp\":8,\"gib\":16.43,\"fits\":true,\"why\":null}\n"
    "{\"model\":\"a,b\",\"tp\":16,\"gib\":0.50,\"fits\":false,\"why\":\"needs \\\"more\\\" | room\\nnow\"}\n"
    "{\"model\":\"été\",\"tp\":1,\"gib\":1e+20,\"fits\":false,\"why\":\"x\"}\n";
  for (size_t step = 1; step <= sizeof csv; step += 7) assert_string_equal(convert(KVP_FMT_JSON, step), want);
}

static void tables_align_and_right_align_numbers(void **state) {
  (void)state;
  static const char want[] =
    "model          tp    gib  fits   why\n"
    "-------------  --  -----  -----  -----------------------\n"
    "llama-3.1-70b   8  16.43  true\n"
    "a,b            16   0.50  false  needs \"more\" | room now\n"
    "été             1  1e+20  false  x\n";
  for (size_t step = 1; step <= sizeof csv; step += 5) assert_string_equal(convert(KVP_FMT_TABLE, step), want);
}

static void markdown_escapes_bars(void **state) {
  (void)state;
  static const char want[] =
    "| model         |  tp |   gib | fits  | why                      |\n"
    "|---------------|----:|------:|-------|--------------------------|\n"
    "| llama-3.1-70b |   8 | 16.43 | true  |                          |\n"
    "| a,b           |  16 |  0.50 | false | needs \"more\" \\| room now |\n"
    "| été           |   1 | 1e+20 | false | x                        |\n";
  assert_string_equal(convert(KVP_FMT_MARKDOWN, 4096), want);
}

/* -f vertical: a record a row, "name:" padded to the widest name (model, 5)
 * plus the colon and a space, so every value starts at column 7; a blank
 * line between records; an empty cell leaves "why:" alone; cells escaped as
 * in tables. */
static void vertical_is_a_record_a_row(void **state) {
  (void)state;
  static const char want[] =
    "model: llama-3.1-70b\n"
    "tp:    8\n"
    "gib:   16.43\n"
    "fits:  true\n"
    "why:\n"
    "\n"
    "model: a,b\n"
    "tp:    16\n"
    "gib:   0.50\n"
    "fits:  false\n"
    "why:   needs \"more\" | room now\n"
    "\n"
    "model: été\n"
    "tp:    1\n"
    "gib:   1e+20\n"
    "fits:  false\n"
    "why:   x\n";
  for (size_t step = 1; step <= sizeof csv; step += 5) assert_string_equal(convert(KVP_FMT_VERTICAL, step), want);
  assert_int_equal(kvp_fmt_named("vertical"), KVP_FMT_VERTICAL);
}

static void json_numbers_are_recognized_exactly(void **state) {
  (void)state;
  static const char *const yes[] = {"0", "-1", "16.43", "1e+20", "2.5E-3", "-0.00"};
  static const char *const no[] = {"", "01", "1.", ".5", "+1", "1e", "nan", "inf", "0x10", "1 "};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) assert_true(kvp_fmt_is_number(yes[i], strlen(yes[i])));
  for (size_t i = 0; i < sizeof no / sizeof *no; i++) assert_false(kvp_fmt_is_number(no[i], strlen(no[i])));
}

static void formats_by_name_and_by_file_name(void **state) {
  (void)state;
  assert_int_equal(kvp_fmt_named("json"), KVP_FMT_JSON);
  assert_int_equal(kvp_fmt_named("markdown"), KVP_FMT_MARKDOWN);
  assert_int_equal(kvp_fmt_named("xml"), -1);
  assert_int_equal(kvp_csv_resolve_format("a/r.jsonl", KVP_FMT_AUTO), KVP_FMT_JSON);
  assert_int_equal(kvp_csv_resolve_format("r.md", KVP_FMT_AUTO), KVP_FMT_MARKDOWN);
  assert_int_equal(kvp_csv_resolve_format("r.txt", KVP_FMT_AUTO), KVP_FMT_TABLE);
  assert_int_equal(kvp_csv_resolve_format("r.csv", KVP_FMT_AUTO), KVP_FMT_CSV);
  assert_int_equal(kvp_csv_resolve_format("d.json/r", KVP_FMT_AUTO), KVP_FMT_CSV);
  assert_int_equal(kvp_csv_resolve_format("r.md", KVP_FMT_CSV), KVP_FMT_CSV);
  kvp_csv_default_format(KVP_FMT_JSON);
  assert_int_equal(kvp_csv_resolve_format("r.csv", KVP_FMT_AUTO), KVP_FMT_JSON);
  assert_int_equal(kvp_csv_resolve_format("r.csv", KVP_FMT_TABLE), KVP_FMT_TABLE);
  kvp_csv_default_format(KVP_FMT_AUTO);
}

static void the_csv_writer_writes_json_through_the_converter(void **state) {
  (void)state;
  char err[256];
  kvp_csv *w = kvp_csv_open_as(path, KVP_FMT_JSON, err, sizeof err);
  assert_non_null(w);
  kvp_csv_str(w, "a", 1);
  kvp_csv_str(w, "b", 1);
  kvp_csv_endrow(w);
  kvp_csv_int(w, -3);
  char num[48]; /* a GiB column as a sweep writes it: kvp_fmt_scaled, then raw */
  kvp_csv_raw(w, num, kvp_fmt_scaled(num, (int64_t)3 << 29, 30, 2));
  kvp_csv_endrow(w);
  assert_int_equal(kvp_csv_close(w, err, sizeof err), 0);
  assert_string_equal(slurp(path), "{\"a\":-3,\"b\":1.50}\n");
}

/* Table text written to standard output as a terminal of `columns`
 * columns (a pseudo-terminal on fd 1), read back without its CR bytes. */
static const char *on_terminal_as(const char *text, size_t columns, int fmt) {
  static char got[8192];
  int m = posix_openpt(O_RDWR | O_NOCTTY);
  assert_true(m >= 0);
  assert_int_equal(grantpt(m), 0);
  assert_int_equal(unlockpt(m), 0);
  int s = open(ptsname(m), O_RDWR | O_NOCTTY);
  assert_true(s >= 0);
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  dup2(s, STDOUT_FILENO);
  char err[256];
  kvp_afile *f = kvp_afile_open(NULL, err, sizeof err);
  kvp_fmtw *c = kvp_fmtw_new(fmt, f);
  kvp_fmtw_fit(columns);
  /* what text written beside the table is cut to (kvplan best's lines) */
  assert_int_equal(kvp_fmtw_fit_width(), columns);
  int ok = c != NULL && kvp_fmtw_feed(c, text, strlen(text)) == 0 && kvp_fmtw_finish(c) == 0;
  kvp_fmtw_fit(0);
  assert_int_equal(kvp_fmtw_fit_width(), 0);
  kvp_fmtw_free(c);
  int committed = kvp_afile_commit(f, err, sizeof err);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  close(s);
  assert_true(ok);
  assert_int_equal(committed, 0);
  size_t n = 0;
  ssize_t r;
  fcntl(m, F_SETFL, O_NONBLOCK);
  while (n < sizeof got - 1 && (r = read(m, got + n, sizeof got - 1 - n)) > 0) n += (size_t)r;
  close(m);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (got[i] != '\r') got[k++] = got[i];
  got[k] = '\0';
  return got;
}

static const char *on_terminal(const char *text, size_t columns) { return on_terminal_as(text, columns, KVP_FMT_TABLE); }

static const char wide[] =
  "model,gpu,throughput_tokens_s,requests_s,note\n"
  "llama-3.1-8b,h100-sxm,2730.9,9.391,a note long enough to be cut at the edge of the terminal\n"
  "llama-3.1-8b,l40s,1200.5,4.100,short\n"
  "llama-3.1-8b,l4,300.2,1.000,x\n";

/* At 52 columns: the shared model said above, two names on two lines
 * (broken after an underscore), the note cut with an ellipsis to the 18
 * columns left (52 - 8 - 11 - 9 - 3 x 2); nothing left out. At 200 columns
 * (or off a terminal) the table is as it was. */
static void tables_fit_the_terminal(void **state) {
  (void)state;
  static const char want[] =
    "model: llama-3.1-8b\n"
    "          throughput_  requests_\n"
    "gpu          tokens_s          s  note\n"
    "--------  -----------  ---------  ------------------\n"
    "h100-sxm       2730.9      9.391  a note long enoug\xe2\x80\xa6\n"
    "l40s           1200.5      4.100  short\n"
    "l4              300.2      1.000  x\n";
  const char *got = on_terminal(wide, 52);
  assert_string_equal(got, want);
  assert_string_equal(on_terminal(wide, 200), "model         gpu       throughput_tokens_s  requests_s  note\n"
    "------------  --------  -------------------  ----------  --------------------------------------------------------\n"
    "llama-3.1-8b  h100-sxm               2730.9       9.391  a note long enough to be cut at the edge of the terminal\n"
    "llama-3.1-8b  l40s                   1200.5       4.100  short\n"
    "llama-3.1-8b  l4                      300.2       1.000  x\n");
}

/* One row too wide: a name and its value a line. Too many columns: the
 * ones left out named under the table, every line within the width. */
static void one_row_goes_vertical_and_left_out_columns_are_named(void **state) {
  (void)state;
  assert_string_equal(on_terminal("alpha_beta_gamma,b,c\n1234567890,two,three\n", 20),
                      "alpha_beta_gamma  1…\n"
                      "b                 t…\n"
                      "c                 t…\n");
  const char *got = on_terminal("a,b,c,d,e,f,g,h\n"
                                "aaaaaaaaaa,bbbbbbbbbb,cccccccccc,dddddddddd,e,f,g,h\n"
                                "1,2,3,4,5,6,7,8\n", 30);
  for (const char *l = got; *l;) {
    const char *e = strchr(l, '\n');
    size_t cols = 0;
    for (const char *q = l; q < e; q++) cols += ((unsigned char)*q & 0xC0) != 0x80;
    assert_true(cols <= 30);
    l = e + 1;
  }
  assert_non_null(strstr(got, "(not shown, to fit 30 columns:"));
}

/* -f vertical on a terminal of 24 columns: the values start at column 18
 * (the widest name, 16, a colon and a space) and are cut to the 6 left, an
 * ellipsis their last; a header alone writes nothing. */
static void vertical_on_a_terminal_cuts_values(void **state) {
  (void)state;
  assert_string_equal(on_terminal_as("alpha_beta_gamma,b\n1234567890,two\n3,x\n", 24, KVP_FMT_VERTICAL),
                      "alpha_beta_gamma: 12345\xe2\x80\xa6\n"
                      "b:                two\n"
                      "\n"
                      "alpha_beta_gamma: 3\n"
                      "b:                x\n");
  assert_string_equal(on_terminal_as("a,b\n", 24, KVP_FMT_VERTICAL), "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(json_lines_are_typed_objects),
    cmocka_unit_test(a_nul_in_a_cell_stays_in_its_column),
    cmocka_unit_test(tables_align_and_right_align_numbers),
    cmocka_unit_test(markdown_escapes_bars),
    cmocka_unit_test(tables_fit_the_terminal),
    cmocka_unit_test(one_row_goes_vertical_and_left_out_columns_are_named),
    cmocka_unit_test(vertical_is_a_record_a_row),
    cmocka_unit_test(vertical_on_a_terminal_cuts_values),
    cmocka_unit_test(json_numbers_are_recognized_exactly),
    cmocka_unit_test(formats_by_name_and_by_file_name),
    cmocka_unit_test(the_csv_writer_writes_json_through_the_converter),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
