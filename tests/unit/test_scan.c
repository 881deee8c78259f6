/* test_scan.c: which literals occur in a text (scan.c): hand cases, the
 * bounds, and every literal of a few hundred against a plain search over
 * pseudo-random texts of a small alphabet (where the hash's collisions and
 * overlapping matches are frequent). */
#define _GNU_SOURCE /* memmem */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"

static void hand(void **state) {
  (void)state;
  const char *text = "INFO [gpu_worker.py:298] Available KV cache memory: 6.51 GiB\nGPU KV cache size: 42,656 tokens";
  const char *lits[] = {"Available KV cache memory", "GPU KV cache size", "# GPU blocks", "tokens",
                        "42,656 tokens", "tokens!", "INF"};
  size_t lens[7];
  unsigned char found[7];
  for (int i = 0; i < 7; i++) lens[i] = strlen(lits[i]);
  assert_int_equal(kvp_scan_literals(text, strlen(text), lits, lens, 7, found, NULL), KVP_OK);
  unsigned char want[7] = {1, 1, 0, 1, 1, 0, 1};
  assert_memory_equal(found, want, 7);
  /* a literal at the very end, and one a byte past it */
  const char *end[] = {"kens", "tokensx"};
  size_t elen[] = {4, 7};
  assert_int_equal(kvp_scan_literals(text, strlen(text), end, elen, 2, found, NULL), KVP_OK);
  assert_int_equal(found[0], 1);
  assert_int_equal(found[1], 0);
}

static void bytes(void **state) {
  (void)state;
  /* any bytes: NUL and high bytes in the text and the literals */
  const char text[] = {'a', 0, 'b', (char)0xff, 'c', 0, 0, 0};
  const char l1[] = {0, 'b', (char)0xff}, l2[] = {0, 0, 0}, l3[] = {'c', 0, 'x'};
  const char *lits[] = {l1, l2, l3};
  size_t lens[] = {3, 3, 3};
  unsigned char found[3];
  assert_int_equal(kvp_scan_literals(text, sizeof text, lits, lens, 3, found, NULL), KVP_OK);
  assert_int_equal(found[0], 1);
  assert_int_equal(found[1], 1);
  assert_int_equal(found[2], 0);
}

static void bounds(void **state) {
  (void)state;
  kvp_diag d;
  unsigned char found[2] = {7, 7};
  const char *lits[] = {"abc", "ab"};
  size_t lens[] = {3, 2};
  assert_int_equal(kvp_scan_literals("xxabc", 5, lits, lens, 2, found, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "scan: literal 2 is 2 bytes long (expected at least 3)");
  assert_int_equal(kvp_scan_literals("xxabc", 5, lits, lens, KVP_SCAN_MAX + 1, found, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "scan: 4097 literals (expected at most 4096)");
  /* nothing to find, an empty text, a text shorter than any literal */
  assert_int_equal(kvp_scan_literals("xxabc", 5, lits, lens, 0, found, NULL), KVP_OK);
  assert_int_equal(kvp_scan_literals("", 0, lits, lens, 1, found, NULL), KVP_OK);
  assert_int_equal(found[0], 0);
  assert_int_equal(kvp_scan_literals("ab", 2, lits, lens, 1, found, NULL), KVP_OK);
  assert_int_equal(found[0], 0);
  assert_int_equal(kvp_scan_literals("abc", 3, lits, lens, 1, found, NULL), KVP_OK);
  assert_int_equal(found[0], 1);
}

static uint64_t rng = 88172645463325252ull;
static unsigned next(void) { /* xorshift64 */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng >> 32);
}

static void random_texts(void **state) {
  (void)state;
  enum { NL = 400, TEXT = 20000 };
  static char text[TEXT];
  static char buf[NL][12];
  const char *lits[NL];
  size_t lens[NL];
  static unsigned char found[NL];
  for (int round = 0; round < 20; round++) {
    int alphabet = 2 + round % 5; /* few letters: many overlaps and repeats */
    size_t n = 1 + next() % TEXT;
    for (size_t i = 0; i < n; i++) text[i] = (char)('a' + next() % (unsigned)alphabet);
    for (int i = 0; i < NL; i++) {
      lens[i] = 3 + next() % 9;
      for (size_t k = 0; k < lens[i]; k++) buf[i][k] = (char)('a' + next() % (unsigned)alphabet);
      lits[i] = buf[i];
    }
    assert_int_equal(kvp_scan_literals(text, n, lits, lens, NL, found, NULL), KVP_OK);
    for (int i = 0; i < NL; i++) {
      int want = memmem(text, n, lits[i], lens[i]) != NULL;
      if (found[i] != want) fail_msg("round %d literal %d: found %d, a plain search %d", round, i, found[i], want);
    }
  }
}

static void lines(void **state) {
  (void)state;
  size_t count, last;
  kvp_scan_lines("a\nbb\n\nccc", 10, &count, &last);
  assert_int_equal(count, 3);
  assert_int_equal(last, 5);
  kvp_scan_lines("no newline", 10, &count, &last);
  assert_int_equal(count, 0);
  assert_int_equal(last, 10);
  kvp_scan_lines("", 0, &count, &last);
  assert_int_equal(count, 0);
  assert_int_equal(last, 0);
  kvp_scan_lines("\n", 1, &count, &last);
  assert_int_equal(count, 1);
  assert_int_equal(last, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(hand),
    cmocka_unit_test(bytes),
    cmocka_unit_test(bounds),
    cmocka_unit_test(random_texts),
    cmocka_unit_test(lines),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
