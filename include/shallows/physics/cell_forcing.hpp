// SPDX-License-Identifier: MIT
#pragma once
// One cell's forcing over a step from the forcing's inputs (Problem::forcing:
// the rain series or stack, the rain scales, a Manning map, the soil's
// parameters), as every executor applies it, CPU and GPU, grids and meshes:
// the inputs are views of host or device arrays indexed by problem cell,
// each holding one value for every cell or one per cell.
#include "shallows/core/config.hpp"
#include "shallows/physics/forcing.hpp"
#include "shallows/physics/rain_frames.hpp"

namespace shallows {

// A per-cell input of 0 values (the fallback), 1 (every cell) or one per
// cell: a uniform value is not expanded.
struct CellValues {
  const double* v = nullptr;
  index_t n = 0;
  SHALLOWS_HD double at(index_t cell, double fallback) const { return n == 0 ? fallback : v[n == 1 ? 0 : cell]; }
};

// The forcing's per-cell inputs.
struct ForcingInputs {
  SeriesView rain;           // n = 0: no rain series
  CellValues rain_scale;     // fallback 1
  RainFrames frames;         // n > 0: rain from the stack (rain and rain_scale unused)
  CellValues manning;        // fallback -1 (no map)
  InfiltrationModel model = InfiltrationModel::none;
  CellValues p0, p1, p2;     // fallback 0
};

// What a step's rain is in every cell before the cell's own scale: the
// series' depth over [t0, t1], or the stack's frames that overlap it. Trivial,
// so that a GPU block may find it once and keep it in shared memory.
struct StepRain {
  double depth;
  double uniform;  // depth times the scale of every cell, where one scale serves them all
  FrameRange over;
};

SHALLOWS_HD StepRain step_rain(const ForcingInputs& in, double t0, double t1) {
  const double depth = series_integral(in.rain, t0, t1);
  return {depth, in.rain_scale.n > 1 ? 0.0 : in.rain_scale.at(0, 1.0) * depth, frames_over(in.frames, t0, t1)};
}

// The rain depth of problem cell `cell` over [t0, t0 + dt].
SHALLOWS_HD double cell_rain(const ForcingInputs& in, const StepRain& rain, index_t cell, double t0, double dt) {
  if (in.frames.n > 0) return frames_rain_depth(in.frames, rain.over, cell, t0, t0 + dt);
  return in.rain_scale.n > 1 ? in.rain_scale.v[cell] * rain.depth : rain.uniform;
}

// Problem cell `cell`'s forcing over [t0, t0 + dt] on its state q:
// apply_cell_forcing with the cell's rain, map and soil. F: the cell's
// cumulative infiltration, updated; moved: what the rain and the soil moved.
// green_ampt: SolveGreenAmpt, or a GPU kernel instance's stand-in for runs
// without that soil.
template <class Real, class GreenAmpt = SolveGreenAmpt>
SHALLOWS_HD State<Real> force_cell(const ForcingInputs& in, const StepRain& rain, index_t cell, double t0, double dt,
                                   State<Real> q, const PhysicsParams<Real>& p, double& F, ForcingDepths& moved,
                                   const GreenAmpt& green_ampt = {}) {
  CellForcing f;
  f.rain = cell_rain(in, rain, cell, t0, dt);
  f.manning = in.manning.at(cell, -1.0);
  f.model = in.model;
  // Only what is there: the GPU kernels are bound by instructions.
  if (f.model != InfiltrationModel::none) {
    f.p0 = in.p0.at(cell, 0.0);
    f.p1 = in.p1.at(cell, 0.0);
    f.p2 = in.p2.at(cell, 0.0);
  }
  return apply_cell_forcing(q, f, dt, p, F, moved, green_ampt);
}

}  // namespace shallows
