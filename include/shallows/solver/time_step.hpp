// SPDX-License-Identifier: MIT
#pragma once
// Step control, the rules every executor (CPU and GPU, grids and meshes,
// one rank or many) applies: whether a step is taken, its length from the
// largest CFL rate of the state, and the time it reaches.
#include "shallows/core/config.hpp"

namespace shallows {

struct Problem;

// dt = cfl / rate (seed 000 eq. 8), at most cap (the next output or end
// time). A state with no wave speed anywhere (rate 0: every cell dry, as
// before rain, a source or an inflow brings the first water) takes dry_dt,
// not the whole cap, so that the first water moves in steps of its own.
SHALLOWS_HD double cfl_time_step(double rate, double cfl, double dry_dt, double cap) {
  const double dt = rate > 0 ? cfl / rate : dry_dt;
  return cap < dt ? cap : dt;
}

// Is a step taken from t? Only before the target, and within the steps asked for.
SHALLOWS_HD bool takes_step(double t, double target, long long steps, long long max_steps) {
  return t < target && steps < max_steps;
}

// The cap on a step from t: dt_max, and no further than the target.
SHALLOWS_HD double step_cap(double t, double target, double dt_max) {
  const double remaining = target - t;
  return dt_max < remaining ? dt_max : remaining;
}

// The time a step of dt from t reaches: the target exactly where the step
// was clipped to it, so that no rounding drift leaves a sliver of a step.
SHALLOWS_HD double step_end_time(double t, double dt, double target) {
  return dt >= target - t ? target : t + dt;
}

// dry_dt of a problem: the CFL step of still water 1 m deep, cfl / (sqrt(g * 1 m) G) with G the largest
// sum_edges |Gamma| / (2 |V|) of a cell (1/dx + 1/dy on a grid).
double dry_time_step(const Problem& p);

} // namespace shallows
