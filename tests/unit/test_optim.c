/* test_optim.c: length distributions, the seeded generator, allocation
 * waste, speculative rates, eviction budgets and the optimization checks. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kvplan.h"
#include "core.h"

static void normal_quantile_inverts_the_cdf_to_full_precision(void **state) {
  (void)state;
  assert_true(fabs(kvp_normal_quantile(0.975) - 1.959963984540054) < 1e-14);
  assert_true(kvp_normal_quantile(0.5) == 0.0);
  /* the far tail, where the approximation alone is least accurate */
  assert_true(fabs(kvp_normal_quantile(1e-10) + 6.361340902404056) < 1e-12);
  const double ps[] = {1e-300, 1e-6, 0.01, 0.02425, 0.3, 0.7, 0.99, 1 - 1e-9};
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
    double z = kvp_normal_quantile(ps[i]);
    assert_true(isfinite(z));
    assert_true(fabs(kvp_normal_cdf(z) - ps[i]) <= 1e-15 + 1e-13 * ps[i]);
  }
  assert_true(isinf(kvp_normal_quantile(0.0)) && kvp_normal_quantile(0.0) < 0);
  assert_true(isinf(kvp_normal_quantile(1.0)) && kvp_normal_quantile(1.0) > 0);
}

static void splitmix_seeds_xoshiro_like_the_reference(void **state) {
  (void)state;
  kvp_rng r;
  /* splitmix64 from state 0: e220a8397b1dcdaf 6e789e6aa1b965f4 ... */
  kvp_rng_seed(&r, 0);
  assert_true(r.s[0] == 0xe220a8397b1dcdafULL);
  assert_true(r.s[1] == 0x6e789e6aa1b965f4ULL);
  assert_true(r.s[2] == 0x06c45d188009454fULL);
  assert_true(r.s[3] == 0xf88bb8a8724c81ecULL);
  assert_true(kvp_rng_next(&r) == 0x99ec5f36cb75f2b4ULL);
  assert_true(kvp_rng_next(&r) == 0xbf6e1f784956452aULL);
  kvp_rng_seed(&r, 42);
  assert_true(kvp_rng_next(&r) == 0x15780b2e0c2ec716ULL);
  for (int i = 0; i < 1000; i++) {
    double u = kvp_rng_unit(&r);
    assert_true(u > 0.0 && u < 1.0);
    assert_true(kvp_rng_below(&r, 7) < 7);
  }
}

static void same_seed_same_lengths_and_sample_mean_near_the_exact_mean(void **state) {
  (void)state;
  kvp_dist d = {.kind = KVP_DIST_UNIFORM, .lo = 1, .hi = 10};
  kvp_rng a, b;
  kvp_rng_seed(&a, 7);
  kvp_rng_seed(&b, 7);
  int64_t sum = 0, x, y;
  for (int i = 0; i < 100000; i++) {
    assert_int_equal(kvp_dist_sample(&d, &a, &x), KVP_OK);
    assert_int_equal(kvp_dist_sample(&d, &b, &y), KVP_OK);
    assert_int_equal(x, y);
    assert_true(x >= 1 && x <= 10);
    sum += x;
  }
  assert_true(llabs(sum - 550000) < 5500); /* within 1 % of 5.5 a request */
  kvp_dist ln = {.kind = KVP_DIST_LOGNORMAL, .lo = 1, .hi = 4096, .mu = log(1000.0), .sigma = 1};
  for (int i = 0; i < 1000; i++) {
    assert_int_equal(kvp_dist_sample(&ln, &a, &x), KVP_OK);
    assert_true(x >= 1 && x <= 4096);
  }
}

static void uniform_points_are_the_stratum_means(void **state) {
  (void)state;
  int64_t p[KVP_LEN_POINTS];
  /* 1..10 in 4 strata of 2.5 ranks: (1 + 2 + 3/2) / 2.5 = 1.8, 4.2, 6.8, 9.2 */
  kvp_dist d = {.kind = KVP_DIST_UNIFORM, .lo = 1, .hi = 10};
  assert_int_equal(kvp_dist_points(&d, 4, p, NULL), KVP_OK);
  assert_int_equal(p[0], 2);
  assert_int_equal(p[1], 4);
  assert_int_equal(p[2], 7);
  assert_int_equal(p[3], 9);
  /* 1..8192 in 32 strata of 256: means 128.5 + 256 i, halves up */
  d.hi = 8192;
  assert_int_equal(kvp_dist_points(&d, 32, p, NULL), KVP_OK);
  for (int i = 0; i < 32; i++) assert_int_equal(p[i], 129 + 256 * i);
  double mean;
  assert_int_equal(kvp_dist_mean(&d, &mean, NULL), KVP_OK);
  assert_true(mean == 4096.5);
}

static void empirical_and_fixed_points_follow_the_values(void **state) {
  (void)state;
  int64_t p[KVP_LEN_POINTS];
  int64_t v[] = {400, 100, 300, 200};
  kvp_lengths_sort(v, 4);
  kvp_dist d = {.kind = KVP_DIST_EMPIRICAL, .values = v, .n = 4};
  assert_int_equal(kvp_dist_points(&d, 2, p, NULL), KVP_OK);
  assert_int_equal(p[0], 150);
  assert_int_equal(p[1], 350);
  /* three strata of 4/3 ranks: (100 + 200/3) / (4/3) = 125, 250, 375 */
  assert_int_equal(kvp_dist_points(&d, 3, p, NULL), KVP_OK);
  assert_int_equal(p[0], 125);
  assert_int_equal(p[1], 250);
  assert_int_equal(p[2], 375);
  kvp_dist f = {.kind = KVP_DIST_FIXED, .lo = 8192};
  assert_int_equal(kvp_dist_points(&f, 32, p, NULL), KVP_OK);
  for (int i = 0; i < 32; i++) assert_int_equal(p[i], 8192);
}

static void normal_and_lognormal_points_integrate_the_density(void **state) {
  (void)state;
  int64_t p[KVP_LEN_POINTS];
  /* halves of N(1000, 100): 1000 -+ 100 phi(0) / 0.5 = 920.2, 1079.8 */
  kvp_dist n = {.kind = KVP_DIST_NORMAL, .lo = 1, .mu = 1000, .sigma = 100};
  assert_int_equal(kvp_dist_points(&n, 2, p, NULL), KVP_OK);
  assert_int_equal(p[0], 920);
  assert_int_equal(p[1], 1080);
  /* lognormal with median 1000, sigma 1: mean 1000 e^0.5 = 1648.7 */
  kvp_dist ln = {.kind = KVP_DIST_LOGNORMAL, .lo = 1, .mu = log(1000.0), .sigma = 1};
  double mean;
  assert_int_equal(kvp_dist_mean(&ln, &mean, NULL), KVP_OK);
  assert_true(fabs(mean - 1648.7212707001277) < 1e-9);
  assert_int_equal(kvp_dist_points(&ln, 1, p, NULL), KVP_OK);
  assert_int_equal(p[0], 1649);
  /* clamped at 2000: e^(mu + 1/2) Phi(ln 2 - 1) + 2000 (1 - Phi(ln 2)) = 1113.87 */
  ln.hi = 2000;
  assert_int_equal(kvp_dist_mean(&ln, &mean, NULL), KVP_OK);
  assert_true(fabs(mean - 1113.870149164235) < 1e-9);
  assert_int_equal(kvp_dist_points(&ln, 32, p, NULL), KVP_OK);
  for (int i = 1; i < 32; i++) assert_true(p[i] >= p[i - 1]);
  assert_int_equal(p[31], 2000);
}

static void bad_distributions_name_the_field(void **state) {
  (void)state;
  kvp_diag diag = {{0}};
  double mean = -1;
  kvp_dist n = {.kind = KVP_DIST_NORMAL, .lo = 1, .mu = 1000, .sigma = -1};
  assert_int_equal(kvp_dist_mean(&n, &mean, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'sd' must be a number in (0, 1e+15], got -1");
  n.sigma = NAN;
  assert_int_equal(kvp_dist_mean(&n, &mean, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'sd' must be a number in (0, 1e+15], got nan");
  kvp_dist u = {.kind = KVP_DIST_UNIFORM, .lo = -5, .hi = 10};
  assert_int_equal(kvp_dist_check(&u, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'min' must be an integer >= 1, got -5");
  int64_t v[] = {-5, 3};
  kvp_dist e = {.kind = KVP_DIST_EMPIRICAL, .values = v, .n = 2};
  assert_int_equal(kvp_dist_check(&e, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'values': length -5 is outside 1..2^40");
  kvp_dist ln = {.kind = KVP_DIST_LOGNORMAL, .lo = 1, .mu = 80, .sigma = 1};
  assert_int_equal(kvp_dist_check(&ln, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'mu' must be a finite number in [-50, 50], got 80");
  assert_true(mean == -1); /* never written on error */
}

static void paged_waste_is_the_last_block_contiguous_the_reservation(void **state) {
  (void)state;
  int64_t len[] = {1, 16, 17, 100}, real, alloc;
  assert_int_equal(kvp_alloc_usage(KVP_ALLOC_PAGED, 16, 128, len, 4, &real, &alloc, NULL), KVP_OK);
  assert_int_equal(real, 134);
  assert_int_equal(alloc, 16 + 16 + 32 + 112);
  assert_int_equal(kvp_alloc_usage(KVP_ALLOC_CONTIGUOUS, 16, 128, len, 4, &real, &alloc, NULL),
                   KVP_OK);
  assert_int_equal(alloc, 4 * 128);
  /* lengths beyond max_model_len are capped at it */
  int64_t longer[] = {300};
  assert_int_equal(kvp_alloc_usage(KVP_ALLOC_PAGED, 16, 128, longer, 1, &real, &alloc, NULL), KVP_OK);
  assert_int_equal(real, 128);
  kvp_diag diag = {{0}};
  int64_t bad[] = {5, -3};
  assert_int_equal(kvp_alloc_usage(KVP_ALLOC_PAGED, 16, 128, bad, 2, &real, &alloc, &diag),
                   KVP_EINVAL);
  assert_string_equal(diag.msg, "length -3 of request 2 must be >= 1");
}

static void speculative_rates_follow_leviathan(void **state) {
  (void)state;
  kvp_spec_rates r;
  /* a = 0.7, g = 4: (1 - 0.7^5) / 0.3 = 2.7731 tokens a step */
  assert_int_equal(kvp_spec_rates_of(0.7, 4, &r, NULL), KVP_OK);
  assert_true(fabs(r.tokens_per_step - 2.7731) < 1e-12);
  assert_true(fabs(r.steps_per_token - 0.3606072626302694) < 1e-12);
  assert_true(fabs(r.target_writes_per_token - 1.803036313151347) < 1e-12);
  assert_true(fabs(r.draft_writes_per_token - 1.4424290505210775) < 1e-12);
  assert_int_equal(kvp_spec_rates_of(0.0, 3, &r, NULL), KVP_OK);
  assert_true(r.tokens_per_step == 1.0);
  kvp_diag diag = {{0}};
  assert_int_equal(kvp_spec_rates_of(1.0, 4, &r, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'acceptance' must be in [0, 1), got 1");
  assert_int_equal(kvp_spec_rates_of(-0.1, 4, &r, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'acceptance' must be in [0, 1), got -0.1");
  assert_int_equal(kvp_spec_rates_of(NAN, 4, &r, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'acceptance' must be in [0, 1), got nan");
  assert_int_equal(kvp_spec_rates_of(0.5, 0, &r, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "field 'tokens' must be an integer in 1..1024, got 0");
}

static void eviction_keeps_sinks_recent_and_heavy_hitters(void **state) {
  (void)state;
  kvp_evict e;
  memset(&e, 0, sizeof e);
  assert_int_equal(kvp_evict_held(&e, 100000, 0), 100000); /* off */
  e.sinks = 4;
  e.recent = 2048;
  assert_int_equal(kvp_evict_held(&e, 1000, 0), 1000);
  assert_int_equal(kvp_evict_held(&e, 100000, 0), 2052);
  memset(&e, 0, sizeof e);
  e.recent = 256;
  e.keep_ppm = 200000; /* H2O: 20 % heavy hitters */
  assert_int_equal(kvp_evict_held(&e, 10000, 0), 256 + 2000);
  assert_int_equal(kvp_evict_held(&e, 10001, 0), 256 + 2001); /* ceil(2000.2) */
  assert_int_equal(kvp_evict_held(&e, 100, 0), 100);
}

static void per_layer_budgets_become_sorted_levels(void **state) {
  (void)state;
  kvp_evict e;
  memset(&e, 0, sizeof e);
  int64_t b[] = {1024, 0, 512, 1024};
  assert_int_equal(kvp_evict_set_layers(&e, b, 4, NULL), KVP_OK);
  assert_int_equal(e.nlevel, 2);
  assert_int_equal(e.level[0], 512);
  assert_int_equal(e.level[1], 1024);
  assert_int_equal(e.layer[0], 2);
  assert_int_equal(e.layer[1], 0);
  assert_int_equal(e.layer[2], 1);
  assert_int_equal(kvp_evict_held(&e, 4096, 2), 1024);
  assert_int_equal(kvp_evict_held(&e, 4096, 0), 4096);
  int64_t many[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  kvp_diag diag = {{0}};
  assert_int_equal(kvp_evict_set_layers(&e, many, 9, &diag), KVP_EINVAL);
  assert_string_equal(diag.msg, "per-layer budgets take more than 8 distinct values: group the "
                                "layers into at most 8 budgets");
}

/* A combination keeps the fields its bits name and writes only those. */
static void combinations_write_only_the_fields_they_set(void **state) {
  (void)state;
  static kvp_deploy with, d, want;
  kvp_deploy_defaults(&with);
  with.kv = (kvp_format){4, 32, 16, 16, 0, 0, 0, 0, 0, 0, 0};
  with.kv_full = (kvp_format){16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  with.kv_recent = 128;
  with.evict.sinks = 4;
  with.evict.recent = 2048;
  with.evict.keep_ppm = 200000;
  with.prefix = 512;
  with.samples = 4;
  with.output = 256;
  with.nlen = 3;
  with.len[0] = 100, with.len[1] = 200, with.len[2] = 300;
  with.spec.tokens = 4;
  kvp_combo c;
  uint32_t set = kvp_combo_bit("kv") | kvp_combo_bit("kivi") | kvp_combo_bit("recent") |
                 kvp_combo_bit("lengths");
  assert_int_equal(set, KVP_COMBO_KV | KVP_COMBO_KIVI | KVP_COMBO_RECENT | KVP_COMBO_LENGTHS);
  assert_int_equal(kvp_combo_bit("budget"), 0);
  assert_int_equal(kvp_combo_bit(NULL), 0);
  assert_int_equal(kvp_combo_take(&c, set, &with, NULL), KVP_OK);
  kvp_deploy_defaults(&d);
  d.evict.sinks = 7;           /* the base's own: kept (eviction merges) */
  d.prefix = 64;               /* not set by c: kept */
  d.len[5] = 99;               /* past the combination's points: cleared */
  d.nlen = 6;
  want = d;
  want.kv = with.kv;
  want.kv_full = with.kv_full;
  want.kv_recent = 128;
  want.evict.recent = 2048;
  want.nlen = 3;
  memset(want.len, 0, sizeof want.len);
  want.len[0] = 100, want.len[1] = 200, want.len[2] = 300;
  kvp_combo_apply(&c, &d);
  assert_memory_equal(&d, &want, sizeof d);
  /* every field group */
  assert_int_equal(kvp_combo_take(&c, KVP_COMBO_ALL, &with, NULL), KVP_OK);
  kvp_deploy_defaults(&d);
  kvp_combo_apply(&c, &d);
  assert_int_equal(d.evict.sinks, 4);
  assert_int_equal(d.evict.keep_ppm, 200000);
  assert_int_equal(d.samples, 4);
  assert_int_equal(d.output, 256);
  assert_int_equal(d.spec.tokens, 4);
  assert_int_equal(d.prefix, 512);
  assert_int_equal(d.block, with.block);
  /* the empty combination changes nothing */
  assert_int_equal(kvp_combo_take(&c, 0, &with, NULL), KVP_OK);
  want = d;
  kvp_combo_apply(&c, &d);
  assert_memory_equal(&d, &want, sizeof d);
}

static void bad_combinations_name_the_field(void **state) {
  (void)state;
  static kvp_deploy with;
  kvp_deploy_defaults(&with);
  kvp_combo c;
  kvp_diag d = {{0}};
  assert_int_equal(kvp_combo_take(&c, 1u << 20, &with, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "optimization combination: unknown field bits 0x100000");
  with.kv.bits = 0;
  assert_int_equal(kvp_combo_take(&c, KVP_COMBO_KV, &with, &d), KVP_EINVAL);
  assert_non_null(strstr(d.msg, "kv"));
  assert_int_equal(kvp_combo_take(&c, KVP_COMBO_ALLOC, &with, &d), KVP_OK); /* kv not taken */
  c.alloc = KVP_NALLOCS;
  assert_int_equal(kvp_combo_check(&c, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "field 'allocation' must be paged or contiguous, got 2");
  c.set = KVP_COMBO_LENGTHS;
  c.nlen = KVP_LEN_POINTS + 1;
  assert_int_equal(kvp_combo_check(&c, &d), KVP_EINVAL);
  assert_string_equal(d.msg, "field 'lengths' takes 0..32 points, got 33");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(normal_quantile_inverts_the_cdf_to_full_precision),
    cmocka_unit_test(splitmix_seeds_xoshiro_like_the_reference),
    cmocka_unit_test(same_seed_same_lengths_and_sample_mean_near_the_exact_mean),
    cmocka_unit_test(uniform_points_are_the_stratum_means),
    cmocka_unit_test(empirical_and_fixed_points_follow_the_values),
    cmocka_unit_test(normal_and_lognormal_points_integrate_the_density),
    cmocka_unit_test(bad_distributions_name_the_field),
    cmocka_unit_test(paged_waste_is_the_last_block_contiguous_the_reservation),
    cmocka_unit_test(speculative_rates_follow_leviathan),
    cmocka_unit_test(eviction_keeps_sinks_recent_and_heavy_hitters),
    cmocka_unit_test(per_layer_budgets_become_sorted_levels),
    cmocka_unit_test(combinations_write_only_the_fields_they_set),
    cmocka_unit_test(bad_combinations_name_the_field),
  };
  return cmocka_run_group_tests_name("optim", tests, NULL, NULL);
}
