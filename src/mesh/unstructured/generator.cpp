// SPDX-License-Identifier: MIT
#include "shallows/mesh/unstructured/generator.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace shallows {
namespace {

using std::size_t;

// A random permutation, the same on every standard library (no std::shuffle).
std::vector<std::uint32_t> random_permutation(size_t n, std::mt19937_64& rng) {
  std::vector<std::uint32_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint32_t>(i);
  for (size_t i = n; i > 1; --i) std::swap(p[i - 1], p[static_cast<size_t>(rng() % i)]);
  return p;
}

// SplitMix64's finaliser: a well-mixed hash of a counter.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in [-1, 1) from the top 53 bits of a hash of (seed, node, draw): each node has
// its own numbers, so nodes can be moved in parallel with the same result.
double uniform_signed(std::uint64_t seed, size_t node, int draw) {
  const std::uint64_t r = mix(seed ^ mix(static_cast<std::uint64_t>(node) << 5 | static_cast<std::uint64_t>(draw)));
  return 2.0 * static_cast<double>(r >> 11) * 0x1.0p-53 - 1.0;
}

// Cells of square (i, j) as corner numbers (0 SW, 1 SE, 2 NE, 3 NW), counter-clockwise;
// returns how many. Split along SW-NE where i + j is even, SE-NW where it is odd ("union
// jack": both diagonals equally often, no preferred direction). mixed keeps squares
// where i / 2 + j / 2 is even: 2 x 2 blocks of quadrilaterals in a checkerboard.
int square_cells(const RectangleMeshSpec& s, index_t i, index_t j, std::array<std::array<int, 4>, 2>& cells) {
  const bool kept = s.cells == RectangleCells::quadrilaterals ||
                    (s.cells == RectangleCells::mixed && (i / 2 + j / 2) % 2 == 0);
  if (kept) {
    cells[0] = {0, 1, 2, 3};
    return 1;
  }
  if ((i + j) % 2 == 0) {
    cells[0] = {0, 1, 2, -1};
    cells[1] = {0, 2, 3, -1};
  } else {
    cells[0] = {0, 1, 3, -1};
    cells[1] = {1, 2, 3, -1};
  }
  return 2;
}

void check(const RectangleMeshSpec& s) {
  const auto bad = [](const std::string& what) { throw std::invalid_argument("rectangle mesh: " + what); };
  if (s.nx < 1 || s.ny < 1) bad("nx and ny must be at least 1");
  if (s.nx >= (index_t{1} << 31) || s.ny >= (index_t{1} << 31)) bad("nx and ny must be below 2^31");
  if (!std::isfinite(s.x0) || !std::isfinite(s.x1) || !(s.x1 > s.x0)) bad("needs finite x0 < x1");
  if (!std::isfinite(s.y0) || !std::isfinite(s.y1) || !(s.y1 > s.y0)) bad("needs finite y0 < y1");
  if (!(s.perturbation >= 0 && s.perturbation < 0.5)) bad("perturbation must be in [0, 0.5)");
  const index_t limit = index_t{1} << 31;
  if ((s.nx + 1) * (s.ny + 1) >= limit || 2 * s.nx * s.ny >= limit) bad("too many nodes or cells (limit 2^31 - 1)");
}

} // namespace

io::GmshMesh rectangle_mesh(const RectangleMeshSpec& spec) {
  check(spec);
  const index_t nx = spec.nx, ny = spec.ny;
  const auto nodes = static_cast<size_t>((nx + 1) * (ny + 1));
  std::array<std::array<int, 4>, 2> split{};
  // row_first[j]: cells of the rows below j (the cells are numbered row by row).
  std::vector<size_t> row_first(static_cast<size_t>(ny) + 1, 0);
  for (index_t j = 0; j < ny; ++j) {
    size_t row = 0;
    for (index_t i = 0; i < nx; ++i) row += static_cast<size_t>(square_cells(spec, i, j, split));
    row_first[static_cast<size_t>(j) + 1] = row_first[static_cast<size_t>(j)] + row;
  }
  const size_t cells = row_first.back();

  // Numbering (nodes, then cells) apart from the perturbation: the shuffled mesh is the
  // same mesh as the unshuffled one, numbered otherwise.
  std::mt19937_64 shuffle_rng(spec.seed);
  io::GmshMesh m;
  // Nodes in lattice order first, node (i, j) at i + j (nx + 1), so that the
  // perturbation finds its neighbours in cache; numbered at random at the end.
  m.node_x.resize(nodes);
  m.node_y.resize(nodes);
  const auto at = [nx](index_t i, index_t j) { return static_cast<size_t>(i + j * (nx + 1)); };
  const double hx = (spec.x1 - spec.x0) / static_cast<double>(nx), hy = (spec.y1 - spec.y0) / static_cast<double>(ny);
  for (index_t j = 0; j <= ny; ++j)
    for (index_t i = 0; i <= nx; ++i) {
      // The far sides exactly at x1 and y1.
      m.node_x[at(i, j)] = i == nx ? spec.x1 : spec.x0 + static_cast<double>(i) * hx;
      m.node_y[at(i, j)] = j == ny ? spec.y1 : spec.y0 + static_cast<double>(j) * hy;
    }

  if (spec.perturbation > 0) {
    // Every corner of the cells of square (i, j) turns left by at least 5 % of the
    // unperturbed value (hx hy): cells convex and not flattened.
    const double min_turn = 0.05 * hx * hy;
    const auto square_ok = [&](index_t i, index_t j) {
      const std::array<size_t, 4> corner{at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)};
      std::array<std::array<int, 4>, 2> square{};
      const int count = square_cells(spec, i, j, square);
      for (int c = 0; c < count; ++c) {
        const auto& cell = square[static_cast<size_t>(c)];
        const int sides = cell[3] < 0 ? 3 : 4;
        for (int k = 0; k < sides; ++k) {
          const size_t p = corner[static_cast<size_t>(cell[static_cast<size_t>((k + sides - 1) % sides)])];
          const size_t q = corner[static_cast<size_t>(cell[static_cast<size_t>(k)])];
          const size_t r = corner[static_cast<size_t>(cell[static_cast<size_t>((k + 1) % sides)])];
          const double turn = (m.node_x[q] - m.node_x[p]) * (m.node_y[r] - m.node_y[q]) -
                              (m.node_y[q] - m.node_y[p]) * (m.node_x[r] - m.node_x[q]);
          if (!(turn >= min_turn)) return false;
        }
      }
      return true;
    };
    // Interior nodes (the boundary stays straight, its nodes on it), each by a uniform
    // offset in [-p hx, p hx) x [-p hy, p hy). Beyond p = 0.25 an offset can fold a cell:
    // such a draw is drawn again (up to 8 times, then the node stays). The cells were
    // acceptable with the node unmoved, so they all end acceptable. Up to p = 0.175 no
    // draw can fail (a corner turns by at least 1 - 4p - 8p^2 of hx hy): no test.
    // Rows of one parity in parallel, then the other: a node's test reads the rows
    // beside it, which do not move meanwhile, so the mesh does not depend on the threads.
    const bool test = spec.perturbation > 0.175;
    const double px = spec.perturbation * hx, py = spec.perturbation * hy;
    for (index_t parity = 1; parity <= 2; ++parity) {
#pragma omp parallel for schedule(dynamic, 1)
      for (index_t j = parity; j < ny; j += 2)
        for (index_t i = 1; i < nx; ++i) {
          const size_t n = at(i, j);
          const double x = m.node_x[n], y = m.node_y[n];
          bool moved = false;
          for (int attempt = 0; attempt < 8 && !moved; ++attempt) {
            m.node_x[n] = x + px * uniform_signed(spec.seed, n, 2 * attempt);
            m.node_y[n] = y + py * uniform_signed(spec.seed, n, 2 * attempt + 1);
            moved = !test ||
                    (square_ok(i - 1, j - 1) && square_ok(i, j - 1) && square_ok(i - 1, j) && square_ok(i, j));
          }
          if (!moved) {
            m.node_x[n] = x;
            m.node_y[n] = y;
          }
        }
    }
  }

  // Lattice node k becomes node node_perm[k]. The copy costs no peak memory: the cells,
  // larger, come after.
  const std::vector<std::uint32_t> no_shuffle;
  const std::vector<std::uint32_t> node_perm = spec.shuffle ? random_permutation(nodes, shuffle_rng) : no_shuffle;
  if (spec.shuffle) {
    std::vector<double> x(nodes), y(nodes);
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(nodes); ++k) {
      const auto kk = static_cast<size_t>(k);
      x[node_perm[kk]] = m.node_x[kk];
      y[node_perm[kk]] = m.node_y[kk];
    }
    m.node_x.swap(x);
    m.node_y.swap(y);
  }
  const auto node = [&](index_t i, index_t j) {
    return node_perm.empty() ? at(i, j) : static_cast<size_t>(node_perm[at(i, j)]);
  };
  m.node_z.assign(nodes, 0.0);
  m.node_tag.resize(nodes);
  for (size_t n = 0; n < nodes; ++n) m.node_tag[n] = static_cast<std::int64_t>(n + 1);

  // Cells counter-clockwise, in square order unless shuffled.
  const std::vector<std::uint32_t> cell_perm = spec.shuffle ? random_permutation(cells, shuffle_rng) : no_shuffle;
  m.cell_nodes.resize(cells);
  m.cell_tag.resize(cells);
#pragma omp parallel for schedule(static)
  for (index_t j = 0; j < ny; ++j) {
    std::array<std::array<int, 4>, 2> row_split{};
    size_t q = row_first[static_cast<size_t>(j)];
    for (index_t i = 0; i < nx; ++i) {
      const std::array<size_t, 4> corner{node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)};
      const int count = square_cells(spec, i, j, row_split);
      for (int c = 0; c < count; ++c, ++q) {
        std::array<std::int64_t, 4> cell{-1, -1, -1, -1};
        for (size_t k = 0; k < 4; ++k) {
          const int which = row_split[static_cast<size_t>(c)][k];
          if (which >= 0) cell[k] = static_cast<std::int64_t>(corner[static_cast<size_t>(which)]);
        }
        m.cell_nodes[cell_perm.empty() ? q : cell_perm[q]] = cell;
      }
    }
  }
  for (size_t c = 0; c < cells; ++c) m.cell_tag[c] = static_cast<std::int64_t>(c + 1);

  // Boundary lines, physical tags 1..4 in the order west, east, south, north.
  m.line_physical_names = {{1, "west"}, {2, "east"}, {3, "south"}, {4, "north"}};
  const auto line = [&](size_t a, size_t b, int tag) {
    m.line_nodes.push_back({static_cast<std::int64_t>(a), static_cast<std::int64_t>(b)});
    m.line_physical.push_back(tag);
  };
  m.line_nodes.reserve(static_cast<size_t>(2 * (nx + ny)));
  m.line_physical.reserve(static_cast<size_t>(2 * (nx + ny)));
  for (index_t j = ny; j > 0; --j) line(node(0, j), node(0, j - 1), 1);
  for (index_t j = 0; j < ny; ++j) line(node(nx, j), node(nx, j + 1), 2);
  for (index_t i = 0; i < nx; ++i) line(node(i, 0), node(i + 1, 0), 3);
  for (index_t i = nx; i > 0; --i) line(node(i, ny), node(i - 1, ny), 4);
  return m;
}

} // namespace shallows
