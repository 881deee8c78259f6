/*
 * checked.h: overflow-checked 64-bit arithmetic for the core (private).
 * Pure computation: no Lua, no I/O.
 *
 * Each helper stores the result and returns 1, or returns 0 on overflow and
 * leaves *r unspecified. The CHK() macro turns a 0 into KVP_EOVERFLOW.
 */
#ifndef KVP_CHECKED_H
#define KVP_CHECKED_H

#include <stdint.h>

static inline int chk_add(int64_t a, int64_t b, int64_t *r) {
  return !__builtin_add_overflow(a, b, r);
}
static inline int chk_sub(int64_t a, int64_t b, int64_t *r) {
  return !__builtin_sub_overflow(a, b, r);
}
static inline int chk_mul(int64_t a, int64_t b, int64_t *r) {
  return !__builtin_mul_overflow(a, b, r);
}
/* ceil(a / b) for a >= 0, b > 0, without the a + b - 1 overflow. */
static inline int64_t cdiv(int64_t a, int64_t b) {
  return a / b + (a % b != 0);
}
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

#define CHK(expr) do { if (!(expr)) return KVP_EOVERFLOW; } while (0)

#endif
