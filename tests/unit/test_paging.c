/* test_paging.c: blocks per sequence and page sizes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "kvplan.h"
#include "core.h"

static void a_sequence_takes_ceil_n_over_block_blocks(void **state) {
  (void)state;
  kvp_layer l = {KVP_FULL, 8, 128, 128, 0, 0, 0, 0, 0};
  int64_t b;
  assert_int_equal(kvp_layer_blocks(&l, 8192, 16, 1, &b), KVP_OK);
  assert_int_equal(b, 512);
  assert_int_equal(kvp_layer_blocks(&l, 8193, 16, 1, &b), KVP_OK);
  assert_int_equal(b, 513);
  assert_int_equal(kvp_layer_blocks(&l, 0, 16, 1, &b), KVP_OK);
  assert_int_equal(b, 0);
  assert_int_equal(kvp_layer_blocks(&l, 1, 0, 1, &b), KVP_EINVAL);
  assert_int_equal(kvp_layer_blocks(&l, -1, 16, 1, &b), KVP_EINVAL);
}

static void sliding_layer_holds_its_window_plus_one_straddled_block(void **state) {
  (void)state;
  kvp_layer l = {KVP_SLIDING, 8, 128, 128, 4096, 0, 0, 0, 0};
  int64_t b;
  assert_int_equal(kvp_layer_blocks(&l, 4096, 16, 1, &b), KVP_OK);
  assert_int_equal(b, 256);
  assert_int_equal(kvp_layer_blocks(&l, 100000, 16, 1, &b), KVP_OK);
  assert_int_equal(b, 257);
  /* a 2048-token prefill chunk: cdiv(4095 + 2048, 16) + 1 */
  assert_int_equal(kvp_layer_blocks(&l, 100000, 16, 2048, &b), KVP_OK);
  assert_int_equal(b, 385);
}

static void chunked_layer_holds_one_chunk_and_the_step(void **state) {
  (void)state;
  kvp_layer l = {KVP_CHUNKED, 8, 128, 128, 8192, 0, 0, 0, 0};
  int64_t b;
  assert_int_equal(kvp_layer_blocks(&l, 100000, 16, 1, &b), KVP_OK);
  assert_int_equal(b, 513); /* cdiv(8193, 16) */
  assert_int_equal(kvp_layer_blocks(&l, 100, 16, 1, &b), KVP_OK);
  assert_int_equal(b, 7);
}

static void states_and_empty_layers_take_no_blocks(void **state) {
  (void)state;
  kvp_layer s = {KVP_STATE, 1, 0, 0, 0, 0, 0, 1000, 0};
  int64_t b;
  assert_int_equal(kvp_layer_blocks(&s, 100000, 16, 1, &b), KVP_OK);
  assert_int_equal(b, 0);
  assert_int_equal(kvp_layer_blocks(&s, 1, 16, 0, &b), KVP_EINVAL);
}

static void page_of_a_llama_70b_layer_is_64_kib(void **state) {
  (void)state;
  int64_t p;
  /* 8 heads x 2 x 128 x 16 bits = 32768 bits a token; 16 tokens */
  assert_int_equal(kvp_page_bytes(32768, 16, &p), KVP_OK);
  assert_int_equal(p, 65536);
  assert_int_equal(kvp_page_bytes(33, 1, &p), KVP_OK);
  assert_int_equal(p, 5); /* rounded up once per block */
  assert_int_equal(kvp_page_bytes(INT64_MAX / 2, 16, &p), KVP_EOVERFLOW);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(a_sequence_takes_ceil_n_over_block_blocks),
    cmocka_unit_test(sliding_layer_holds_its_window_plus_one_straddled_block),
    cmocka_unit_test(chunked_layer_holds_one_chunk_and_the_step),
    cmocka_unit_test(states_and_empty_layers_take_no_blocks),
    cmocka_unit_test(page_of_a_llama_70b_layer_is_64_kib),
  };
  return cmocka_run_group_tests_name("paging", tests, NULL, NULL);
}
