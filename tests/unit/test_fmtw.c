/* test_fmtw.c: report formats other than CSV: JSON Lines typed and encoded
 * by jansson, aligned tables and Markdown, from CSV bytes split anywhere. */
#define _POSIX_C_SOURCE 200809L
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
  kvp_csv_scaled(w, (int64_t)3 << 29, 30, 2);
  kvp_csv_endrow(w);
  assert_int_equal(kvp_csv_close(w, err, sizeof err), 0);
  assert_string_equal(slurp(path), "{\"a\":-3,\"b\":1.50}\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(json_lines_are_typed_objects),
    cmocka_unit_test(tables_align_and_right_align_numbers),
    cmocka_unit_test(markdown_escapes_bars),
    cmocka_unit_test(json_numbers_are_recognized_exactly),
    cmocka_unit_test(formats_by_name_and_by_file_name),
    cmocka_unit_test(the_csv_writer_writes_json_through_the_converter),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
