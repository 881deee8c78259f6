/*
 * format.c: storage formats, exact bits and bytes of a tensor.
 * Pure computation: no Lua, no I/O.
 *
 * A group-quantized tensor (GPTQ, AWQ, KIVI) stores, for every `group`
 * elements, a scale and often a zero point: int4 with group 128, an fp16
 * scale and a 4-bit zero costs 4 + 20/128 = 4.156 bits a weight, not 4.
 * Bits are summed exactly and rounded up to bytes once per tensor or block,
 * never per element.
 */
#include "kvplan.h"
#include "core.h"
#include "checked.h"
#include "diag.h"

kvp_err kvp_format_check(const kvp_format *f, const char *field, kvp_diag *d) {
  if (f->bits < 1 || f->bits > KVP_FORMAT_MAX_BITS)
    return kvp_fail(d, KVP_EINVAL, "field '%s': bits must be 1..%d, got %d", field,
                    KVP_FORMAT_MAX_BITS, (int)f->bits);
  if (f->group < 0)
    return kvp_fail(d, KVP_EINVAL, "field '%s': group must be >= 0, got %d", field,
                    (int)f->group);
  if (f->scale_bits < 0 || f->scale_bits > KVP_FORMAT_MAX_BITS ||
      f->zero_bits < 0 || f->zero_bits > KVP_FORMAT_MAX_BITS)
    return kvp_fail(d, KVP_EINVAL, "field '%s': scale and zero bits must be 0..%d, got %d and %d",
                    field, KVP_FORMAT_MAX_BITS, (int)f->scale_bits, (int)f->zero_bits);
  if (f->rope_bits < 0 || f->rope_bits > KVP_FORMAT_MAX_BITS)
    return kvp_fail(d, KVP_EINVAL, "field '%s': rope bits must be 0..%d, got %d", field,
                    KVP_FORMAT_MAX_BITS, (int)f->rope_bits);
  if (f->group == 0 && (f->scale_bits != 0 || f->zero_bits != 0))
    return kvp_fail(d, KVP_EINVAL, "field '%s': scale or zero bits need a group size", field);
  if (f->group2 < 0 || f->scale2_bits < 0 || f->scale2_bits > KVP_FORMAT_MAX_BITS ||
      (f->group2 > 0) != (f->scale2_bits > 0) || (f->group2 > 0 && f->group == 0))
    return kvp_fail(d, KVP_EINVAL,
                    "field '%s': a second-level scale needs group2 >= 1 and scale2 bits 1..%d "
                    "beside a group size, got group2 %d and scale2 %d", field,
                    KVP_FORMAT_MAX_BITS, (int)f->group2, (int)f->scale2_bits);
  if (f->tensor_bits < 0 || f->col_bits < 0)
    return kvp_fail(d, KVP_EINVAL, "field '%s': tensor and col bits must be >= 0, got %d and %d",
                    field, (int)f->tensor_bits, (int)f->col_bits);
  if ((f->tq_key_bits != 0 || f->tq_value_bits != 0) &&
      (f->tq_key_bits < 1 || f->tq_key_bits > 8 || f->tq_value_bits < 1 || f->tq_value_bits > 8))
    return kvp_fail(d, KVP_EINVAL,
                    "field '%s': TurboQuant key and value bits must both be 1..8, got %d and %d",
                    field, (int)f->tq_key_bits, (int)f->tq_value_bits);
  return KVP_OK;
}

/* vLLM TurboQuantConfig (vllm/model_executor/layers/quantization/turboquant/
 * config.py at 1471680b2471): a key is head_dim fp8 bytes (key bits 8) or
 * ceil(head_dim x bits / 8) index bytes and a 2-byte fp16 norm; a value
 * ceil(head_dim x bits / 8) bytes and an fp16 scale and zero (4 bytes); the
 * slot (key then value) rounded up to an even number of bytes. */
int64_t kvp_format_tq_slot(const kvp_format *f, int64_t head_dim) {
  if (f->tq_key_bits <= 0 || head_dim <= 0 || head_dim > (INT64_MAX / 16)) return 0;
  int64_t key = f->tq_key_bits == 8 ? head_dim : cdiv(head_dim * f->tq_key_bits, 8) + 2;
  int64_t s = key + cdiv(head_dim * f->tq_value_bits, 8) + 4;
  return s + s % 2;
}

kvp_err kvp_format_bits(const kvp_format *f, int64_t n, int64_t row, int64_t *bits) {
  if (n < 0 || row < 0) return KVP_EINVAL;
  int64_t b;
  CHK(chk_mul(n, f->bits, &b));
  if (f->group > 0) {
    int64_t groups;
    if (row == 0) {
      groups = cdiv(n, f->group);
    } else {
      if (n % row != 0) return KVP_EINVAL;
      CHK(chk_mul(n / row, cdiv(row, f->group), &groups));
    }
    int64_t meta;
    CHK(chk_mul(groups, (int64_t)f->scale_bits + f->zero_bits, &meta));
    CHK(chk_add(b, meta, &b));
    if (f->group2 > 0) { /* the scales' own scales, per group2 groups of a tensor */
      CHK(chk_mul(cdiv(groups, f->group2), f->scale2_bits, &meta));
      CHK(chk_add(b, meta, &b));
    }
  }
  *bits = b;
  return KVP_OK;
}

kvp_err kvp_format_bytes(const kvp_format *f, int64_t n, int64_t row, int64_t *bytes) {
  int64_t b;
  TRY(kvp_format_bits(f, n, row, &b));
  *bytes = cdiv(b, 8);
  return KVP_OK;
}

/* The one weight-bytes rule: n elements (kvp_format_bits, groups over the
 * whole count) and what a quantized linear layer holds besides them by its
 * shape, tensor bits a matrix over `shards` matrices (NVFP4's fp32 global
 * and input scales of each output shard) and col bits an input column over
 * `cols` columns (GPTQ act order's int32 g_idx and sort indices), summed in
 * bits and rounded up to bytes once (kvp_deploy_weight_bytes for a whole
 * model, stdlib models.lua class_bytes and weight_size for a class or a
 * model). Every catalog format's tensor and col bits are whole bytes (64),
 * so one rounding or two give the same bytes there. */
kvp_err kvp_format_weight_bytes(const kvp_format *f, int64_t n, int64_t shards, int64_t cols,
                                int64_t *bytes) {
  if (shards < 0 || cols < 0) return KVP_EINVAL;
  int64_t b, t, c;
  TRY(kvp_format_bits(f, n, 0, &b));
  CHK(chk_mul(shards, f->tensor_bits, &t));
  CHK(chk_mul(cols, f->col_bits, &c));
  CHK(chk_add(b, t, &b));
  CHK(chk_add(b, c, &b));
  *bytes = cdiv(b, 8);
  return KVP_OK;
}

int64_t kvp_format_millibits(const kvp_format *f) {
  /* TurboQuant: the mean of key and value bits, the per-vector norms and
   * scales left out (they depend on the head size) */
  if (f->tq_key_bits > 0) return ((int64_t)f->tq_key_bits + f->tq_value_bits) * 500;
  int64_t mb = (int64_t)f->bits * 1000;
  if (f->group > 0)
    mb += ((int64_t)f->scale_bits + f->zero_bits) * 1000 / f->group;
  if (f->group > 0 && f->group2 > 0)
    mb += (int64_t)f->scale2_bits * 1000 / ((int64_t)f->group * f->group2);
  return mb;
}
