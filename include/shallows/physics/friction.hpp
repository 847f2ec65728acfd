// SPDX-License-Identifier: MIT
#pragma once
// Manning bed friction (seed 001 eq. 5), semi-implicit:
//     (hu)^{n+1} = (hu)^* / (1 + dt g n^2 |u| / h^{4/3}),
// with |u| from the explicit state. The factor lies in (0, 1], so friction
// slows the flow but never reverses it, however large dt g n^2 / h^{4/3}.
#include "shallows/core/math.hpp"
#include "shallows/core/state.hpp"
#include "shallows/physics/params.hpp"

namespace shallows {

template <class Real>
SHALLOWS_HD State<Real> apply_manning(State<Real> q, Real dt, const PhysicsParams<Real>& p) {
  if (p.n_manning <= Real(0) || q.h <= p.h_dry) return q;
  const Real speed = math::sqrt(q.hu * q.hu + q.hv * q.hv) / q.h;
  const Real h43 = q.h * math::cbrt(q.h);
  const Real factor = Real(1) / (Real(1) + dt * p.g * p.n_manning * p.n_manning * speed / h43);
  return {q.h, q.hu * factor, q.hv * factor};
}

} // namespace shallows
