/*
 * diag.c: error names and the diag message helper.
 * Pure computation: no Lua, no I/O (formats into the caller's buffer).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "kvplan.h"
#include "diag.h"

double kvp_shown(double v) { return isnan(v) ? fabs(v) : v; }

const char *kvp_strerror(kvp_err e) {
  switch (e) {
    case KVP_OK: return "no error";
    case KVP_EINVAL: return "invalid argument";
    case KVP_EOVERFLOW: return "arithmetic overflow: a count exceeds 64 bits";
    case KVP_ENOMEM: return "out of memory";
    case KVP_EIO: return "input/output error";
  }
  return "unknown error";
}

kvp_err kvp_fail(kvp_diag *d, kvp_err e, const char *fmt, ...) {
  if (d != NULL) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
  }
  return e;
}

kvp_err kvp_check_count_fail(int64_t v, int64_t min, const char *field, kvp_diag *d) {
  return kvp_fail(d, KVP_EINVAL, "field '%s' must be an integer >= %lld, got %lld", field,
                  (long long)min, (long long)v);
}
