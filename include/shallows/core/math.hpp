// SPDX-License-Identifier: MIT
#pragma once
// Overloads that resolve to the right libm / CUDA intrinsic for float and
// double, on the host and on the device.
#include <cmath>
#include <cstring>
#include <limits>

#include "shallows/core/config.hpp"

namespace shallows::math {

SHALLOWS_HD float sqrt(float x) { return ::sqrtf(x); }
SHALLOWS_HD double sqrt(double x) { return ::sqrt(x); }

// Cube root of x > 0 from IEEE additions, multiplications and divisions only
// (correctly rounded on every IEEE machine, with no FMA contraction: the
// project builds with -ffp-contract=off and nvcc --fmad=false), so the host
// and the device give the same bits; libm's cbrt and CUDA's differ in the last
// bit for about half of all inputs. A first guess from the exponent bits
// (x^(1/3) within 5% for normal x), then Newton steps y <- (2 y + x / y^2) / 3,
// which square the relative error: within an ulp or two after 3 (float) or 4
// (double) steps. Subnormal x are scaled by 2^(3k) into the normal range first.
namespace detail {
template <class Real, class Bits>
SHALLOWS_HD Real cbrt_newton(Real x, Bits magic, int steps) {
  Bits i;
  memcpy(&i, &x, sizeof x);
  i = i / 3 + magic;
  Real y;
  memcpy(&y, &i, sizeof y);
  const Real two(2), third = Real(1) / Real(3);
  for (int k = 0; k < steps; ++k) y = (two * y + x / (y * y)) * third;
  return y;
}
} // namespace detail

SHALLOWS_HD float cbrt(float x) {
  if (x < 1.17549435e-38f) return detail::cbrt_newton(x * 0x1p+48f, 0x2a5137a0u, 3) * 0x1p-16f;
  return detail::cbrt_newton(x, 0x2a5137a0u, 3);
}
SHALLOWS_HD double cbrt(double x) {
  if (x < 2.2250738585072014e-308) return detail::cbrt_newton(x * 0x1p+150, 0x2a9f7893782da1ceull, 4) * 0x1p-50;
  return detail::cbrt_newton(x, 0x2a9f7893782da1ceull, 4);
}

// log(1 + x), x > -1, from IEEE additions, multiplications and divisions
// only, for the same reason as cbrt: libm's log1p and CUDA's differ in the
// last bit, and a Green-Ampt soil's water grows that difference. log1p(x) =
// 2 atanh(s), s = x / (2 + x) near 0 (|s| <= 0.172); else 1 + x = 2^k m with
// m in [sqrt(1/2), sqrt(2)), log(m) the same way and the rounding of 1 + x
// added back. The series to s^21: within two ulps (1.5 measured).
namespace detail {
SHALLOWS_HD double log1p_atanh(double s) {
  const double z = s * s;
  double r = 1.0 / 21;
  r = 1.0 / 19 + z * r;
  r = 1.0 / 17 + z * r;
  r = 1.0 / 15 + z * r;
  r = 1.0 / 13 + z * r;
  r = 1.0 / 11 + z * r;
  r = 1.0 / 9 + z * r;
  r = 1.0 / 7 + z * r;
  r = 1.0 / 5 + z * r;
  r = 1.0 / 3 + z * r;
  const double two_s = 2 * s;
  return two_s + two_s * (z * r);
}

// log(u 2^k0) + c for a normal u > 0: u = 2^k m, m in [sqrt(1/2), sqrt(2)),
// log(m) = 2 atanh((m - 1) / (m + 1)).
SHALLOWS_HD double log_normal(double u, double c, int k0) {
  unsigned long long bits;
  memcpy(&bits, &u, sizeof u);
  int k = static_cast<int>((bits >> 52) & 0x7ff) - 1023 + k0;
  bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;  // m in [1, 2)
  double m;
  memcpy(&m, &bits, sizeof m);
  if (m >= 1.4142135623730951) {
    m *= 0.5;
    ++k;
  }
  const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;  // ln2_hi k exact
  return k * ln2_hi + (k * ln2_lo + (log1p_atanh((m - 1) / (m + 1)) + c));
}

// 2^n, |n| <= 1022.
SHALLOWS_HD double two_to(int n) {
  const unsigned long long bits = static_cast<unsigned long long>(n + 1023) << 52;
  double p;
  memcpy(&p, &bits, sizeof p);
  return p;
}
} // namespace detail

SHALLOWS_HD double log1p(double x) {
  if (!(x > -1.0)) return x == -1.0 ? -HUGE_VAL : NAN;  // NaN stays NaN
  if (x == HUGE_VAL) return x;
  if (x > -0.2928932188134524 && x < 0.41421356237309503) return detail::log1p_atanh(x / (2 + x));
  const double u = 1 + x;
  const double c = x > 1 ? (1 - (u - x)) / u : (x - (u - 1)) / u;  // what rounding 1 + x lost, relative to u
  return detail::log_normal(u, c, 0);
}

// log(1 + a / b), b > 0: near 0 with one division, s = a / (2 b + a), where
// log1p(a / b) would take two (a / b, then s); else log1p(a / b). Within
// two ulps like log1p. Green-Ampt's Newton step evaluates it per cell.
SHALLOWS_HD double log1p_ratio(double a, double b) {
  if (a > -0.2928932188134524 * b && a < 0.41421356237309503 * b) return detail::log1p_atanh(a / (2 * b + a));
  return log1p(a / b);
}

SHALLOWS_HD float abs(float x) { return ::fabsf(x); }
SHALLOWS_HD double abs(double x) { return ::fabs(x); }

// log(x), exp(x), pow(x, y) and acos(x) from IEEE operations only, for the
// same reason as cbrt: the structures' discharge laws (physics/structures.hpp)
// run on the CPU and the GPU, which must move the same water.

// log(x), x > 0 (log1p's reduction): within two ulps.
SHALLOWS_HD double log(double x) {
  if (!(x > 0)) return x == 0 ? -HUGE_VAL : NAN;
  if (x == HUGE_VAL) return x;
  if (x < 2.2250738585072014e-308) return detail::log_normal(x * 0x1p+54, 0.0, -54);
  return detail::log_normal(x, 0.0, 0);
}

// e^x: x = k ln 2 + r with |r| <= ln 2 / 2 (Cody-Waite, k ln2_hi exact), e^r
// by its Taylor series to r^13 (truncation below 1e-17), times 2^k in two
// exact halves. Within two ulps.
SHALLOWS_HD double exp(double x) {
  if (x != x) return x;
  if (x > 709.782712893384) return HUGE_VAL;
  if (x < -745.1332191019412) return 0.0;
  const double t = x * 1.4426950408889634;  // x / ln 2
  const int k = static_cast<int>(t >= 0 ? t + 0.5 : t - 0.5);
  const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  const double r = (x - k * ln2_hi) - k * ln2_lo;
  double e = 0x1.6124613a86d09p-33;  // 1 / 13!
  e = 0x1.1eed8eff8d898p-29 + r * e;
  e = 0x1.ae64567f544e4p-26 + r * e;
  e = 0x1.27e4fb7789f5cp-22 + r * e;
  e = 0x1.71de3a556c734p-19 + r * e;
  e = 0x1.a01a01a01a01ap-16 + r * e;
  e = 0x1.a01a01a01a01ap-13 + r * e;
  e = 0x1.6c16c16c16c17p-10 + r * e;
  e = 0x1.1111111111111p-7 + r * e;
  e = 0x1.5555555555555p-5 + r * e;
  e = 0x1.5555555555555p-3 + r * e;
  e = 0.5 + r * e;
  e = 1.0 + r * e;
  e = 1.0 + r * e;
  const int k1 = k / 2;  // 2^k in two halves, each a normal number
  return e * detail::two_to(k1) * detail::two_to(k - k1);
}

// x^y, x >= 0, as e^(y log x): the error of y log x grows with it, within
// 20 ulps for |y log x| < 6 (the culvert and weir laws: 0 < y < 2, x in metres).
SHALLOWS_HD double pow(double x, double y) {
  if (y == 0) return 1.0;
  if (!(x > 0)) return x == 0 ? (y > 0 ? 0.0 : HUGE_VAL) : NAN;
  return exp(y * log(x));
}

// acos(x), |x| <= 1, through asin's Taylor series on |z| <= 1/2 (to z^51,
// truncation below 1e-17): pi/2 - asin(x) for |x| <= 1/2, else
// 2 asin(sqrt((1 - |x|) / 2)) from 0 or pi (1 - |x| exact there).
namespace detail {
SHALLOWS_HD double asin_half(double z) {
  const double z2 = z * z;
  const double c[26] = {
      0x1.0000000000000p+0, 0x1.5555555555555p-3, 0x1.3333333333333p-4, 0x1.6db6db6db6db7p-5,
      0x1.f1c71c71c71c7p-6, 0x1.6e8ba2e8ba2e9p-6, 0x1.1c4ec4ec4ec4fp-6, 0x1.c99999999999ap-7,
      0x1.7a87878787878p-7, 0x1.3fde50d79435ep-7, 0x1.12ef3cf3cf3cfp-7, 0x1.df3bd37a6f4dfp-8,
      0x1.a6863d70a3d71p-8, 0x1.782dda12f684cp-8, 0x1.51ba308d3dcb1p-8, 0x1.31683bdef7bdfp-8,
      0x1.15ee9d45d1746p-8, 0x1.fcaf8fb6db6dbp-9, 0x1.d3d2a8e0dd67dp-9, 0x1.b026f57b13b14p-9,
      0x1.90cb77f60c7cep-9, 0x1.750de64d7d05fp-9, 0x1.5c5f56efaaaabp-9, 0x1.464c0950f7d47p-9,
      0x1.3275586c5f2f0p-9, 0x1.208d3570ae5a6p-9};  // (2n)! / (4^n n!^2 (2n + 1))
  double s = c[25];
  for (int n = 24; n >= 0; --n) s = c[n] + z2 * s;
  return z * s;
}
} // namespace detail

SHALLOWS_HD double acos(double x) {
  if (!(x >= -1.0 && x <= 1.0)) return NAN;
  const double pio2_hi = 1.57079632679489655800e+00, pio2_lo = 6.12323399573676603587e-17;
  if (x >= -0.5 && x <= 0.5) return pio2_hi - (detail::asin_half(x) - pio2_lo);
  if (x > 0) return 2 * detail::asin_half(sqrt((1 - x) * 0.5));
  return 2 * pio2_hi - (2 * detail::asin_half(sqrt((1 + x) * 0.5)) - 2 * pio2_lo);
}

template <class Real>
SHALLOWS_HD Real min(Real a, Real b) { return b < a ? b : a; }
template <class Real>
SHALLOWS_HD Real max(Real a, Real b) { return a < b ? b : a; }

// NaN marks inactive cells in the bed array; this test survives -ffast-math
// neither way, so the project never builds with it.
template <class Real>
SHALLOWS_HD bool is_nan(Real x) { return x != x; }

// The sign bit clear (+0 and positive values; -0 is not), and all bits zero
// (+0 only): the tests that tell a dry fixed point (cell_update.hpp).
SHALLOWS_HD bool sign_clear(float x) {
#ifdef __CUDA_ARCH__
  return (__float_as_uint(x) >> 31) == 0u;
#else
  return !std::signbit(x);
#endif
}
SHALLOWS_HD bool sign_clear(double x) {
#ifdef __CUDA_ARCH__
  return __double_as_longlong(x) >= 0ll;
#else
  return !std::signbit(x);
#endif
}
SHALLOWS_HD bool bits_zero(float x) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(x) == 0u;
#else
  return x == 0.0f && !std::signbit(x);
#endif
}
SHALLOWS_HD bool bits_zero(double x) {
#ifdef __CUDA_ARCH__
  return __double_as_longlong(x) == 0ll;
#else
  return x == 0.0 && !std::signbit(x);
#endif
}

// A quiet NaN: the bed of an inactive cell, or of a wall's image.
SHALLOWS_HD float quiet_nan(float) {
#ifdef __CUDA_ARCH__
  return __int_as_float(0x7fffffff);
#else
  return std::numeric_limits<float>::quiet_NaN();
#endif
}
SHALLOWS_HD double quiet_nan(double) {
#ifdef __CUDA_ARCH__
  return __longlong_as_double(0x7ff8000000000000ll);
#else
  return std::numeric_limits<double>::quiet_NaN();
#endif
}

} // namespace shallows::math
