// SPDX-License-Identifier: MIT
// Rain from a stack of rate rasters over time (radar rainfall, seed 004):
// step-wise in time, frame k's rate holds on [t_k, t_{k+1}) and the last
// frame's from t_{K-1} on. A cell's rain depth over a step [a, b] is
// sum_k r_k * (the length of [a, b] within [t_k, t_{k+1})), exact for the
// step function, so a run receives the stack's integral whatever its steps.
// The CPU and CUDA executors call these same functions: the same bits.
#pragma once
#include "shallows/core/config.hpp"
#include "shallows/core/math.hpp"
#include "shallows/physics/forcing.hpp"

namespace shallows {

// Frame times and rates (m/s) of a stack, frame-major: rate[k * cells + cell]. Views of host or device arrays.
struct RainFrames {
  const double* t = nullptr;
  const double* rate = nullptr;
  int n = 0;
  index_t cells = 0;
};

// The frames that overlap a step [a, b]: first .. last (last < first: none).
// Trivial, so that a kernel may keep one in shared memory.
struct FrameRange {
  int first, last;
};

SHALLOWS_HD FrameRange frames_over(const RainFrames& f, double a, double b) {
  if (f.n <= 0 || !(b > a)) return {0, -1};
  // The last frame that starts at or before a (frame_times[0] <= 0 <= a), then those that start before b.
  const int first = series_knot(SeriesView{f.t, nullptr, f.n}, a);
  int last = first;
  while (last + 1 < f.n && f.t[last + 1] < b) ++last;
  return {first, last};
}

// The length of [a, b] within [t_k, t_{k+1}) (t_K = +inf).
SHALLOWS_HD double frame_overlap(const RainFrames& f, int k, double a, double b) {
  const double lo = math::max(a, f.t[k]);
  const double hi = k + 1 < f.n ? math::min(b, f.t[k + 1]) : b;
  return hi > lo ? hi - lo : 0.0;
}

// The rain depth (m) of one cell (row-major interior index) over [a, b], frames summed in time order.
SHALLOWS_HD double frames_rain_depth(const RainFrames& f, FrameRange r, index_t cell, double a, double b) {
  double depth = 0;
  for (int k = r.first; k <= r.last; ++k) {
    depth += f.rate[static_cast<index_t>(k) * f.cells + cell] * frame_overlap(f, k, a, b);
  }
  return depth;
}

}  // namespace shallows
