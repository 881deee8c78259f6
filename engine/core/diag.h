/*
 * diag.h: the core's private error helpers.
 * Pure computation: no Lua, no I/O.
 */
#ifndef KVP_DIAG_H
#define KVP_DIAG_H

#include "kvplan.h"

/* Fill d (if any) with a printf-style message and return e. */
kvp_err kvp_fail(kvp_diag *d, kvp_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* KVP_OK when v >= min, else KVP_EINVAL naming the field and value (inline:
 * a sweep checks every deployment's numbers; the message is out of line). */
kvp_err kvp_check_count_fail(int64_t v, int64_t min, const char *field, kvp_diag *d);
static inline kvp_err kvp_check_count(int64_t v, int64_t min, const char *field, kvp_diag *d) {
  return v >= min ? KVP_OK : kvp_check_count_fail(v, min, field, d);
}

#define TRY(expr) do { kvp_err e_ = (expr); if (e_ != KVP_OK) return e_; } while (0)

#endif
