/* test_csvw.c: CSV writer: quoting, number formats, atomic files. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "csvw.h"

static char dir[] = "/tmp/kvplan_test_csvw_XXXXXX";

static int setup(void **state) {
  (void)state;
  return mkdtemp(dir) == NULL ? -1 : 0;
}

static int teardown(void **state) {
  (void)state;
  return rmdir(dir);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  static char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static int entries(void) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static void integers_print_exactly_at_both_ends(void **state) {
  (void)state;
  char b[32];
  assert_int_equal(kvp_fmt_int(b, 0), 1);
  assert_string_equal(b, "0");
  kvp_fmt_int(b, INT64_MIN);
  assert_string_equal(b, "-9223372036854775808");
  kvp_fmt_int(b, 42949672960LL);
  assert_string_equal(b, "42949672960");
}

static void doubles_print_in_the_shortest_form_that_reads_back(void **state) {
  (void)state;
  char b[32];
  kvp_fmt_double(b, 0.1);
  assert_string_equal(b, "0.1");
  kvp_fmt_double(b, 2.5);
  assert_string_equal(b, "2.5");
  kvp_fmt_double(b, 1.0 / 3.0);
  assert_string_equal(b, "0.3333333333333333");
  assert_true(strtod(b, NULL) == 1.0 / 3.0);
}

static void fixed_precision_never_prints_negative_zero_or_nan(void **state) {
  (void)state;
  char b[64];
  assert_int_equal(kvp_fmt_fixed(b, sizeof b, -0.0001, 2), 4);
  assert_string_equal(b, "0.00");
  kvp_fmt_fixed(b, sizeof b, 79.1875, 2);
  assert_string_equal(b, "79.19");
  assert_int_equal(kvp_fmt_fixed(b, sizeof b, NAN, 2), -1);
  assert_int_equal(kvp_fmt_fixed(b, sizeof b, INFINITY, 2), -1);
}

static void report_appears_only_when_closed(void **state) {
  (void)state;
  char path[256], err[256];
  snprintf(path, sizeof path, "%s/r.csv", dir);
  kvp_csv *w = kvp_csv_open(path, err, sizeof err);
  assert_non_null(w);
  kvp_csv_str(w, "model", 5);
  kvp_csv_str(w, "note", 4);
  kvp_csv_endrow(w);
  kvp_csv_str(w, "a,b", 3);
  kvp_csv_str(w, "say \"hi\"", 8);
  kvp_csv_endrow(w);
  kvp_csv_int(w, -3);
  kvp_csv_fixed(w, 2.5, 3);
  kvp_csv_endrow(w);
  assert_null(slurp(path)); /* not there yet: only the temporary */
  assert_int_equal(kvp_csv_close(w, err, sizeof err), 0);
  assert_string_equal(slurp(path), "model,note\n\"a,b\",\"say \"\"hi\"\"\"\n-3,2.500\n");
  assert_int_equal(entries(), 1); /* no temporary left */
  unlink(path);
}

/* A row written in place: the writer's buffer, then the row's end; never
 * while a row is open, and across many buffers' worth of rows. */
static void rows_written_in_place(void **state) {
  (void)state;
  char path[256], err[256];
  snprintf(path, sizeof path, "%s/p.csv", dir);
  kvp_csv *w = kvp_csv_open(path, err, sizeof err);
  assert_non_null(w);
  kvp_csv_str(w, "a", 1);
  assert_null(kvp_csv_row_begin(w, 16)); /* a row is open */
  kvp_csv_endrow(w);
  for (int i = 0; i < 20000; i++) {
    char *p = kvp_csv_row_begin(w, 64);
    assert_non_null(p);
    memcpy(p, "x,12", 4);
    kvp_csv_row_end(w, 4);
  }
  kvp_csv_int(w, 7);
  kvp_csv_endrow(w);
  assert_int_equal(kvp_csv_close(w, err, sizeof err), 0);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static char t[2 + 20000 * 5 + 2 + 1];
  size_t n = fread(t, 1, sizeof t, f);
  fclose(f);
  assert_int_equal(n, sizeof t - 1); /* every row, nothing more */
  assert_memory_equal(t, "a\nx,12\nx,12\n", 12);
  assert_memory_equal(t + n - 7, "x,12\n7\n", 7);
  unlink(path);
}

static void discarded_report_leaves_no_file(void **state) {
  (void)state;
  char path[256], err[256];
  snprintf(path, sizeof path, "%s/gone.csv", dir);
  kvp_csv *w = kvp_csv_open(path, err, sizeof err);
  assert_non_null(w);
  kvp_csv_int(w, 1);
  kvp_csv_endrow(w);
  kvp_csv_discard(w);
  assert_int_equal(entries(), 0);
}

static void unwritable_directory_is_a_clear_error(void **state) {
  (void)state;
  char err[256];
  assert_null(kvp_csv_open("/nonexistent-dir/x.csv", err, sizeof err));
  assert_string_equal(err, "cannot write '/nonexistent-dir/x.csv': No such file or directory "
                      "(creating a file in '/nonexistent-dir')");
  assert_null(kvp_csv_open("", err, sizeof err));
  assert_string_equal(err, "cannot write '': the file name is empty");
  assert_null(kvp_csv_open("nonexistent-dir/", err, sizeof err));
  assert_string_equal(err, "cannot write 'nonexistent-dir/': the name ends in '/' (expected a file name)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(integers_print_exactly_at_both_ends),
    cmocka_unit_test(rows_written_in_place),
    cmocka_unit_test(doubles_print_in_the_shortest_form_that_reads_back),
    cmocka_unit_test(fixed_precision_never_prints_negative_zero_or_nan),
    cmocka_unit_test(report_appears_only_when_closed),
    cmocka_unit_test(discarded_report_leaves_no_file),
    cmocka_unit_test(unwritable_directory_is_a_clear_error),
  };
  return cmocka_run_group_tests_name("csvw", tests, setup, teardown);
}
