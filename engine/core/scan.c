/*
 * scan.c: which of a set of literals occur in a text, in one pass (scan.h).
 * Pure computation: no Lua, no I/O.
 */
#include <stdlib.h>
#include <string.h>

#include "kvplan.h"
#include "diag.h"

/* The hash of three bytes into 16 bits (Fibonacci hashing of the 24-bit value). */
static inline uint32_t h3(const unsigned char *p) {
  uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | (uint32_t)p[2];
  return (v * 2654435761u) >> 16;
}

typedef struct key {
  uint16_t hash;
  uint16_t lit;
} key;

static int by_hash(const void *a, const void *b) {
  const key *x = a, *y = b;
  if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
  return (x->lit > y->lit) - (x->lit < y->lit);
}

kvp_err kvp_scan_literals(const char *text, size_t n, const char *const *lits, const size_t *lens,
                          size_t count, unsigned char *found, kvp_diag *diag) {
  if (count > KVP_SCAN_MAX)
    return kvp_fail(diag, KVP_EINVAL, "scan: %zu literals (expected at most %d)", count, KVP_SCAN_MAX);
  if (count > 0 && (lits == NULL || lens == NULL || found == NULL))
    return kvp_fail(diag, KVP_EINVAL, "scan: no literals given for %zu", count);
  if (text == NULL && n > 0) return kvp_fail(diag, KVP_EINVAL, "scan: no text for %zu bytes", n);
  key keys[KVP_SCAN_MAX];
  uint64_t table[65536 / 64];
  memset(table, 0, sizeof table);
  for (size_t i = 0; i < count; i++) {
    if (lits[i] == NULL || lens[i] < 3)
      return kvp_fail(diag, KVP_EINVAL, "scan: literal %zu is %zu bytes long (expected at least 3)", i + 1,
                      lits[i] == NULL ? (size_t)0 : lens[i]);
    found[i] = 0;
    keys[i].hash = (uint16_t)h3((const unsigned char *)lits[i]);
    keys[i].lit = (uint16_t)i;
    table[keys[i].hash >> 6] |= (uint64_t)1 << (keys[i].hash & 63);
  }
  if (count == 0 || n < 3) return KVP_OK;
  qsort(keys, count, sizeof keys[0], by_hash);
  size_t left = count;
  const unsigned char *t = (const unsigned char *)text;
  for (size_t i = 0; i + 3 <= n; i++) {
    uint32_t h = h3(t + i);
    if (!(table[h >> 6] >> (h & 63) & 1)) continue;
    size_t lo = 0, hi = count; /* the first key of hash h */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (keys[mid].hash < h) lo = mid + 1; else hi = mid;
    }
    for (size_t k = lo; k < count && keys[k].hash == h; k++) {
      size_t j = keys[k].lit;
      if (found[j] || lens[j] > n - i || memcmp(t + i, lits[j], lens[j]) != 0) continue;
      found[j] = 1;
      if (--left == 0) return KVP_OK;
    }
  }
  return KVP_OK;
}

void kvp_scan_lines(const char *text, size_t n, size_t *lines, size_t *last) {
  size_t count = 0, at = n;
  const char *p = text, *end = text + n;
  while (p < end) {
    const char *q = memchr(p, '\n', (size_t)(end - p));
    if (q == NULL) break;
    count++;
    at = (size_t)(q - text);
    p = q + 1;
  }
  *lines = count;
  *last = at;
}
