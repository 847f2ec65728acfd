// SPDX-License-Identifier: MIT
#pragma once
// Exact solutions of the 1D dam break on a flat bed (Ritter: dry downstream;
// Stoker: wet downstream), depth at similarity variable xi = (x - x_dam) / t.
#include <cmath>

namespace shallows::test_support {

inline double ritter_depth(double xi, double h_left, double g) {
  const double c = std::sqrt(g * h_left);
  if (xi <= -c) return h_left;
  if (xi >= 2 * c) return 0;
  const double cs = (2 * c - xi) / 3;
  return cs * cs / g;
}

struct StokerState {
  double h_middle;
  double u_middle;
  double shock_speed;
};

// Middle state: left rarefaction u = 2 (c_l - c_m) meets the right shock
// u = (h_m - h_r) sqrt(g (h_m + h_r) / (2 h_m h_r)); bisection on h_m.
inline StokerState stoker_state(double h_left, double h_right, double g) {
  const double cl = std::sqrt(g * h_left);
  auto mismatch = [&](double hm) {
    return 2 * (cl - std::sqrt(g * hm)) - (hm - h_right) * std::sqrt(g * (hm + h_right) / (2 * hm * h_right));
  };
  double lo = h_right, hi = h_left;
  for (int k = 0; k < 200; ++k) {
    const double mid = 0.5 * (lo + hi);
    (mismatch(mid) > 0 ? lo : hi) = mid;
  }
  const double hm = 0.5 * (lo + hi);
  const double um = 2 * (cl - std::sqrt(g * hm));
  return {hm, um, hm * um / (hm - h_right)};
}

inline double stoker_depth(double xi, double h_left, double h_right, double g) {
  const StokerState s = stoker_state(h_left, h_right, g);
  const double cl = std::sqrt(g * h_left);
  const double cm = std::sqrt(g * s.h_middle);
  if (xi <= -cl) return h_left;
  if (xi <= s.u_middle - cm) {
    const double cs = (2 * cl - xi) / 3;
    return cs * cs / g;
  }
  if (xi <= s.shock_speed) return s.h_middle;
  return h_right;
}

} // namespace shallows::test_support
