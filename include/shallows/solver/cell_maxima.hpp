// SPDX-License-Identifier: MIT
#pragma once
// The maxima a run keeps for each cell (max_h, max_speed, arrival_time),
// grown with a cell's new state by track_cell_maxima, which every executor's
// maxima loop calls (the CUDA grid executor's inside its step kernel), so
// that CPU and GPU keep the same bits.
//  * In the run's precision: the depth is a state value, and the speed is
//    sqrt(u^2 + v^2) in Real of the velocities cell_primitive gives the
//    edges, all correctly rounded IEEE operations (hypot is not: glibc's and
//    CUDA's differ in the last bit), so host and device agree. The GPU keeps
//    them in Real arrays, 8 B a cell in float.
//  * The arrival time is written, never read: a cell arrives with the state
//    that first lifts its depth above the threshold, which is when its max
//    depth (grown by wet cells only, from 0) first exceeds the threshold.
#include "shallows/core/math.hpp"
#include "shallows/core/state.hpp"

namespace shallows {

// What grow_cell_maxima changed, as bits.
enum MaximaGrowth : int { kMaxDepthGrew = 1, kMaxSpeedGrew = 2, kArrived = 4 };

// |u| of a cell from its velocity.
template <class Real>
SHALLOWS_HD Real flow_speed(Real u, Real v) {
  return math::sqrt(u * u + v * v);
}

// The square root of s2 = u^2 + v^2 is taken only where it may exceed the
// largest speed m so far: with m in [kTiny, kHuge] (m^2 normal and finite),
// s2 <= fl(fl(m m) (1 - 16 eps/2)) gives s2 <= m^2 (1 - 13 eps/2), so
// sqrt(s2) < m and its rounding is not above m either. The same result as
// comparing every square root, without most of them.
template <class Real>
struct SpeedShortcut;
template <>
struct SpeedShortcut<float> {
  static constexpr float shrink = 1.0f - 0x1p-20f, tiny = 0x1p-60f, huge = 0x1p60f;
};
template <>
struct SpeedShortcut<double> {
  static constexpr double shrink = 1.0 - 0x1p-49, tiny = 0x1p-500, huge = 0x1p500;
};

// Grows max_h and max_speed (kept as M: Real, or double on the host) with a
// cell of depth h and velocity (u, v), u = hu * (1 / h) as cell_primitive
// computes it; a dry cell (h <= h_dry) changes nothing. A stored value is
// replaced only by a larger one (std::max's m < x). Returns the
// MaximaGrowth bits; kArrived: the caller stores the state's time.
template <class Real, class M>
SHALLOWS_HD int grow_cell_maxima(Real h, Real u, Real v, Real h_dry, double arrival_threshold, M& max_h,
                                 M& max_speed) {
  if (!(h > h_dry)) return 0;
  int grew = 0;
  const M old_h = max_h;
  if (old_h < static_cast<M>(h)) {
    max_h = static_cast<M>(h);
    grew |= kMaxDepthGrew;
  }
  const Real s2 = u * u + v * v;
  const auto m = static_cast<Real>(max_speed);  // a value of this run: exact in Real
  using S = SpeedShortcut<Real>;
  if (!(m >= S::tiny && m <= S::huge && s2 <= m * m * S::shrink)) {
    const M speed = static_cast<M>(math::sqrt(s2));
    if (max_speed < speed) {
      max_speed = speed;
      grew |= kMaxSpeedGrew;
    }
  }
  if (static_cast<double>(h) > arrival_threshold && !(static_cast<double>(old_h) > arrival_threshold)) grew |= kArrived;
  return grew;
}

// The same from a cell's state.
template <class Real, class M>
SHALLOWS_HD int grow_cell_maxima(State<Real> q, Real h_dry, double arrival_threshold, M& max_h, M& max_speed) {
  if (!(q.h > h_dry)) return 0;
  const Real inv_h = Real(1) / q.h;
  return grow_cell_maxima(q.h, q.hu * inv_h, q.hv * inv_h, h_dry, arrival_threshold, max_h, max_speed);
}

// A cell's maxima grown with its state q at time t: max_h and max_speed as
// grow_cell_maxima does, and arrival set to t where the cell first arrives.
// The one per-cell step of every executor's maxima loop, whatever its
// storage (interior or padded index, Real or double maxima). Returns the
// MaximaGrowth bits.
template <class Real, class M>
SHALLOWS_HD int track_cell_maxima(State<Real> q, double t, Real h_dry, double arrival_threshold, M& max_h,
                                  M& max_speed, double& arrival) {
  const int grew = grow_cell_maxima(q, h_dry, arrival_threshold, max_h, max_speed);
  if (grew & kArrived) arrival = t;
  return grew;
}

// The same over a step, for the caller that holds max_h and max_speed (the
// fused step kernel keeps them in registers and stores those that grew):
// state n (q_n, at t_n), then, where next, state n+1 (depth h1 and the
// velocity (u1, v1) that cell_primitive gives it, at t_next). n first: it
// arrives before n+1, which then cannot arrive. Returns the MaximaGrowth
// bits; arrived_at: the arrival time to store where kArrived.
template <class Real, class M>
SHALLOWS_HD int track_cell_maxima_over_step(State<Real> q_n, double t_n, bool next, Real h1, Real u1, Real v1,
                                            double t_next, Real h_dry, double arrival_threshold, M& max_h,
                                            M& max_speed, double& arrived_at) {
  int grew = grow_cell_maxima(q_n, h_dry, arrival_threshold, max_h, max_speed);
  arrived_at = grew & kArrived ? t_n : t_next;
  if (next) grew |= grow_cell_maxima(h1, u1, v1, h_dry, arrival_threshold, max_h, max_speed);
  return grew;
}

} // namespace shallows
