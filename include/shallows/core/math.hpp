// SPDX-License-Identifier: MIT
#pragma once
// Overloads that resolve to the right libm / CUDA intrinsic for float and
// double, on the host and on the device.
#include <cmath>

#include "shallows/core/config.hpp"

namespace shallows::math {

SHALLOWS_HD float sqrt(float x) { return ::sqrtf(x); }
SHALLOWS_HD double sqrt(double x) { return ::sqrt(x); }
SHALLOWS_HD float cbrt(float x) { return ::cbrtf(x); }
SHALLOWS_HD double cbrt(double x) { return ::cbrt(x); }
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
