// SPDX-License-Identifier: MIT
#pragma once
#include "shallows/core/config.hpp"

namespace shallows {

// Conserved state of one cell: depth h (m) and unit discharges hu, hv (m^2/s).
template <class Real>
struct State {
  Real h;
  Real hu;
  Real hv;
};

template <class Real>
SHALLOWS_HD State<Real> operator+(State<Real> a, State<Real> b) {
  return {a.h + b.h, a.hu + b.hu, a.hv + b.hv};
}

template <class Real>
SHALLOWS_HD State<Real> operator-(State<Real> a, State<Real> b) {
  return {a.h - b.h, a.hu - b.hu, a.hv - b.hv};
}

} // namespace shallows
