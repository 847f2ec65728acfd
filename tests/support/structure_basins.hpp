// SPDX-License-Identifier: MIT
#pragma once
// The structures' test problem (tests/regression/test_structure_runs.cpp on
// the CPU, tests/backend/test_cuda_structures.cpp on the GPU): two walled
// basins 50 m x 20 m each side of a dry ridge 10 m wide at x in [50, 60]
// (bed 5 m), on 22 x 4 cells or a perturbed triangle mesh of as many, Manning
// 0.03; and the cells and areas the tests place structures by. The weirs'
// test mesh.
#include <cmath>
#include <cstddef>
#include <filesystem>

#include "shallows/io/gmsh.hpp"
#include "shallows/mesh/unstructured/generator.hpp"
#include "shallows/solver/problem.hpp"
#include "support/mesh_problems.hpp"
#include "support/problems.hpp"

namespace shallows::test_support {

inline double ridge_bed(double x, double) { return x > 50 && x < 60 ? 5.0 : 0.0; }

// eta(x, y): the initial free surface.
template <class Eta>
Problem grid_basins_problem(Eta eta) {
  Problem p = make_problem(22, 4, 0, 110, 0, 20, ridge_bed, eta);
  p.physics.n_manning = 0.03;
  return p;
}

template <class Eta>
Problem mesh_basins_problem(Eta eta) {
  RectangleMeshSpec spec;
  spec.x1 = 110;
  spec.y1 = 20;
  spec.nx = 22;
  spec.ny = 4;
  spec.perturbation = 0.2;
  Problem p = make_mesh_problem(spec, ridge_bed, eta);
  p.physics.n_manning = 0.03;
  return p;
}

// The weirs' basins as a Gmsh file (tests/regression/test_weir_runs.cpp, the
// GPU's tests/backend/test_cuda_structures.cpp): perturbed triangles over
// 400 m x 100 m, 40 x 10 cells' worth.
inline void write_weir_basins_mesh(const std::filesystem::path& file) {
  RectangleMeshSpec spec;
  spec.x1 = 400;
  spec.y1 = 100;
  spec.nx = 40;
  spec.ny = 10;
  spec.perturbation = 0.2;
  io::write_gmsh(file, rectangle_mesh(spec), true);
}

inline double cell_x(const Problem& p, index_t c) {
  return p.mesh ? p.mesh->cell_x[static_cast<std::size_t>(c)] : p.grid.x_center(c % p.grid.nx);
}

inline double cell_area(const Problem& p, index_t c) {
  return p.mesh ? p.mesh->cell_area[static_cast<std::size_t>(c)] : p.grid.dx * p.grid.dy;
}

// The active cell whose centre is nearest (x, y).
inline index_t cell_near(const Problem& p, double x, double y) {
  index_t best = -1;
  double d_best = 0;
  for (index_t c = 0; c < p.cells(); ++c) {
    const double cy = p.mesh ? p.mesh->cell_y[static_cast<std::size_t>(c)] : p.grid.y_center(c / p.grid.nx);
    const double d = std::hypot(cell_x(p, c) - x, cy - y);
    if (best < 0 || d < d_best) {
      best = c;
      d_best = d;
    }
  }
  return best;
}

}  // namespace shallows::test_support
