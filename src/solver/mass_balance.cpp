// SPDX-License-Identifier: MIT
#include "shallows/solver/mass_balance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace shallows {

bool closed_domain(const Problem& p) {
  const auto wall = [](const BoundaryCondition<double>& bc) { return bc.kind == BoundaryKind::wall; };
  if (p.on_mesh()) return std::all_of(p.mesh_boundary.begin(), p.mesh_boundary.end(), wall);
  return std::all_of(p.boundary.begin(), p.boundary.end(), wall) &&
         std::all_of(p.segments.begin(), p.segments.end(), [&](const BoundarySegment& s) { return wall(s.where.bc); });
}

MassBalance mass_balance(const Problem& p, double initial, double final, double positivity,
                         const ForcingVolumes& forcing, const BoundaryFlow& boundary) {
  MassBalance b;
  b.closed = closed_domain(p);
  // Measured (tests/regression/test_robustness_sweep.cpp: every walled case,
  // both schemes, two resolutions, up to 100 steps): |residual| <= 2.3e-15 in
  // double and 5.1e-8 in float; a walled box at 1000 m/s: 2e-15 and
  // 8.7e-7. Round-off grows with the steps: the margins (4e4 and 100) leave
  // room for long runs, while a garbage run misses by far more.
  b.tolerance = p.precision == Precision::single_precision ? 1e-4 : 1e-10;
  // NaN positivity or sides: no account kept by the executor.
  b.checked = (b.closed || boundary.kept()) && !std::isnan(positivity);
  if (!b.checked) return b;
  const double in = boundary.kept() ? boundary.in : 0.0, out = boundary.kept() ? boundary.out : 0.0;
  const double scale = std::max({std::abs(initial), std::abs(final), std::abs(positivity), std::abs(forcing.rain),
                                 std::abs(forcing.infiltration), std::abs(forcing.sources), in, out});
  const double residual =
      final - initial - positivity - forcing.rain + forcing.infiltration - forcing.sources - in + out;
  b.relative_residual = scale > 0 ? residual / scale : 0.0;
  b.ok = std::abs(b.relative_residual) <= b.tolerance;  // false for NaN
  return b;
}

std::string mass_balance_message(const MassBalance& b) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "mass balance missed: final - initial volume - what positivity fixes, rain, infiltration, "
                "sources and the sides moved is %.3g of the volume "
                "(tolerance %.0e)",
                b.relative_residual, b.tolerance);
  return buf;
}

} // namespace shallows
