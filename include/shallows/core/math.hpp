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

SHALLOWS_HD float abs(float x) { return ::fabsf(x); }
SHALLOWS_HD double abs(double x) { return ::fabs(x); }

template <class Real>
SHALLOWS_HD Real min(Real a, Real b) { return b < a ? b : a; }
template <class Real>
SHALLOWS_HD Real max(Real a, Real b) { return a < b ? b : a; }

// NaN marks inactive cells in the bed array; this test survives -ffast-math
// neither way, so the project never builds with it.
template <class Real>
SHALLOWS_HD bool is_nan(Real x) { return x != x; }

} // namespace shallows::math
