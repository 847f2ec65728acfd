// SPDX-License-Identifier: MIT
#include "shallows/solver/problem.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace shallows {

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
