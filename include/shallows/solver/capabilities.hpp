// SPDX-License-Identifier: MIT
#pragma once
// What runs where: one table of features against the places a run can take (a grid or a mesh, the CPU or
// the GPU, one process or several MPI ranks). The backend factory refuses a problem through it, --backend
// auto chooses through it, and docs/features.md is its printout (`shallows features`, checked by a test).
#include <string>
#include <vector>

#include "shallows/solver/problem.hpp"

namespace shallows {

// A thing a problem can ask for. `first_order` is the solver itself: what every run needs.
enum class Feature {
  first_order,
  third_order,
  rain,
  infiltration,
  manning_map,
  sources,
  side_series,
  segments,
  scalars,
  structures,
  lines,  // weirs, walls and breaches
  checkpoints,
};

// Where a run steps: a grid or a mesh, on the CPU or the GPU, in one process or on several MPI ranks.
struct Place {
  bool mesh = false;
  bool gpu = false;
  bool ranks = false;
};

// Whether `feature` runs at `place`.
bool runs(Feature feature, Place place);

// Whether `feature` runs on this kind of domain and rank count on the CPU or the GPU: for the checks made before a
// backend is chosen (the case reader, checkpoints on ranks).
bool runs_on_cpu_or_gpu(Feature feature, bool mesh, bool ranks);

// The features a problem asks for (checkpoints are the run's, not the problem's: not listed).
std::vector<Feature> features_of(const Problem& problem);

// Why `problem` cannot run at `place`, naming the features, where they run instead and the place ("boundary
// segments run on grids only so far; this run is on a mesh on the GPU"); empty where it runs.
std::string refusal(const Problem& problem, Place place);

// Whether a run of `problem` may leave dry cells out of its steps (dry skipping: the GPU grid kernels and the
// mesh executors): not with forcing or passive scalars, which change cells outside the fluxes.
bool skips_dry_cells(const Problem& problem);

// A feature's name in messages and in the table ("rain", "passive scalars").
const char* feature_name(Feature feature);

// The table in Markdown: a row per feature, a column per place, "yes" or "not yet".
std::string features_table();

} // namespace shallows
