/* test_format.c: exact bits and bytes of storage formats. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"
#include "core.h"

static const kvp_format bf16 = {16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
static const kvp_format int4 = {4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
static const kvp_format int4_g128 = {4, 128, 16, 4, 0, 0, 0, 0, 0, 0, 0}; /* GPTQ/AWQ asymmetric */

static void bf16_tensor_is_two_bytes_an_element(void **state) {
  (void)state;
  int64_t b;
  assert_int_equal(kvp_format_bytes(&bf16, 1000, 0, &b), KVP_OK);
  assert_int_equal(b, 2000);
}

static void int4_g128_costs_4156_millibits(void **state) {
  (void)state;
  assert_int_equal(kvp_format_millibits(&int4_g128), 4156);
  kvp_format sym = {4, 128, 16, 0, 0, 0, 0, 0, 0, 0, 0};
  assert_int_equal(kvp_format_millibits(&sym), 4125);
}

static void seventy_billion_int4_g128_weights_are_36_4_gb_not_35(void **state) {
  (void)state;
  int64_t b;
  /* 70e9 * 4 bits + 70e9 / 128 groups * 20 bits = 290.9375e9 bits */
  assert_int_equal(kvp_format_bytes(&int4_g128, 70000000000LL, 0, &b), KVP_OK);
  assert_int_equal(b, 36367187500LL);
  assert_int_equal(kvp_format_bytes(&int4, 70000000000LL, 0, &b), KVP_OK);
  assert_int_equal(b, 35000000000LL);
}

static void bytes_round_up_once_per_tensor_not_per_element(void **state) {
  (void)state;
  int64_t b;
  assert_int_equal(kvp_format_bytes(&int4, 3, 0, &b), KVP_OK);
  assert_int_equal(b, 2); /* 12 bits, not 3 bytes */
}

static void groups_never_span_rows(void **state) {
  (void)state;
  int64_t bits;
  /* 4 rows of 100: one group per row, not ceil(400 / 128) = 4 ... also 4 */
  assert_int_equal(kvp_format_bits(&int4_g128, 400, 100, &bits), KVP_OK);
  assert_int_equal(bits, 400 * 4 + 4 * 20);
  /* 2 rows of 192: two groups per row (4), not ceil(384 / 128) = 3 */
  assert_int_equal(kvp_format_bits(&int4_g128, 384, 192, &bits), KVP_OK);
  assert_int_equal(bits, 384 * 4 + 4 * 20);
  assert_int_equal(kvp_format_bits(&int4_g128, 385, 192, &bits), KVP_EINVAL);
}

static void overflow_is_an_error_not_a_wrapped_count(void **state) {
  (void)state;
  int64_t b;
  assert_int_equal(kvp_format_bits(&bf16, INT64_MAX / 8, 0, &b), KVP_EOVERFLOW);
  assert_int_equal(kvp_format_bits(&bf16, -1, 0, &b), KVP_EINVAL);
}

static void check_rejects_impossible_formats(void **state) {
  (void)state;
  kvp_diag d = {{0}};
  kvp_format zero = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, neg = {4, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  kvp_format lone = {4, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0};
  assert_int_equal(kvp_format_check(&zero, "kv", &d), KVP_EINVAL);
  assert_string_equal(d.msg, "field 'kv': bits must be 1..64, got 0");
  assert_int_equal(kvp_format_check(&neg, "kv", &d), KVP_EINVAL);
  assert_int_equal(kvp_format_check(&lone, "weights", &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "need a group size"));
  assert_int_equal(kvp_format_check(&int4_g128, "weights", &d), KVP_OK);
}

/* vLLM TurboQuant turboquant_k3v4_nc (turboquant/config.py at 1471680b2471):
 * head 128: 48 index bytes + a 2-byte norm for K, 64 + 4 for V = 118 bytes a
 * slot, against 512 in bf16 (the 4.34x per layer users measure); 3.5 bits
 * an element for display; no slot for a format that is not TurboQuant. */
static void turboquant_slot_is_key_and_value_packed(void **state) {
  (void)state;
  kvp_format k3v4 = {8, 0, 0, 0, 0, 3, 4, 0, 0, 0, 0};
  assert_int_equal(kvp_format_tq_slot(&k3v4, 128), 118);
  assert_int_equal(kvp_format_millibits(&k3v4), 3500);
  assert_int_equal(kvp_format_tq_slot(&bf16, 128), 0);
  assert_int_equal(kvp_format_tq_slot(&k3v4, 0), 0);
  kvp_diag d = {{0}};
  kvp_format half = {8, 0, 0, 0, 0, 9, 4, 0, 0, 0, 0};
  assert_int_equal(kvp_format_check(&half, "kv", &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "TurboQuant key and value bits must both be 1..8, got 9 and 4"));
}

/* bitsandbytes 4-bit (bitsandbytes/functional.py quantize_4bit, blocksize
 * 64; compress_statistics quantizes the fp32 absmax of each block to 8 bits
 * with an fp32 absmax per 256 of them, quantize_blockwise blocksize 256):
 * a 4096 x 4096 matrix is 8 MiB of values, 1 MiB of fp32 absmax without
 * double quantization, 256 KiB of uint8 absmax and 4 KiB of fp32 second-
 * level absmax with it. */
static void double_quantized_scales_have_their_own_scales(void **state) {
  (void)state;
  kvp_format nf4 = {4, 64, 32, 0, 0, 0, 0, 0, 0, 0, 0};
  kvp_format nf4_dq = {4, 64, 8, 0, 0, 0, 0, 256, 32, 0, 0};
  int64_t b;
  assert_int_equal(kvp_format_bytes(&nf4, 4096LL * 4096, 0, &b), KVP_OK);
  assert_int_equal(b, 8388608 + 1048576);
  assert_int_equal(kvp_format_bytes(&nf4_dq, 4096LL * 4096, 0, &b), KVP_OK);
  assert_int_equal(b, 8388608 + 262144 + 4096);
  /* a partial last block of scales still has its scale */
  assert_int_equal(kvp_format_bytes(&nf4_dq, 64 * 257, 0, &b), KVP_OK);
  assert_int_equal(b, (64 * 257 * 4 + 257 * 8 + 2 * 32) / 8);
  assert_int_equal(kvp_format_millibits(&nf4), 4500);
  assert_int_equal(kvp_format_millibits(&nf4_dq), 4126);
  kvp_diag d = {{0}};
  kvp_format lone2 = {4, 64, 8, 0, 0, 0, 0, 256, 0, 0, 0}, bare2 = {4, 0, 0, 0, 0, 0, 0, 256, 32, 0, 0};
  assert_int_equal(kvp_format_check(&nf4_dq, "weights", &d), KVP_OK);
  assert_int_equal(kvp_format_check(&lone2, "weights", &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "second-level scale"));
  assert_int_equal(kvp_format_check(&bare2, "weights", &d), KVP_EINVAL);
}

/* kvp_format_weight_bytes: the elements, tensor bits a matrix and col bits
 * an input column, counted by hand */
static void weight_bytes_add_matrix_and_column_bits_rounded_once(void **state) {
  (void)state;
  /* NVFP4-like: 4 bits, an 8-bit scale per 16, 64 bits a matrix: three
   * 16 x 32 matrices, 1536 x 4 + 96 x 8 + 3 x 64 = 7104 bits */
  kvp_format nvfp4 = {4, 16, 8, 0, 0, 0, 0, 0, 0, 64, 0};
  int64_t b;
  assert_int_equal(kvp_format_weight_bytes(&nvfp4, 1536, 3, 16, &b), KVP_OK);
  assert_int_equal(b, 888);
  /* GPTQ act order: int4 g128 asymmetric and 64 bits an input column: a
   * 32 x 128 matrix, 4096 x 4 + 32 x 20 + 128 x 64 = 25216 bits */
  kvp_format act = {4, 128, 16, 4, 0, 0, 0, 0, 0, 0, 64};
  assert_int_equal(kvp_format_weight_bytes(&act, 4096, 1, 128, &b), KVP_OK);
  assert_int_equal(b, 3152);
  /* no tensor or col bits: kvp_format_bytes */
  assert_int_equal(kvp_format_weight_bytes(&int4_g128, 70000000000LL, 7, 9, &b), KVP_OK);
  assert_int_equal(b, 36367187500LL);
  /* rounded up once: 3 x 4 + 4 = 16 bits, 2 bytes, not 2 + 1 */
  kvp_format odd = {4, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0};
  assert_int_equal(kvp_format_weight_bytes(&odd, 3, 1, 0, &b), KVP_OK);
  assert_int_equal(b, 2);
}

static void weight_bytes_overflow_is_an_error(void **state) {
  (void)state;
  kvp_format nvfp4 = {4, 16, 8, 0, 0, 0, 0, 0, 0, 64, 64};
  int64_t b;
  assert_int_equal(kvp_format_weight_bytes(&bf16, INT64_MAX / 8, 0, 0, &b), KVP_EOVERFLOW);
  assert_int_equal(kvp_format_weight_bytes(&nvfp4, 16, INT64_MAX / 32, 0, &b), KVP_EOVERFLOW);
  assert_int_equal(kvp_format_weight_bytes(&nvfp4, 16, 0, INT64_MAX / 32, &b), KVP_EOVERFLOW);
  /* each term fits, their sum does not */
  assert_int_equal(kvp_format_weight_bytes(&nvfp4, 16, INT64_MAX / 64, INT64_MAX / 64, &b),
                   KVP_EOVERFLOW);
  assert_int_equal(kvp_format_weight_bytes(&nvfp4, 16, -1, 0, &b), KVP_EINVAL);
  assert_int_equal(kvp_format_weight_bytes(&nvfp4, 16, 0, -1, &b), KVP_EINVAL);
  assert_int_equal(kvp_format_weight_bytes(&nvfp4, -1, 0, 0, &b), KVP_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(bf16_tensor_is_two_bytes_an_element),
    cmocka_unit_test(int4_g128_costs_4156_millibits),
    cmocka_unit_test(seventy_billion_int4_g128_weights_are_36_4_gb_not_35),
    cmocka_unit_test(bytes_round_up_once_per_tensor_not_per_element),
    cmocka_unit_test(groups_never_span_rows),
    cmocka_unit_test(overflow_is_an_error_not_a_wrapped_count),
    cmocka_unit_test(check_rejects_impossible_formats),
    cmocka_unit_test(turboquant_slot_is_key_and_value_packed),
    cmocka_unit_test(double_quantized_scales_have_their_own_scales),
    cmocka_unit_test(weight_bytes_add_matrix_and_column_bits_rounded_once),
    cmocka_unit_test(weight_bytes_overflow_is_an_error),
  };
  return cmocka_run_group_tests_name("format", tests, NULL, NULL);
}
