// SPDX-License-Identifier: MIT
#include "shallows/solver/problem.hpp"

#include "shallows/solver/time_step.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace shallows {

double dry_time_step(const Problem& p) {
  double g_max = 1 / p.grid.dx + 1 / p.grid.dy;
  if (p.mesh) {
    const UnstructuredMesh& m = *p.mesh;
    g_max = 0;
    for (index_t c = 0; c < m.cells(); ++c)
      g_max = std::max(g_max, m.cell_perimeter(c) / (2 * m.cell_area[static_cast<std::size_t>(c)]));
  }
  constexpr double depth = 1.0;  // m
  return p.cfl / (std::sqrt(p.physics.g * depth) * g_max);
}

// k * every for k = 1, 2, ... while k * every < t_end (with a relative
// tolerance of 1e-12, so that rounding cannot add a time a hair before
// t_end), then t_end itself. Times are products, not running sums, so that
// they do not drift.
std::vector<double> output_times_every(double every, double t_end) {
  if (!(every > 0) || !std::isfinite(every))
    throw std::invalid_argument("output_times_every: interval must be positive and finite, got " +
                                std::to_string(every));
  if (!(t_end > 0) || !std::isfinite(t_end))
    throw std::invalid_argument("output_times_every: end time must be positive and finite, got " +
                                std::to_string(t_end));
  std::vector<double> times;
  const double limit = t_end * (1 - 1e-12);
  for (long long k = 1;; ++k) {
    const double t = static_cast<double>(k) * every;
    if (!(t < limit)) break;
    times.push_back(t);
  }
  times.push_back(t_end);
  return times;
}

} // namespace shallows
