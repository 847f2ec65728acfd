// SPDX-License-Identifier: MIT
#pragma once
// Mesh problems built in code (generated rectangle meshes), for property,
// agreement and exact-solution tests.
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "shallows/mesh/unstructured/build.hpp"
#include "shallows/mesh/unstructured/generator.hpp"
#include "shallows/mesh/unstructured/ordering.hpp"
#include "shallows/solver/problem.hpp"

namespace shallows::test_support {

// A rectangle mesh (generator spec) renumbered by `ordering`, with fields from
// point functions of the centroid: z(x, y) and eta(x, y), at rest (h =
// max(eta - z, 0); NaN z: an inactive cell). bcs: conditions by side name
// (west, east, south, north); the rest are walls.
inline Problem make_mesh_problem(const RectangleMeshSpec& spec, const std::function<double(double, double)>& z,
                                 const std::function<double(double, double)>& eta,
                                 const std::map<std::string, BoundaryCondition<double>>& bcs = {},
                                 CellOrdering ordering = CellOrdering::file) {
  UnstructuredMesh mesh = apply_ordering(build_mesh(rectangle_mesh(spec), "<generated>"), ordering);
  Problem p;
  const auto n = static_cast<std::size_t>(mesh.cells());
  p.z.resize(n);
  p.h.resize(n);
  p.hu.assign(n, 0.0);
  p.hv.assign(n, 0.0);
  for (std::size_t c = 0; c < n; ++c) {
    const double x = mesh.cell_x[c], y = mesh.cell_y[c];
    p.z[c] = z(x, y);
    p.h[c] = std::isnan(p.z[c]) ? 0.0 : std::max(eta(x, y) - p.z[c], 0.0);
  }
  mesh = deactivate_cells(mesh, p.z);
  p.mesh_boundary.assign(mesh.boundary_names.size(), BoundaryCondition<double>{});
  for (const auto& [name, bc] : bcs) {
    const int g = mesh.find_boundary(name);
    if (g < 0) throw std::invalid_argument("no boundary group " + name);
    p.mesh_boundary[static_cast<std::size_t>(g)] = bc;
  }
  p.mesh = std::make_shared<const UnstructuredMesh>(std::move(mesh));
  p.t_end = 1e30;
  return p;
}

// A basin of perturbed triangles (x in [0, x1], y in [0, y1], nx x ny pairs
// of triangles) over the sloping bed 0.004 x + 0.002 y, with water up to
// eta = depth west of x = dam and dry land east of it, Manning 0.02;
// bcs as make_mesh_problem's (walls by default).
inline Problem sloping_triangle_basin(double x1, double y1, index_t nx, index_t ny, double dam, double depth,
                                      Precision precision,
                                      const std::map<std::string, BoundaryCondition<double>>& bcs = {}) {
  RectangleMeshSpec spec;
  spec.x1 = x1;
  spec.y1 = y1;
  spec.nx = nx;
  spec.ny = ny;
  spec.perturbation = 0.3;
  Problem p = make_mesh_problem(
      spec, [](double x, double y) { return 0.004 * x + 0.002 * y; },
      [dam, depth](double x, double) { return x < dam ? depth : 0.0; }, bcs);
  p.precision = precision;
  p.physics.n_manning = 0.02;
  return p;
}

// A dam break into a dry valley: water west of x = 0.25 up to eta = 0.15 m,
// land rising to the east (z = 0.2 x: the water stops short of x = 0.75 and
// the east stays dry), a bump standing out of the water and a pit that
// fills; h_dry 1 mm; n x n pairs of cells.
inline Problem dry_valley(RectangleCells cells, CellOrdering ordering, Precision precision,
                          const std::map<std::string, BoundaryCondition<double>>& bcs, double manning = 0.0,
                          index_t n = 40) {
  RectangleMeshSpec spec;
  spec.nx = spec.ny = n;
  spec.cells = cells;
  spec.perturbation = 0.3;
  spec.shuffle = true;
  spec.seed = 7;
  const auto z = [](double x, double y) {
    const double pit = std::hypot(x - 0.55, y - 0.7) < 0.1 ? -0.3 : 0.0;
    return 0.2 * x + 0.4 * std::exp(-60 * ((x - 0.4) * (x - 0.4) + (y - 0.3) * (y - 0.3))) + pit;
  };
  Problem p = make_mesh_problem(spec, z, [](double x, double) { return x < 0.25 ? 0.15 : -1.0; }, bcs, ordering);
  p.physics.h_dry = 1e-3;
  p.physics.n_manning = manning;
  p.precision = precision;
  return p;
}

// S003-T1's bowl with islands (test_support::lake_at_rest) on a mesh: a
// smooth rough bottom (no random cell noise: the mesh cells are not the
// grid's), two islands piercing the surface eta = 0.
inline double island_bowl(double x, double y) {
  double bed = -(2 - (x - 0.5) * (x - 0.5) - (y - 0.5) * (y - 0.5) + 0.05 * std::sin(37 * x) * std::cos(23 * y));
  const double r1 = std::hypot(x - 0.3, y - 0.3), r2 = std::hypot(x - 0.7, y - 0.6);
  if (r1 < 0.12) bed = 0.3 * (1 - r1 / 0.12) + 0.05;
  if (r2 < 0.08) bed = 0.02;
  return bed;
}

} // namespace shallows::test_support
