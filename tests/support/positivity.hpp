// SPDX-License-Identifier: MIT
#pragma once
// A walled box whose flow makes the depth clamp act: 1 m of water at
// 1000 m/s (the box of issue 12; no physical flow, but a quick way to cells
// that the explicit step drains below zero, which the HLL fallback at dry
// edges prevents in ordinary flows) thrown against the east wall.
#include "shallows/mesh/unstructured/generator.hpp"
#include "support/mesh_problems.hpp"
#include "support/problems.hpp"

namespace shallows::test_support {

inline void throw_east(Problem& p) {
  for (std::size_t k = 0; k < p.h.size(); ++k) p.hu[k] = 1000.0 * p.h[k];
  p.t_end = 0.2;
}

// nx x ny cells on [0, 20] x [0, 10], flat bed, walls all round.
inline Problem fast_box_grid(index_t nx, index_t ny, Scheme scheme, Precision precision) {
  Problem p = make_problem(nx, ny, 0, 20, 0, 10, [](double, double) { return 0.0; },
                           [](double, double) { return 1.0; });
  throw_east(p);
  p.scheme = scheme;
  p.precision = precision;
  return p;
}

// The same on perturbed triangles.
inline Problem fast_box_mesh(index_t nx, index_t ny, Precision precision) {
  RectangleMeshSpec spec;
  spec.x0 = 0;
  spec.x1 = 20;
  spec.y0 = 0;
  spec.y1 = 10;
  spec.nx = nx;
  spec.ny = ny;
  spec.perturbation = 0.2;
  Problem p = make_mesh_problem(spec, [](double, double) { return 0.0; }, [](double, double) { return 1.0; });
  throw_east(p);
  p.precision = precision;
  return p;
}

} // namespace shallows::test_support
