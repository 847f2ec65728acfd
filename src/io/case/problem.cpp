// SPDX-License-Identifier: MIT
// build_problem: the modelling decisions a case implies, taken once its
// sections are read. Reading stays a matter of what the file says; how the
// solver represents it is decided here.
#include <cmath>

#include "reader.hpp"

namespace shallows::io::case_reader {
namespace {

const char* kind_name(BoundaryKind k) {
  switch (k) {
    case BoundaryKind::wall: return "wall";
    case BoundaryKind::open: return "open";
    case BoundaryKind::inflow: return "inflow";
    case BoundaryKind::level: return "level";
  }
  return "?";
}

// An inflow hydrograph along a stretch of a walled side is brought in as a
// volume source over the active cells of the side's first column (west, east)
// or row (south, north) in it (Forcing::sources): unlike an inflow side,
// whose ghost cells take the depth inside, a source also fills dry cells.
VolumeSource inflow_source(const Reader& rd, const Reading::InflowSegment& in, double max_speed, Problem& p) {
  const BoundaryKind kind = p.bc(in.side).kind;
  if (kind != BoundaryKind::wall)
    rd.fail_at(in.key, "an inflow segment brings its water in as a source along a walled side; make the side a "
                       "wall (boundary." + in.side_name + " is \"" + kind_name(kind) + "\")");
  const Grid& g = p.grid;
  VolumeSource s;
  s.name = in.name;
  s.discharge = in.discharge;
  for (index_t m = in.begin; m < in.end; ++m) {
    index_t c = 0;
    switch (in.side) {
      case Side::west: c = m * g.nx; break;
      case Side::east: c = m * g.nx + g.nx - 1; break;
      case Side::south: c = m; break;
      case Side::north: c = (g.ny - 1) * g.nx + m; break;
    }
    if (!std::isnan(p.z[static_cast<std::size_t>(c)])) s.cells.push_back(c);
  }
  if (s.cells.empty())
    rd.fail_at(in.key, in.name + ": every cell of the " + in.side_name + " side in it is inactive");
  check_source_discharge(rd, in.discharge_key, s, p, nullptr, max_speed);
  return s;
}

} // namespace

void build_problem(const Reader& rd, Reading&& r, Problem& p) {
  // A Manning map's friction is applied by the forcing after each step, the scheme's own by none.
  if (r.manning_map) {
    p.forcing.manning = std::move(*r.manning_map);
    p.physics.n_manning = 0;
  }
  // No discharge in a dry cell (h <= dry_tolerance), as every step leaves one: the Riemann solver sees none there,
  // and the sides' account, which takes a boundary cell's discharge, would count a film's as water that left.
  for (std::size_t k = 0; k < p.h.size(); ++k)
    if (std::isnan(p.z[k]) || !(p.h[k] > p.physics.h_dry)) p.hu[k] = p.hv[k] = 0;
  // After the [[source]] entries, in the order of the file.
  for (const Reading::InflowSegment& in : r.inflow_segments) {
    p.forcing.sources.push_back(inflow_source(rd, in, r.max_speed, p));
    for (std::size_t k = 0; k < in.concentrations.size(); ++k) p.scalars[k].sources.push_back(in.concentrations[k]);
  }
}

} // namespace shallows::io::case_reader
