// SPDX-License-Identifier: MIT
#pragma once
// The speed |u| of a wet cell as every executor records it (max_speed), in
// double: the square root of the sum of squares, both correctly rounded IEEE
// operations, so the host and the device give the same bits (hypot does not:
// glibc's and CUDA's differ in the last bit for about a quarter of inputs).
#include "shallows/core/math.hpp"

namespace shallows {

SHALLOWS_HD double flow_speed(double hu, double hv, double h) { return math::sqrt(hu * hu + hv * hv) / h; }

} // namespace shallows
