/* test_diag.c: error names and the count check of the core. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"
#include "diag.h"

static void every_error_has_a_name(void **state) {
  (void)state;
  assert_string_equal(kvp_strerror(KVP_OK), "no error");
  assert_non_null(strstr(kvp_strerror(KVP_EOVERFLOW), "overflow"));
  assert_string_equal(kvp_strerror((kvp_err)99), "unknown error");
}

static void a_count_below_its_minimum_names_field_and_value(void **state) {
  (void)state;
  kvp_diag d = {{0}};
  assert_int_equal(kvp_check_count(-1, 1, "tp", &d), KVP_EINVAL);
  assert_string_equal(d.msg, "field 'tp' must be an integer >= 1, got -1");
  assert_int_equal(kvp_check_count(1, 1, "tp", &d), KVP_OK);
  assert_int_equal(kvp_check_count(0, 1, "tp", NULL), KVP_EINVAL); /* NULL diag is fine */
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(every_error_has_a_name),
    cmocka_unit_test(a_count_below_its_minimum_names_field_and_value),
  };
  return cmocka_run_group_tests_name("diag", tests, NULL, NULL);
}
