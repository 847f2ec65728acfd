// SPDX-License-Identifier: MIT
#pragma once
// Wall time for run summaries, progress and benchmarks: a steady clock, so
// that a change of the system time does not show up as a step's duration.
#include <chrono>

namespace shallows {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace shallows
