/* test_deploy.c: a deployment's defaults, names and checks (deploy.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"
#include "core.h"

#define GiB 1073741824LL

/* a 70B-class model (80 layers, 64 heads, 8 KV heads) on one 80 GiB card */
static void seventy_b(kvp_deploy *d) {
  kvp_deploy_defaults(d);
  assert_int_equal(kvp_model_init(&d->model, 80, 8192, 64, 8, 128, NULL), KVP_OK);
  d->model.params = d->model.active = 70000000000LL;
  d->gpu_bytes = 80 * GiB;
}

static void defaults_are_vllms_and_check_clean(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_diag diag = {{0}};
  seventy_b(&d);
  assert_int_equal(d.tp, 1);
  assert_int_equal(d.pp, 1);
  assert_int_equal(d.kv.bits, 16);
  assert_int_equal(d.weights.bits, 16);
  assert_true(d.utilization == 0.9);
  assert_int_equal(d.block, KVP_DEFAULT_BLOCK);
  assert_int_equal(d.budget, KVP_BUDGET_VLLM);
  assert_int_equal(d.alloc, KVP_ALLOC_PAGED);
  assert_int_equal(kvp_deploy_check(&d, &diag), KVP_OK);
  assert_true(kvp_optim_plain(&d));
}

static void names_of_budget_rules_and_allocations(void **state) {
  (void)state;
  assert_string_equal(kvp_budget_name(KVP_BUDGET_VLLM), "vllm");
  assert_string_equal(kvp_budget_name(KVP_BUDGET_SGLANG), "sglang");
  assert_string_equal(kvp_budget_name(KVP_BUDGET_TRTLLM), "trtllm");
  assert_string_equal(kvp_budget_name((kvp_budget)KVP_NBUDGETS), "unknown");
  assert_string_equal(kvp_alloc_name(KVP_ALLOC_PAGED), "paged");
  assert_string_equal(kvp_alloc_name(KVP_ALLOC_CONTIGUOUS), "contiguous");
  assert_string_equal(kvp_alloc_name((kvp_alloc)-1), "unknown");
}

static void weight_bytes_are_given_or_params_in_the_format(void **state) {
  (void)state;
  kvp_deploy d;
  int64_t bytes = 0;
  seventy_b(&d);
  assert_int_equal(kvp_deploy_weight_bytes(&d, &bytes), KVP_OK);
  assert_int_equal(bytes, 140000000000LL); /* 70e9 x 2 bytes */
  d.weights = (kvp_format){4, 128, 16, 4, 0, 0, 0, 0, 0, 0, 0};  /* int4-g128: a 16-bit scale, 4-bit zero */
  assert_int_equal(kvp_deploy_weight_bytes(&d, &bytes), KVP_OK);
  assert_int_equal(bytes, 36367187500LL);   /* 70e9 x (4 + 20/128) / 8 */
  d.weight_bytes = 12345;
  assert_int_equal(kvp_deploy_weight_bytes(&d, &bytes), KVP_OK);
  assert_int_equal(bytes, 12345);
}

/* A format's bits a matrix and an input column count over the model's
 * linear layers: NVFP4 (4 bits, an fp8 scale per 16, 64 bits a matrix) on
 * 1000 params in 3 matrices: 1000 x 4.5 / 8 = 562.5 -> 563, plus 3 x 64 / 8
 * = 24; act order's 64 bits a column on 10 columns beside it: (192 + 640) / 8
 * = 104, rounded once; no linear layers given: the elements alone */
static void tensor_and_col_bits_count_over_the_linear_layers(void **state) {
  (void)state;
  kvp_deploy d;
  int64_t bytes = 0;
  seventy_b(&d);
  d.model.params = 1000;
  d.weights = (kvp_format){4, 16, 8, 0, 0, 0, 0, 0, 0, 64, 0};
  assert_int_equal(kvp_deploy_weight_bytes(&d, &bytes), KVP_OK);
  assert_int_equal(bytes, 563); /* no shards: as before */
  d.model.linear_shards = 3;
  d.model.linear_cols = 10;
  assert_int_equal(kvp_deploy_weight_bytes(&d, &bytes), KVP_OK);
  assert_int_equal(bytes, 563 + 24);
  d.weights.col_bits = 64;
  assert_int_equal(kvp_deploy_weight_bytes(&d, &bytes), KVP_OK);
  assert_int_equal(bytes, 563 + (3 * 64 + 10 * 64 + 7) / 8);
  d.weights.tensor_bits = 1;
  d.weights.col_bits = 0;
  assert_int_equal(kvp_deploy_weight_bytes(&d, &bytes), KVP_OK);
  assert_int_equal(bytes, 563 + 1); /* 3 bits round up to a byte */
  d.model.linear_shards = INT64_MAX / 2;
  d.weights.tensor_bits = 64;
  assert_int_equal(kvp_deploy_weight_bytes(&d, &bytes), KVP_EOVERFLOW);
  kvp_diag diag = {{0}};
  kvp_format bad = {4, 16, 8, 0, 0, 0, 0, 0, 0, -1, 0};
  assert_int_equal(kvp_format_check(&bad, "weights", &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'weights': tensor and col bits must be >= 0, got -1 and 0");
}

static void deployment_fields_are_checked_naming_the_field(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_diag diag = {{0}};
  seventy_b(&d);
  d.gpu_bytes = 0;
  assert_int_equal(kvp_deploy_check(&d, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'gpu memory' must be an integer >= 1, got 0");
  seventy_b(&d);
  d.pp = KVP_MAX_PP + 1;
  assert_int_equal(kvp_deploy_check(&d, &diag), KVP_EINVAL);
  assert_non_null(strstr(diag.msg, "field 'pp' must be at most"));
  seventy_b(&d);
  d.utilization = 0.0;
  assert_int_equal(kvp_deploy_check(&d, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'utilization' must be in (0, 1], got 0");
  seventy_b(&d);
  d.block = 0;
  assert_int_equal(kvp_deploy_check(&d, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'block' must be an integer >= 1, got 0");
  seventy_b(&d);
  d.kv.bits = 0;
  assert_int_equal(kvp_deploy_check(&d, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'kv': bits must be 1..64, got 0");
}

static void optimization_fields_are_checked_against_the_context(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_diag diag = {{0}};
  kvp_deploy_defaults(&d);
  assert_int_equal(kvp_model_init(&d.model, 80, 8192, 64, 8, 128, NULL), KVP_OK);
  d.gpu_bytes = 85899345920LL;
  assert_true(kvp_optim_plain(&d));
  d.evict.sinks = 4;
  d.evict.recent = 8192;
  assert_int_equal(kvp_optim_check(&d, 8192, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "eviction window sinks + recent = 8196 tokens exceeds "
                                "max_model_len 8192: it would evict nothing");
  assert_int_equal(kvp_optim_check(&d, 0, &diag), KVP_OK); /* context unknown */
  d.evict.recent = 0;
  assert_int_equal(kvp_optim_check(&d, 8192, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'sinks' (4) needs a recent window or a keep ratio beside it");
  memset(&d.evict, 0, sizeof d.evict);
  d.evict.keep_ppm = 1500000;
  assert_int_equal(kvp_optim_check(&d, 8192, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'keep' must be in (0, 1], got 1.5");
  memset(&d.evict, 0, sizeof d.evict);
  d.prefix = 9000;
  assert_int_equal(kvp_optim_check(&d, 8192, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'prefix' (9000 tokens) exceeds max_model_len 8192: no "
                                "request holds the whole prefix");
  d.prefix = 0;
  d.kv_recent = 128; /* KIVI without a full-precision format */
  assert_int_equal(kvp_optim_check(&d, 8192, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'kv_full': bits must be 1..64, got 0");
  d.kv_recent = 0;
  d.alloc = KVP_ALLOC_CONTIGUOUS;
  assert_int_equal(kvp_optim_check(&d, 0, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "contiguous allocation reserves max_model_len per request: set "
                                "max_model_len (the model gives no max context)");
  d.alloc = KVP_ALLOC_PAGED;
  d.max_kv_tokens = 1000;
  assert_int_equal(kvp_optim_check(&d, 0, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'max_kv_tokens' is TensorRT-LLM's max_tokens and needs "
                                "budget 'trtllm', got budget 'vllm'");
  d.max_kv_tokens = 0;
  d.spec.draft_layers = 1;
  d.spec.draft = d.model.spec[0];
  assert_int_equal(kvp_optim_check(&d, 0, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'speculative.tokens' must be >= 1 with a draft, got 0");
  d.spec.tokens = 4;
  assert_int_equal(kvp_optim_check(&d, 0, &diag), KVP_OK);
  assert_false(kvp_optim_plain(&d));
  d.nlen = 2;
  d.len[0] = 300;
  d.len[1] = 200;
  assert_int_equal(kvp_optim_check(&d, 0, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'lengths' must be sorted ascending (point 2)");
}

/* kvp_deploy_check_numbers checks every field but the model's (a sweep's
 * change of numbers): a bad number is caught, a bad model is not its job. */
static void numbers_are_checked_without_the_model(void **state) {
  (void)state;
  kvp_deploy d;
  kvp_diag diag = {{0}};
  seventy_b(&d);
  assert_int_equal(kvp_deploy_check_numbers(&d, &diag), KVP_OK);
  d.utilization = 1.5;
  assert_int_equal(kvp_deploy_check_numbers(&d, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'utilization' must be in (0, 1], got 1.5");
  d.utilization = 0.9;
  d.block = 0;
  assert_int_equal(kvp_deploy_check_numbers(&d, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'block' must be an integer >= 1, got 0");
  d.block = 16;
  d.model.hidden = 0; /* the model's own checks are kvp_deploy_check's */
  assert_int_equal(kvp_deploy_check_numbers(&d, &diag), KVP_OK);
  assert_int_equal(kvp_deploy_check(&d, &diag), KVP_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(numbers_are_checked_without_the_model),
    cmocka_unit_test(defaults_are_vllms_and_check_clean),
    cmocka_unit_test(names_of_budget_rules_and_allocations),
    cmocka_unit_test(weight_bytes_are_given_or_params_in_the_format),
    cmocka_unit_test(tensor_and_col_bits_count_over_the_linear_layers),
    cmocka_unit_test(deployment_fields_are_checked_naming_the_field),
    cmocka_unit_test(optimization_fields_are_checked_against_the_context),
  };
  return cmocka_run_group_tests_name("deploy", tests, NULL, NULL);
}
