// SPDX-License-Identifier: MIT
#pragma once
// A step's length, the one rule every executor (CPU and GPU, grids and
// meshes, one rank or many) applies to the largest CFL rate of its state.
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

// dry_dt of a problem: the CFL step of still water 1 m deep, cfl / (sqrt(g * 1 m) G) with G the largest
// sum_edges |Gamma| / (2 |V|) of a cell (1/dx + 1/dy on a grid).
double dry_time_step(const Problem& p);

} // namespace shallows
