// SPDX-License-Identifier: MIT
// Dry skipping on meshes (dry_blocks.hpp): runs with and without it give the
// same bits, step by step, and the runs with it compute fewer cells.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "shallows/mesh/unstructured/dry_blocks.hpp"
#include "shallows/solver/backend.hpp"
#include "support/mesh_problems.hpp"

namespace shallows {
namespace {

using test_support::dry_valley;
using test_support::make_mesh_problem;

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

BackendOptions cpu(const std::string& loop, bool skip) {
  BackendOptions o;
  o.kind = "cpu";
  o.threads = 2;
  o.arrival_threshold = 0.02;
  o.mesh_loop = loop;
  o.dry_skip = skip;
  return o;
}

// Steps both runs together and compares everything after each step. Most of
// the valley stays dry: with compact blocks (a Z-order numbering) most are
// left out (`compact`); with any numbering, some are.
void expect_same_runs(const Problem& p, const std::string& loop, const std::string& what, bool compact,
                      int steps = 60) {
  auto with = make_backend(p, cpu(loop, true));
  auto without = make_backend(p, cpu(loop, false));
  double t = 0;
  Fields a, b;
  for (int n = 0; n < steps; ++n) {
    const double dt = with->step(t, 1e30);
    ASSERT_EQ(dt, without->step(t, 1e30)) << what << ", step " << n;
    t += dt;
    with->read_state(a);
    without->read_state(b);
    ASSERT_TRUE(same_bits(a.h, b.h) && same_bits(a.hu, b.hu) && same_bits(a.hv, b.hv)) << what << ", step " << n;
  }
  Maxima ma, mb;
  with->read_maxima(ma);
  without->read_maxima(mb);
  EXPECT_TRUE(same_bits(ma.max_h, mb.max_h) && same_bits(ma.max_speed, mb.max_speed) &&
              same_bits(ma.arrival_time, mb.arrival_time))
      << what;
  EXPECT_EQ(with->positivity_volume(), without->positivity_volume()) << what;
  EXPECT_EQ(with->volume(), without->volume()) << what;
  const double all = static_cast<double>(p.mesh->cells()) * steps;
  EXPECT_EQ(without->cells_computed(), all) << what;
  EXPECT_LT(with->cells_computed(), compact ? 0.8 * all : all) << what;
  EXPECT_GT(with->cells_computed(), 0.1 * all) << what;
}

TEST(MeshDrySkip, SameBitsOnEveryMeshKindOrderingAndLoop) {
  const std::map<std::string, BoundaryCondition<double>> walls;
  for (RectangleCells cells : {RectangleCells::triangles, RectangleCells::mixed, RectangleCells::quadrilaterals}) {
    for (CellOrdering ordering : {CellOrdering::random, CellOrdering::rcm, CellOrdering::morton}) {
      for (const char* loop : {"cell", "edge"}) {
        for (Precision precision : {Precision::double_precision, Precision::single_precision}) {
          const Problem p = dry_valley(cells, ordering, precision, walls, 0.03);
          const std::string what = std::string("cells ") + std::to_string(static_cast<int>(cells)) + ", ordering " +
                                   std::to_string(static_cast<int>(ordering)) + ", " + loop +
                                   (precision == Precision::single_precision ? ", float" : ", double");
          if (ordering == CellOrdering::random) {
            // A random numbering scatters the wet cells over every block: the same bits, little left out.
            auto with = make_backend(p, cpu(loop, true));
            auto without = make_backend(p, cpu(loop, false));
            double t = 0;
            for (int n = 0; n < 40; ++n) {
              const double dt = with->step(t, 1e30);
              ASSERT_EQ(dt, without->step(t, 1e30)) << what;
              t += dt;
            }
            Fields a, b;
            with->read_state(a);
            without->read_state(b);
            EXPECT_TRUE(same_bits(a.h, b.h) && same_bits(a.hu, b.hu) && same_bits(a.hv, b.hv)) << what;
          } else {
            expect_same_runs(p, loop, what, ordering == CellOrdering::morton);
          }
        }
      }
    }
  }
}

// Open boundary groups bring water in, or let it out, next to dry cells: the
// blocks along them are always computed.
TEST(MeshDrySkip, OpenGroupsNextToDryLand) {
  const std::map<std::string, BoundaryCondition<double>> bcs{{"south", {BoundaryKind::inflow, 0.05}},
                                                              {"east", {BoundaryKind::open, 0}},
                                                              {"north", {BoundaryKind::level, 0.3}}};
  for (Precision precision : {Precision::double_precision, Precision::single_precision})
    expect_same_runs(dry_valley(RectangleCells::triangles, CellOrdering::morton, precision, bcs), "edge",
                     precision == Precision::single_precision ? "float" : "double", false);
}

// Inactive cells (NaN bed) count as dry; a reloaded state is computed whole
// in its first step, then skipped again, with the same bits as a run that
// never stopped.
TEST(MeshDrySkip, InactiveCellsAndReloadedStates) {
  RectangleMeshSpec spec;
  spec.nx = spec.ny = 36;
  spec.perturbation = 0.3;
  spec.shuffle = true;
  const auto z = [](double x, double y) {
    if (std::abs(x - 0.5) < 0.05 && std::abs(y - 0.5) < 0.3) return std::nan("");
    return 0.1 * x;
  };
  Problem p = make_mesh_problem(spec, z, [](double x, double) { return x < 0.2 ? 0.4 : -1.0; }, {}, CellOrdering::morton);
  p.physics.h_dry = 1e-3;
  expect_same_runs(p, "cell", "inactive cells", true);

  auto straight = make_backend(p, cpu("edge", true));
  auto reloaded = make_backend(p, cpu("edge", true));
  double t = 0;
  for (int n = 0; n < 30; ++n) {
    const double dt = straight->step(t, 1e30);
    ASSERT_EQ(dt, reloaded->step(t, 1e30));
    t += dt;
  }
  Fields f;
  reloaded->read_state(f);
  reloaded->load_state(f);
  for (int n = 0; n < 30; ++n) {
    const double dt = straight->step(t, 1e30);
    ASSERT_EQ(dt, reloaded->step(t, 1e30)) << "step " << n << " after the reload";
    t += dt;
  }
  Fields a, b;
  straight->read_state(a);
  reloaded->read_state(b);
  EXPECT_TRUE(same_bits(a.h, b.h) && same_bits(a.hu, b.hu) && same_bits(a.hv, b.hv));
  EXPECT_GT(reloaded->cells_computed(), straight->cells_computed());  // its first step after the reload: all cells
}

// The block graph: neighbours both ways, none twice, a block's open edges flagged.
TEST(MeshDrySkip, BlockGraph) {
  RectangleMeshSpec spec;
  spec.nx = spec.ny = 20;
  spec.shuffle = true;
  const Problem p = make_mesh_problem(spec, [](double, double) { return 0.0; }, [](double, double) { return 0.0; },
                                      {{"east", {BoundaryKind::open, 0}}}, CellOrdering::rcm);
  const UnstructuredMesh& m = *p.mesh;
  const int east = m.find_boundary("east");  // the one open group
  const DryBlockGraph g = dry_block_graph(m.cells(), m.edge_left, m.edge_right, p.mesh_boundary);
  ASSERT_EQ(g.blocks, (m.cells() + kDryBlockCells - 1) / kDryBlockCells);
  const auto linked = [&](index_t a, index_t b) {
    for (index_t k = g.start[static_cast<std::size_t>(a)]; k < g.start[static_cast<std::size_t>(a) + 1]; ++k)
      if (g.neighbours[static_cast<std::size_t>(k)] == b) return true;
    return false;
  };
  for (std::size_t e = 0; e < m.edge_left.size(); ++e) {
    const index_t bl = dry_block_of(m.edge_left[e]);
    if (m.edge_right[e] < 0) {
      if (boundary_group(m.edge_right[e]) == east) {
        EXPECT_EQ(g.open[bl], 1);
      }
      continue;
    }
    const index_t br = dry_block_of(m.edge_right[e]);
    if (bl != br) {
      EXPECT_TRUE(linked(bl, br) && linked(br, bl)) << "edge " << e;
    }
  }
  for (index_t b = 0; b < g.blocks; ++b) {
    for (index_t k = g.start[b]; k + 1 < g.start[b + 1]; ++k)
      EXPECT_LT(g.neighbours[k], g.neighbours[k + 1]) << "block " << b;  // sorted, none twice
    EXPECT_FALSE(linked(b, b));
  }

  // dry_block_needed: a dry block is needed while a neighbour is wet.
  std::vector<unsigned char> dry(static_cast<std::size_t>(g.blocks), 1), needed(dry.size(), 0);
  const DryBlocks d{g.start.data(), g.neighbours.data(), g.open.data(), dry.data(), needed.data()};
  index_t b0 = 0;
  while (g.start[b0 + 1] == g.start[b0]) ++b0;
  const index_t nb = g.neighbours[static_cast<std::size_t>(g.start[b0])];
  EXPECT_FALSE(dry_block_needed(d, b0));
  dry[static_cast<std::size_t>(nb)] = 0;
  EXPECT_TRUE(dry_block_needed(d, b0));
  EXPECT_TRUE(dry_block_needed(d, nb));
}

} // namespace
} // namespace shallows
