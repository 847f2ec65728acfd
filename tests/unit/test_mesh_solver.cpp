// SPDX-License-Identifier: MIT
// The first-order scheme on unstructured meshes (CPU executor): lake at rest
// with emerged islands, mass behind walls, a quadrilateral mesh that is a
// grid against the Cartesian solver, independence of the cell ordering, the
// loop design and the thread count.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "shallows/exec/mesh_fields.hpp"
#include "shallows/solver/simulation.hpp"
#include "support/measures.hpp"
#include "support/mesh_problems.hpp"
#include "support/problems.hpp"

namespace {

using namespace shallows;
using test_support::make_mesh_problem;

RectangleMeshSpec unit_square(index_t n, RectangleCells cells, double perturbation = 0.3, bool shuffle = true) {
  RectangleMeshSpec s;
  s.nx = s.ny = n;
  s.cells = cells;
  s.perturbation = perturbation;
  s.shuffle = shuffle;
  s.seed = 7;
  return s;
}

Fields run_steps(const Problem& p, index_t steps, const std::string& loop = "cell", int threads = 2) {
  BackendOptions o{"cpu", threads, false, 0.01};
  o.mesh_loop = loop;
  Simulation sim(p, o);
  sim.advance_steps(steps);
  return sim.state();
}

// Lake at rest with two emerged islands: velocities stay at round-off.
void check_lake(RectangleCells cells, Precision precision, double bound) {
  Problem p = make_mesh_problem(unit_square(40, cells), test_support::island_bowl, [](double, double) { return 0.0; });
  p.precision = precision;
  const Fields f = run_steps(p, 1000);
  const test_support::LakeDeviation d = test_support::lake_deviation(p, f);
  EXPECT_LE(d.velocity, bound);
  EXPECT_LE(d.eta, bound);
  EXPECT_EQ(d.island_depth, 0.0);
}

TEST(MeshLakeAtRest, TrianglesDouble) { check_lake(RectangleCells::triangles, Precision::double_precision, 1e-12); }
TEST(MeshLakeAtRest, TrianglesFloat) { check_lake(RectangleCells::triangles, Precision::single_precision, 1e-5); }
TEST(MeshLakeAtRest, MixedDouble) { check_lake(RectangleCells::mixed, Precision::double_precision, 1e-12); }
TEST(MeshLakeAtRest, MixedFloat) { check_lake(RectangleCells::mixed, Precision::single_precision, 1e-5); }

// A dam break over a bump with a dry island: moving fronts.
Problem dam_break(const RectangleMeshSpec& spec, std::map<std::string, BoundaryCondition<double>> bcs = {},
                  CellOrdering ordering = CellOrdering::file) {
  return make_mesh_problem(
      spec,
      [](double x, double y) { return 0.4 * std::exp(-40 * ((x - 0.6) * (x - 0.6) + (y - 0.4) * (y - 0.4))) - 0.1 * y; },
      [](double x, double) { return x < 0.3 ? 0.6 : 0.05; }, bcs, ordering);
}

TEST(MeshMass, WallsConserveMass) {
  for (RectangleCells cells : {RectangleCells::triangles, RectangleCells::mixed}) {
    const Problem p = dam_break(unit_square(40, cells));
    Simulation sim(p, BackendOptions{"cpu", 2, false, 0.01});
    const double v0 = sim.volume();
    sim.advance_steps(500);
    EXPECT_LE(std::abs(sim.volume() - v0) / v0, 1e-12);
    const Fields f = sim.state();
    for (double h : f.h) ASSERT_GE(h, 0.0);
  }
}

// Every cell and edge evaluated the same way whatever the loop and threads.
TEST(MeshExecutor, CellAndEdgeLoopsAndThreadsAgreeBitForBit) {
  std::map<std::string, BoundaryCondition<double>> bcs{{"west", {BoundaryKind::inflow, 0.2}},
                                                       {"east", {BoundaryKind::open, 0}},
                                                       {"north", {BoundaryKind::level, 0.1}}};
  Problem p = dam_break(unit_square(30, RectangleCells::mixed), bcs);
  p.physics.n_manning = 0.03;
  for (Precision precision : {Precision::double_precision, Precision::single_precision}) {
    p.precision = precision;
    const Fields a = run_steps(p, 200, "cell", 1);
    const Fields b = run_steps(p, 200, "edge", 2);
    const Fields c = run_steps(p, 200, "cell", 3);
    EXPECT_EQ(a.h, b.h);
    EXPECT_EQ(a.hu, b.hu);
    EXPECT_EQ(a.hv, b.hv);
    EXPECT_EQ(a.h, c.h);
    EXPECT_EQ(a.hv, c.hv);
  }
}

// Renumbering the cells changes neither a cell's edges nor their order in it,
// nor any edge's orientation: the fields, mapped back, are the same bits.
TEST(MeshExecutor, OrderingsGiveTheSameFields) {
  std::map<std::string, BoundaryCondition<double>> bcs{{"east", {BoundaryKind::open, 0}}};
  const RectangleMeshSpec spec = unit_square(30, RectangleCells::triangles);
  std::map<std::int64_t, std::array<double, 3>> reference;
  for (CellOrdering ordering : {CellOrdering::random, CellOrdering::rcm, CellOrdering::morton}) {
    Problem p = dam_break(spec, bcs, ordering);
    p.physics.n_manning = 0.02;
    const Fields f = run_steps(p, 150);
    const UnstructuredMesh& m = *p.mesh;
    for (std::size_t c = 0; c < f.h.size(); ++c) {
      const std::array<double, 3> q{f.h[c], f.hu[c], f.hv[c]};
      const auto [it, inserted] = reference.emplace(m.cell_tag[c], q);
      if (!inserted) {
        ASSERT_EQ(it->second, q) << "cell tag " << m.cell_tag[c];
      }
    }
  }
}

// A quadrilateral mesh that is exactly a grid gives the Cartesian solver's
// result, with every boundary type, friction and a wet/dry front.
TEST(MeshExecutor, QuadMeshOfAGridMatchesTheCartesianSolver) {
  const index_t nx = 24, ny = 16;
  const auto z = [](double x, double y) { return 0.3 * std::exp(-30 * ((x - 0.6) * (x - 0.6) + (y - 0.5) * (y - 0.5))); };
  const auto eta = [](double x, double y) { return x + 0.2 * y < 0.4 ? 0.5 : 0.1; };
  const BoundaryCondition<double> west{BoundaryKind::inflow, 0.15}, east{BoundaryKind::open, 0},
      south{BoundaryKind::wall, 0}, north{BoundaryKind::level, 0.12};

  Problem grid = test_support::make_problem(nx, ny, 0, 1.5, 0, 1, z, eta);
  grid.bc(Side::west) = west;
  grid.bc(Side::east) = east;
  grid.bc(Side::south) = south;
  grid.bc(Side::north) = north;
  grid.physics.n_manning = 0.02;

  RectangleMeshSpec spec;
  spec.x1 = 1.5;
  spec.nx = nx;
  spec.ny = ny;
  spec.cells = RectangleCells::quadrilaterals;
  Problem mesh = make_mesh_problem(spec, z, eta, {{"west", west}, {"east", east}, {"south", south}, {"north", north}});
  mesh.physics.n_manning = 0.02;

  const index_t steps = 300;
  Simulation a(grid, BackendOptions{"cpu", 2, false, 0.01});
  Simulation b(mesh, BackendOptions{"cpu", 2, false, 0.01});
  a.advance_steps(steps);
  b.advance_steps(steps);
  EXPECT_NEAR(a.time(), b.time(), 1e-12 * a.time());
  const Fields fa = a.state(), fb = b.state();
  // Mesh cells to grid cells by centroid.
  Fields mapped{std::vector<double>(fa.h.size()), std::vector<double>(fa.h.size()), std::vector<double>(fa.h.size()),
                {}};
  const UnstructuredMesh& m = *mesh.mesh;
  for (std::size_t c = 0; c < fb.h.size(); ++c) {
    const auto i = static_cast<index_t>(m.cell_x[c] / grid.grid.dx);
    const auto j = static_cast<index_t>(m.cell_y[c] / grid.grid.dy);
    const auto k = static_cast<std::size_t>(j * nx + i);
    mapped.h[k] = fb.h[c];
    mapped.hu[k] = fb.hu[c];
    mapped.hv[k] = fb.hv[c];
  }
  EXPECT_LE(test_support::rel_l1(mapped.h, fa.h), 1e-12);
  EXPECT_LE(test_support::rel_l1(mapped.hu, fa.hu), 1e-12);
  EXPECT_LE(test_support::rel_l1(mapped.hv, fa.hv), 1e-12);
  EXPECT_GT(test_support::rel_l1(fa.h, grid.h), 1e-3);  // the flow did move
}

TEST(MeshExecutor, InactiveCellsStayOutAndActAsWalls) {
  // A block of NaN bed in the middle: mass is kept, the block stays dry.
  const auto z = [](double x, double y) {
    return (std::abs(x - 0.5) < 0.1 && std::abs(y - 0.5) < 0.2) ? std::nan("") : 0.0;
  };
  Problem p = make_mesh_problem(unit_square(30, RectangleCells::triangles), z,
                                [](double x, double) { return x < 0.3 ? 1.0 : 0.2; });
  Simulation sim(p, BackendOptions{"cpu", 2, false, 0.01});
  const double v0 = sim.volume();
  sim.advance_steps(300);
  EXPECT_LE(std::abs(sim.volume() - v0) / v0, 1e-12);
  const Fields f = sim.state();
  for (std::size_t c = 0; c < f.h.size(); ++c) {
    if (std::isnan(p.z[c])) {
      EXPECT_EQ(f.h[c], 0.0);
    } else {
      ASSERT_TRUE(std::isfinite(f.h[c]));
    }
  }
}

TEST(MeshExecutor, BoundaryStateFollowsTheNormal) {
  // A wall mirrors the normal velocity for any normal; inflow sends its
  // discharge along the inward normal.
  const PhysicsParams<double> p{};
  const CellPrimitive<double> q = cell_primitive(State<double>{2.0, 0.6, -0.4}, 0.5, p);
  const double nx = 0.6, ny = 0.8;
  const CellPrimitive<double> w = boundary_primitive(q, nx, ny, BoundaryCondition<double>{}, p);
  EXPECT_NEAR(w.hu * nx + w.hv * ny, -(q.hu * nx + q.hv * ny), 1e-15);
  EXPECT_NEAR(w.hv * nx - w.hu * ny, q.hv * nx - q.hu * ny, 1e-15);
  const CellPrimitive<double> in = boundary_primitive(q, nx, ny, {BoundaryKind::inflow, 1.5}, p);
  EXPECT_NEAR(in.hu * nx + in.hv * ny, -1.5, 1e-15);
  EXPECT_NEAR(in.hv * nx - in.hu * ny, 0.0, 1e-15);
  // A lake at rest against a wall of any direction stays at rest.
  const CellPrimitive<double> rest = cell_primitive(State<double>{2.0, 0.0, 0.0}, 0.5, p);
  const EdgeFluctuation<double> f = mesh_boundary_edge(rest, nx, ny, BoundaryCondition<double>{}, p);
  EXPECT_EQ(f.to_left.h, 0.0);
  EXPECT_EQ(f.to_left.hu, 0.0);
  EXPECT_EQ(f.to_left.hv, 0.0);
}

TEST(BoundaryState, AGridSideIsTheAxisAlignedCase) {
  // A grid's ghost state (a side's axis normal) has the values that a mesh
  // edge with the same unit normal gets, for every condition.
  const PhysicsParams<double> p{};
  const std::pair<Side, std::array<double, 2>> sides[] = {
      {Side::west, {-1.0, 0.0}}, {Side::east, {1.0, 0.0}}, {Side::south, {0.0, -1.0}}, {Side::north, {0.0, 1.0}}};
  const BoundaryCondition<double> conditions[] = {
      {}, {BoundaryKind::open, 0.0}, {BoundaryKind::inflow, 1.5}, {BoundaryKind::level, 2.25}};
  const State<double> states[] = {{2.0, 0.6, -0.4}, {0.0, 0.0, 0.0}, {1e-4, -3e-5, 2e-5}};
  for (const auto& [side, n] : sides) {
    for (const BoundaryCondition<double>& bc : conditions) {
      for (const State<double>& q : states) {
        const State<double> grid = ghost_state(q, 0.5, side, bc, p);
        const State<double> any = boundary_state(q, 0.5, UnitNormal<double>{n[0], n[1]}, bc, p);
        EXPECT_EQ(grid.h, any.h);
        EXPECT_EQ(grid.hu, any.hu);
        EXPECT_EQ(grid.hv, any.hv);
      }
    }
  }
}

} // namespace
