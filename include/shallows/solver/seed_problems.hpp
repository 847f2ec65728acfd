// SPDX-License-Identifier: MIT
#pragma once
// The seed papers' test problems built in code (../shared/CASES.md), one definition for the tests and for
// `shallows bench`. The case files in cases/ describe the same problems for `shallows run`.
#include <memory>
#include <string>

#include "shallows/core/config.hpp"
#include "shallows/mesh/unstructured/mesh.hpp"
#include "shallows/solver/problem.hpp"

namespace shallows::seeds {

// A grid of nx x ny cells over [x0, x0 + lx] x [y0, y0 + ly], walls, every field zero, no end time.
Problem empty_grid(index_t nx, index_t ny, double x0, double lx, double y0, double ly);

// S000-T1: a dam at x = 5 over a cosine bed in a 10 m x 1 m channel with walls, on mesh Q_level
// (100 * 2^level x 10 * 2^level cells), CFL 0.9.
Problem s000_t1(int level, double t_end, Precision precision);

// S000-T2: two supercritical waves leave a dry zone over a step (125 x 25 cells, open x sides), CFL 0.8,
// to t = 0.65 s.
Problem s000_t2(Precision precision);

// S003-T3 on [0,2]^2 (seed 003, 4.2.3): a circular dam break over a bump; open x sides (walls with
// walls_everywhere), walls on the y sides, CFL 0.9, to t = 0.15 s.
Problem s003_t3(index_t n, Scheme scheme, Precision precision, bool walls_everywhere = false);

// S004-T1 ("s004-t1": a Gaussian mound of water on [0,10]^2, all wet, dry tolerance 1e-6 m) or S004-T2
// ("s004-t2": a Gaussian hump on a dry bed on [-10,10]^2, dry tolerance 1e-3 m, about two thirds dry) on
// n x n cells, or tiles_x x tiles_y copies side by side (weak scaling: one tile per rank); walls,
// CFL 0.9, no end time.
Problem s004(const std::string& name, index_t n, Precision precision, int tiles_x = 1, int tiles_y = 1);

// The same on a mesh ("s004-t1-mesh", "s004-t2-mesh"), the fields at the cells' centroids;
// "s004-t1-mesh-forcing" adds rain, Green-Ampt soil and a Manning map.
Problem s004_mesh(const std::string& name, std::shared_ptr<const UnstructuredMesh> mesh, Precision precision);

} // namespace shallows::seeds
