// SPDX-License-Identifier: MIT
// A mesh's boundary groups that follow a time series (Forcing::groups): each
// step takes the series' value at its start, the water through them is
// accounted, and a series of one value is the constant condition.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "shallows/solver/backend.hpp"
#include "shallows/solver/mass_balance.hpp"
#include "support/mesh_problems.hpp"

namespace shallows {
namespace group_series_tests {

using test_support::make_mesh_problem;

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

// A sloping channel 2 m x 1 m with water 0.2 m deep, an inflow through the
// west group and a level on the east group.
Problem channel(Precision precision) {
  RectangleMeshSpec spec;
  spec.x1 = 2;
  spec.nx = 40;
  spec.ny = 20;
  spec.cells = RectangleCells::mixed;
  spec.perturbation = 0.3;
  spec.shuffle = true;
  Problem p = make_mesh_problem(
      spec, [](double x, double) { return -0.02 * x; }, [](double, double) { return 0.2; },
      {{"west", {BoundaryKind::inflow, 0.05}}, {"east", {BoundaryKind::level, 0.2}}}, CellOrdering::rcm);
  p.precision = precision;
  p.physics.n_manning = 0.02;
  return p;
}

BackendOptions cpu() {
  BackendOptions o;
  o.threads = 2;
  return o;
}

std::size_t group(const Problem& p, const char* name) { return static_cast<std::size_t>(p.mesh->find_boundary(name)); }

TEST(MeshGroupSeries, OneValueIsTheConstantCondition) {
  for (Precision precision : {Precision::double_precision, Precision::single_precision}) {
    const Problem constant = channel(precision);
    Problem series = constant;
    series.forcing.groups.resize(series.mesh_boundary.size());
    series.forcing.groups[group(series, "west")] = TimeSeries::constant(0.05);
    series.forcing.groups[group(series, "east")] = {{0.0, 10.0}, {0.2, 0.2}};
    auto a = make_backend(constant, cpu());
    auto b = make_backend(series, cpu());
    const AdvanceResult ra = a->advance(0, 0.5, 1 << 30), rb = b->advance(0, 0.5, 1 << 30);
    EXPECT_EQ(ra.steps, rb.steps);
    Fields fa, fb;
    a->read_state(fa);
    b->read_state(fb);
    EXPECT_TRUE(same_bits(fa.h, fb.h) && same_bits(fa.hu, fb.hu) && same_bits(fa.hv, fb.hv));
    EXPECT_EQ(a->boundary_flow().in, b->boundary_flow().in);
  }
}

// A hydrograph through the west group and a falling level on the east: the
// run follows them (more water than with the first values held), and the
// water balance closes with the groups' account.
TEST(MeshGroupSeries, HydrographAndFallingLevelBalance) {
  Problem p = channel(Precision::double_precision);
  p.forcing.groups.resize(p.mesh_boundary.size());
  p.forcing.groups[group(p, "west")] = {{0.0, 0.3, 0.6, 2.0}, {0.05, 0.4, 0.1, 0.1}};
  p.forcing.groups[group(p, "east")] = {{0.0, 2.0}, {0.2, 0.1}};
  const Problem held = channel(Precision::double_precision);
  auto b = make_backend(p, cpu());
  auto h = make_backend(held, cpu());
  const double v0 = b->volume();
  b->advance(0, 1.0, 1 << 30);
  h->advance(0, 1.0, 1 << 30);
  const BoundaryFlow f = b->boundary_flow();
  // The water that came in through the west group: about the hydrograph's volume (q x 1 m width), which
  // exceeds the held 0.05 m^2/s x 1 s; the steps sample it at their starts.
  EXPECT_GT(f.in, 0.15);
  EXPECT_LT(f.in, 0.25);
  EXPECT_GT(f.in, 2 * h->boundary_flow().in);
  const double residual = b->volume() - v0 - (f.in - f.out) - b->positivity_volume();
  EXPECT_LT(std::abs(residual), 1e-12 * v0) << residual;
}

} // namespace
} // namespace shallows
