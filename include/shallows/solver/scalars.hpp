// SPDX-License-Identifier: MIT
#pragma once
// Passive scalars (seed 004, appendix): solutes or tracers carried by the
// flow. The state of scalar s is its amount per unit area h c (Fields::hc);
// a run reports the concentration c = h c / h (concentration()). Host data
// of the Problem; the transport itself is physics/scalar_transport.hpp.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "shallows/mesh/structured/grid.hpp"
#include "shallows/mesh/unstructured/mesh.hpp"

namespace shallows {

struct PassiveScalar {
  std::string name;             // the output variable
  std::vector<double> c;        // initial concentration per cell (problem cell order); one value: uniform
  std::array<double, 4> side{};  // concentration of the water entering through each side (indexed by Side)
  double rain = 0;              // concentration of the rain
  // Concentration of the water each Forcing::sources entry brings (point
  // sources and inflow segments, in their order); empty: 0 for all. A sink
  // takes the cell's own concentration.
  std::vector<double> sources;
  // Concentration of the water entering through each Problem::segments
  // entry (level segments; an open one carries the cell's own); empty: 0.
  std::vector<double> segments;
  // Meshes: concentration of the water entering through each boundary group
  // (Problem::mesh_boundary; inflow and level, an open one carries the
  // cell's own); empty: 0.
  std::vector<double> groups;
};

// Mass of a scalar (its concentration's units times m^3) over the active
// cells (z not NaN), in cell order, as Backend::volume sums the water: the
// same order on every run. On a grid h c summed, times dx dy; on a mesh
// (not null) h c times each cell's area, summed.
inline double scalar_mass(const std::vector<double>& hc, const std::vector<double>& z, const Grid& grid,
                          const UnstructuredMesh* mesh) {
  double sum = 0;
  for (std::size_t k = 0; k < hc.size(); ++k)
    if (!std::isnan(z[k])) sum += mesh ? hc[k] * mesh->cell_area[k] : hc[k];
  return mesh ? sum : sum * (grid.dx * grid.dy);
}

}  // namespace shallows
