// SPDX-License-Identifier: MIT
#pragma once
#include "shallows/core/config.hpp"

namespace shallows {

// Physical constants of a run, passed by value into kernels.
template <class Real>
struct PhysicsParams {
  Real g = Real(9.81);          // gravity (m/s^2)
  Real h_dry = Real(1e-6);      // below this depth a cell is dry: velocity 0 (m)
  Real n_manning = Real(0);     // Manning coefficient (s/m^(1/3))
};

} // namespace shallows
