// SPDX-License-Identifier: MIT
#pragma once
// Rectangle meshes for tests and benchmarks (`shallows mesh`): nx x ny
// squares, each split into two triangles (or kept as a quadrilateral), with
// interior nodes moved at random and cells numbered at random if asked.
// Boundary line elements form the physical groups "west", "east", "south"
// and "north", so that a case names them as it names the sides of a grid.
#include <cstdint>

#include "shallows/core/config.hpp"
#include "shallows/io/gmsh.hpp"

namespace shallows {

enum class RectangleCells { triangles, quadrilaterals, mixed };

struct RectangleMeshSpec {
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  index_t nx = 10, ny = 10;                   // squares along x and y
  RectangleCells cells = RectangleCells::triangles;
  double perturbation = 0;                    // interior nodes moved by up to this fraction of the spacing (< 0.5)
  bool shuffle = false;                       // cells (and nodes) numbered at random
  std::uint64_t seed = 1;                     // for perturbation and shuffle
};

// Node (i, j) at (x0 + i dx, y0 + j dy), i = 0..nx, j = 0..ny. Nodes off the
// boundary are moved by a uniform random offset in [-p dx, p dx) x
// [-p dy, p dy), p = perturbation, drawn from a hash of the seed and the node.
// Beyond p = 0.25 an offset can fold a cell: a draw that leaves a corner of a
// cell around the node turning by less than 5 % of dx dy is drawn again (up to
// 8 times, then the node stays), so every cell is convex whatever p.
// triangles: square (i, j) split along SW-NE where i + j is even, along SE-NW
//   where it is odd (a "union jack" pattern: no preferred direction).
// quadrilaterals: squares kept.
// mixed: squares kept where i / 2 + j / 2 is even (2 x 2 blocks in a
//   checkerboard), the others split as for triangles.
// Cells counter-clockwise, tags 1.. in file order; nodes tagged 1.., z = 0.
// Lines along the sides, physical tags 1 west, 2 east, 3 south, 4 north.
// shuffle numbers the same nodes and cells at random (Fisher-Yates driven by
// std::mt19937_64(seed)). The same spec (seed included) gives the same mesh on
// every platform and thread count.
// Throws std::invalid_argument for nx or ny < 1, x1 <= x0, y1 <= y0, a
// perturbation outside [0, 0.5), or 2^31 nodes or cells or more.
io::GmshMesh rectangle_mesh(const RectangleMeshSpec& spec);

} // namespace shallows
