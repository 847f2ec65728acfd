// SPDX-License-Identifier: MIT
#pragma once
// The mass balance of a run: behind walls, the volume changes only by what
// the positivity fixes add (Backend::positivity_volume) and what the forcing
// moves (rain in, infiltration out, sources; Backend::forcing_volumes), up to
// round-off. Hydraulic structures (Forcing::structures) move water between
// two cells of the domain, what one loses the other gains: no term of their own.
#include <string>

#include "shallows/solver/problem.hpp"

namespace shallows {

struct MassBalance {
  // Every boundary is a wall (grid sides, or every boundary group of a mesh):
  // no water crosses the boundary.
  bool closed = false;
  // The balance below was checked: a positivity account, and a closed
  // domain or an account of the water through its boundary (every executor
  // keeps one); otherwise residual and ok keep their defaults.
  bool checked = false;
  // (final - initial - positivity - rain + infiltration - sources - inflow
  // + outflow) / scale, scale = the largest of these volumes (0 when all are 0).
  double relative_residual = 0;
  // The largest |relative_residual| accepted: 1e-10 in double, 1e-4 in float.
  double tolerance = 0;
  bool ok = true;
};

// Whether water can cross the problem's boundary.
bool closed_domain(const Problem& p);

// The balance of a run of p from volume `initial` to `final` (m^3) with
// positivity fixes adding `positivity` and the forcing moving `forcing` (m^3).
// With `boundary` kept (Backend::boundary_flow), the water through open,
// inflow and level sides is accounted and the balance is checked there too.
MassBalance mass_balance(const Problem& p, double initial, double final, double positivity,
                         const ForcingVolumes& forcing = {}, const BoundaryFlow& boundary = {});

// The warning for a balance that missed its tolerance.
std::string mass_balance_message(const MassBalance& b);

} // namespace shallows
