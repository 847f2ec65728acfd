// SPDX-License-Identifier: MIT
#pragma once
// Overloads that resolve to the right libm / CUDA intrinsic for float and
// double, on the host and on the device.
#include <cmath>
#include <cstring>

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
} // namespace detail

SHALLOWS_HD double log1p(double x) {
  if (!(x > -1.0)) return x == -1.0 ? -HUGE_VAL : NAN;  // NaN stays NaN
  if (x == HUGE_VAL) return x;
  if (x > -0.2928932188134524 && x < 0.41421356237309503) return detail::log1p_atanh(x / (2 + x));
  const double u = 1 + x;
  const double c = x > 1 ? (1 - (u - x)) / u : (x - (u - 1)) / u;  // what rounding 1 + x lost, relative to u
  unsigned long long bits;
  memcpy(&bits, &u, sizeof u);
  int k = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;  // m in [1, 2)
  double m;
  memcpy(&m, &bits, sizeof m);
  if (m >= 1.4142135623730951) {
    m *= 0.5;
    ++k;
  }
  const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;  // ln2_hi k exact
  return k * ln2_hi + (k * ln2_lo + (detail::log1p_atanh((m - 1) / (m + 1)) + c));
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

// libm's and CUDA's, which may differ in the last bit: for the structures'
// discharge laws (physics/structures.hpp), which run on the CPU only so far.
SHALLOWS_HD double pow(double x, double y) { return ::pow(x, y); }
SHALLOWS_HD double acos(double x) { return ::acos(x); }
SHALLOWS_HD double sin(double x) { return ::sin(x); }

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

} // namespace shallows::math
