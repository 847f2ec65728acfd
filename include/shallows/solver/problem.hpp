// SPDX-License-Identifier: MIT
#pragma once
// Everything a backend needs to run: grid or mesh, fields, boundaries,
// physics, numerics and time control. Built from a case file by io/case, or
// by hand in tests. Fields are double, one value per cell: on a grid the
// interior cells row-major (j * nx + i), on a mesh in the mesh's cell order.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "shallows/bc/boundary.hpp"
#include "shallows/core/config.hpp"
#include "shallows/mesh/structured/grid.hpp"
#include "shallows/mesh/unstructured/mesh.hpp"
#include "shallows/physics/params.hpp"
#include "shallows/solver/forcing.hpp"
#include "shallows/solver/scalars.hpp"

namespace shallows {

// A condition on a stretch of a grid side ([[boundary.segment]] of type
// level, open or wall): where.bc holds for the side's boundary cells
// [where.begin, where.end); a level's eta may follow a time series (empty:
// where.bc.value), each step taking its value at the step's start. Inflow
// segments are volume sources (Forcing::sources).
struct BoundarySegment {
  std::string name;  // for messages: "segment west 120-380"
  SegmentCondition<double> where;
  TimeSeries value;
};

// The segments' conditions at time t (their series' values), in a run's precision.
template <class Real>
std::vector<SegmentCondition<Real>> segments_at(const std::vector<BoundarySegment>& segments, double t) {
  std::vector<SegmentCondition<Real>> out;
  for (const BoundarySegment& s : segments) {
    const BoundaryCondition<double> bc = condition_at_time(s.where.bc, s.value.view(), t);
    out.push_back({s.where.side, s.where.begin, s.where.end, {bc.kind, static_cast<Real>(bc.value)}});
  }
  return out;
}

inline bool segments_follow_series(const std::vector<BoundarySegment>& segments) {
  for (const BoundarySegment& s : segments)
    if (!s.value.empty()) return true;
  return false;
}

// roe1: first order (seed 000); roe3: third order, compact reconstruction + SSP-RK3 (seed 003).
enum class Scheme { roe1, roe3 };

struct Problem {
  Grid grid;  // a Cartesian problem (mesh == nullptr)
  // An unstructured problem: the mesh (shared, since Problems are copied;
  // inactive cells already taken out by deactivate_cells) and a condition per
  // boundary group of the mesh (mesh->boundary_names; group 0 is a wall).
  std::shared_ptr<const UnstructuredMesh> mesh;
  std::vector<BoundaryCondition<double>> mesh_boundary;
  std::vector<double> z;   // bed elevation (m); NaN marks an inactive cell (wall)
  std::vector<double> h;   // depth (m), >= 0
  std::vector<double> hu;  // unit discharge along x (m^2/s)
  std::vector<double> hv;  // unit discharge along y (m^2/s)
  std::array<BoundaryCondition<double>, 4> boundary{};  // indexed by Side
  std::vector<BoundarySegment> segments;               // grids: conditions on stretches of sides
  PhysicsParams<double> physics{};
  // Rain, infiltration, a Manning map, volume sources (grids). With a Manning
  // map, physics.n_manning is 0 and the map's friction is applied by the forcing.
  Forcing forcing{};
  // Passive scalars (grids, first order), transported with the flow's mass flux.
  std::vector<PassiveScalar> scalars;
  Scheme scheme = Scheme::roe1;
  double cfl = 0.9;  // gamma of seed 000 eq. 8, in (0, 1]
  Precision precision = Precision::double_precision;
  double t_end = 0;
  std::vector<double> output_times;  // increasing, in (0, t_end]; t_end is the last
  // Grids: the cells whose CFL rate sets dt and must stay finite. Empty (the
  // default): the whole grid. A rank of a distributed run owns a block of its
  // local grid; the halo around it may hold values no step should see.
  CellBox owned{};

  // owned, or the whole grid where it is empty.
  CellBox owned_cells() const { return owned.cells() > 0 ? owned : CellBox{0, 0, grid.nx, grid.ny}; }

  bool on_mesh() const { return mesh != nullptr; }
  index_t cells() const { return mesh ? mesh->cells() : grid.cells(); }

  BoundaryCondition<double>& bc(Side s) { return boundary[static_cast<int>(s)]; }
  const BoundaryCondition<double>& bc(Side s) const { return boundary[static_cast<int>(s)]; }
};

// Fills output_times with t_end / every ... rounded so that t_end is hit exactly.
std::vector<double> output_times_every(double every, double t_end);

} // namespace shallows
