/* test_model.c: model description, layer patterns and validation. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"

static void zero_layers_is_an_error_naming_the_field(void **state) {
  (void)state;
  kvp_model m;
  kvp_diag d = {{0}};
  assert_int_equal(kvp_model_init(&m, 0, 4096, 32, 8, 128, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "field 'layers' must be an integer >= 1, got 0");
  assert_int_equal(kvp_model_init(&m, 32, 4096, -4, 8, 128, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "field 'heads' must be an integer >= 1, got -4");
  assert_int_equal(kvp_model_init(&m, KVP_MAX_LAYERS + 1, 4096, 32, 8, 128, &d), KVP_EINVAL);
}

static void gemma3_pattern_gives_52_local_and_10_global_layers(void **state) {
  (void)state;
  kvp_model m;
  assert_int_equal(kvp_model_init(&m, 62, 5376, 32, 16, 128, NULL), KVP_OK);
  kvp_layer local = m.spec[0], global = m.spec[0];
  local.kind = KVP_SLIDING;
  local.window = 1024;
  kvp_layer runs[2] = {local, global};
  int64_t counts[2] = {5, 1};
  assert_int_equal(kvp_model_set_pattern(&m, runs, counts, 2, NULL), KVP_OK);
  int64_t k[KVP_NKINDS];
  kvp_model_kind_counts(&m, k);
  assert_int_equal(k[KVP_SLIDING], 52);
  assert_int_equal(k[KVP_FULL], 10);
  assert_int_equal(m.nspec, 2);
  assert_int_equal(m.spec[m.layer_spec[5]].kind, KVP_FULL);   /* (5 + 1) % 6 == 0 */
  assert_int_equal(m.spec[m.layer_spec[61]].kind, KVP_SLIDING);
  assert_int_equal(kvp_model_check(&m, NULL), KVP_OK);
}

static void identical_runs_share_one_shape(void **state) {
  (void)state;
  kvp_model m;
  assert_int_equal(kvp_model_init(&m, 10, 1024, 8, 8, 128, NULL), KVP_OK);
  kvp_layer runs[3] = {m.spec[0], m.spec[0], m.spec[0]};
  int64_t counts[3] = {1, 2, 3};
  assert_int_equal(kvp_model_set_pattern(&m, runs, counts, 3, NULL), KVP_OK);
  assert_int_equal(m.nspec, 1);
}

static void bad_layer_shapes_are_rejected_with_their_place(void **state) {
  (void)state;
  kvp_model m;
  kvp_diag d = {{0}};
  assert_int_equal(kvp_model_init(&m, 4, 1024, 8, 8, 128, NULL), KVP_OK);
  kvp_layer l = {0};
  int64_t one = 1, zero = 0;
  l.kind = KVP_MLA; /* no latent */
  assert_int_equal(kvp_model_set_pattern(&m, &l, &one, 1, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "layer_kinds[1]"));
  l.kind = KVP_STATE;
  l.kv_heads = 3;
  l.state_bytes = 1000; /* not divisible over 3 heads */
  assert_int_equal(kvp_model_set_pattern(&m, &l, &one, 1, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "1000"));
  l = m.spec[0];
  l.kind = KVP_SLIDING; /* window 0 */
  assert_int_equal(kvp_model_set_pattern(&m, &l, &one, 1, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "field 'layer_kinds[1].window' must be an integer >= 1, got 0");
  l.window = 8;
  assert_int_equal(kvp_model_set_pattern(&m, &l, &zero, 1, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "field 'layer_kinds[1].n' must be an integer >= 1, got 0");
  assert_int_equal(kvp_model_set_pattern(&m, &l, &one, 0, &d), KVP_EINVAL);
}

static void active_beyond_total_params_is_rejected(void **state) {
  (void)state;
  kvp_model m;
  kvp_diag d = {{0}};
  assert_int_equal(kvp_model_init(&m, 4, 1024, 8, 8, 128, NULL), KVP_OK);
  m.params = 10;
  m.active = 11;
  assert_int_equal(kvp_model_check(&m, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "field 'active' (11) exceeds 'params' (10)");
  assert_string_equal(kvp_kind_name(KVP_MLA), "mla");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(zero_layers_is_an_error_naming_the_field),
    cmocka_unit_test(gemma3_pattern_gives_52_local_and_10_global_layers),
    cmocka_unit_test(identical_runs_share_one_shape),
    cmocka_unit_test(bad_layer_shapes_are_rejected_with_their_place),
    cmocka_unit_test(active_beyond_total_params_is_rejected),
  };
  return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
