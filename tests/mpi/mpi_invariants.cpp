// SPDX-License-Identifier: MIT
// Properties of runs on several MPI ranks, launched by mpirun (tests/CMakeLists.txt
// runs it on 2, 3 and 4 ranks): a lake at rest with islands cut by the rank
// boundaries stays at rest, mass behind walls is conserved, and the gathered
// state is bit-identical to the one-rank executor run on rank 0, with rain,
// infiltration, a Manning map, sources, boundary segments and passive
// scalars too, whose volumes agree with one rank's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "shallows/exec/cpu_backend.hpp"
#include "shallows/exec/mpi/context.hpp"
#include "shallows/io/case.hpp"
#include "shallows/solver/simulation.hpp"
#include "support/problems.hpp"

namespace shallows {
namespace {

// The lake of S003-T1 with its islands and a third one in the middle of the
// domain, so that islands lie across the rank boundaries of 2x1, 3x1 and 2x2.
Problem lake_with_islands(Scheme scheme) {
  Problem p = test_support::lake_at_rest(true, Precision::double_precision, 60);
  for (index_t j = 0; j < p.grid.ny; ++j) {
    for (index_t i = 0; i < p.grid.nx; ++i) {
      const auto k = static_cast<std::size_t>(j * p.grid.nx + i);
      if (std::hypot(p.grid.x_center(i) - 0.5, p.grid.y_center(j) - 0.5) < 0.1) {
        p.z[k] = 0.05;
        p.h[k] = 0;
      }
    }
  }
  p.scheme = scheme;
  return p;
}

// The one-rank executor's run of n steps (on rank 0), computed by the first
// comparison that needs it: the executor takes neither halo_steps nor
// ranks_x, so every process grid and halo of a problem is compared with the
// same run.
struct OneRank {
  index_t n = -1;
  double t = 0;
  Fields state;
  ForcingVolumes volumes;
};

// Steps n on all ranks and returns the gathered state (on rank 0), after
// checking it against the one-rank executor on rank 0 (`one`: its run, made
// here where it is not yet), bit for bit, passive scalars included, and the
// forcing's volumes: the sources' bit for bit, the rain's and the
// infiltration's too with one rank per row (ranks_x = 1), else to round-off
// (a row's parts are summed apart).
Fields run_and_compare(const Problem& p, int halo_steps, index_t n, OneRank& one, int ranks_x = 0) {
  BackendOptions o;
  o.threads = 1;
  o.halo_steps = halo_steps;
  o.ranks_x = ranks_x;
  Simulation sim(p, o);
  sim.advance_steps(n);
  const Fields f = sim.state();
  const ForcingVolumes moved = sim.backend().forcing_volumes();
  if (mpi::rank() != 0) return f;
  const std::string where = "halo_steps " + std::to_string(halo_steps) + ", ranks_x " + std::to_string(ranks_x);
  if (one.n != n) {
    const std::unique_ptr<Backend> b = make_cpu_backend(p, o);
    double t = 0;
    for (index_t k = 0; k < n; ++k) t += b->step(t, p.t_end - t);
    one.n = n;
    one.t = t;
    b->read_state(one.state);
    one.volumes = b->forcing_volumes();
  }
  EXPECT_DOUBLE_EQ(one.t, sim.time());
  const Fields& ref = one.state;
  EXPECT_EQ(f.h.size(), ref.h.size());
  for (std::size_t c = 0; c < ref.h.size(); ++c) {
    if (f.h[c] != ref.h[c] || f.hu[c] != ref.hu[c] || f.hv[c] != ref.hv[c]) {
      ADD_FAILURE() << "cell " << c << " differs from one rank (" << where << ")";
      break;
    }
  }
  EXPECT_EQ(f.hc.size(), p.scalars.size());
  for (std::size_t s = 0; s < ref.hc.size() && s < f.hc.size(); ++s)
    EXPECT_TRUE(f.hc[s] == ref.hc[s]) << "scalar " << p.scalars[s].name << " differs from one rank (" << where << ")";
  const ForcingVolumes& want = one.volumes;
  EXPECT_EQ(moved.sources, want.sources) << where;
  if (ranks_x == 1) {
    EXPECT_EQ(moved.rain, want.rain) << where;
    EXPECT_EQ(moved.infiltration, want.infiltration) << where;
  } else {
    EXPECT_LE(std::abs(moved.rain - want.rain), 1e-13 * std::abs(want.rain)) << where;
    EXPECT_LE(std::abs(moved.infiltration - want.infiltration), 1e-13 * std::abs(want.infiltration)) << where;
  }
  return f;
}

void expect_at_rest(const Problem& p, const Fields& f) {
  if (mpi::rank() != 0) return;
  double worst_eta = 0, worst_q = 0;
  for (std::size_t c = 0; c < f.h.size(); ++c) {
    if (f.h[c] <= 0) continue;
    worst_eta = std::max(worst_eta, std::abs(f.h[c] + p.z[c]));
    worst_q = std::max({worst_q, std::abs(f.hu[c]), std::abs(f.hv[c])});
  }
  EXPECT_LE(worst_eta, 1e-12);
  EXPECT_LE(worst_q, 1e-12);
}

TEST(Mpi, lake_at_rest_with_islands_across_rank_boundaries_stays_at_rest_roe1) {
  const Problem p = lake_with_islands(Scheme::roe1);
  OneRank one;
  for (int k : {1, 4}) expect_at_rest(p, run_and_compare(p, k, 1000, one));
}

TEST(Mpi, lake_at_rest_with_islands_across_rank_boundaries_stays_at_rest_roe3) {
  const Problem p = lake_with_islands(Scheme::roe3);
  OneRank one;
  expect_at_rest(p, run_and_compare(p, 2, 100, one));
}

TEST(Mpi, mass_is_conserved_behind_walls) {
  // S000-T2 with walls all round: a dam break over a bump that leaves dry land.
  Problem p = io::load_case(std::string(SHALLOWS_SOURCE_DIR) + "/cases/s000-t2/case.toml", {}).problem;
  for (auto& bc : p.boundary) bc = {BoundaryKind::wall, 0.0};
  BackendOptions o;
  o.threads = 1;
  o.halo_steps = 3;
  Simulation sim(p, o);
  const double before = sim.volume();
  sim.advance_to(p.t_end);
  const double after = sim.volume();
  EXPECT_LE(std::abs(after - before) / before, 1e-12);
  OneRank one;
  run_and_compare(p, 3, 200, one);
}

// A catchment with everything the forcing has, laid so that the rank
// boundaries of 2x1, 1x2, 3x1, 1x3, 4x1, 1x4 and 2x2 cut through it: rain
// (a series times a per-cell scale, or radar frames), Green-Ampt or
// initial-and-constant infiltration with per-cell parameters, a Manning map,
// an inflow segment along the west side (a source over 16 cells), a point
// source and a sink, a level segment following a series on the south side,
// an open east side, and two passive scalars brought by all of them.
Problem catchment(Precision precision, bool radar) {
  const index_t nx = 40, ny = 36;
  Problem p = test_support::make_problem(
      nx, ny, 0, 40, 0, 36, [](double x, double y) { return 0.5 - 0.01 * x + 0.002 * std::abs(y - 18) +
                                                            (std::hypot(x - 20, y - 18) < 4 ? 0.3 : 0.0); },
      [](double x, double) { return x > 28 ? 0.45 : 0.0; });
  p.precision = precision;
  p.physics.n_manning = 0;
  const auto cells = static_cast<std::size_t>(p.grid.cells());
  Forcing& f = p.forcing;
  f.manning.resize(cells);
  f.infiltration.p0.resize(cells);
  for (index_t j = 0; j < ny; ++j) {
    for (index_t i = 0; i < nx; ++i) {
      const auto k = static_cast<std::size_t>(j * nx + i);
      f.manning[k] = i < 20 ? 0.05 : 0.025;
      f.infiltration.p0[k] = (j < 18 ? 2e-5 : 5e-6) * (radar ? 1000.0 : 1.0);
    }
  }
  if (radar) {
    f.infiltration.model = InfiltrationModel::initial_constant;
    f.infiltration.p1 = {4e-6};  // p0: the initial loss, 0.005 or 0.02 m
    f.rain.frame_times = {0.0, 8.0, 20.0};
    for (int frame = 0; frame < 3; ++frame) {
      for (std::size_t k = 0; k < cells; ++k) f.rain.frames.push_back(1e-4 * (1 + frame) * double(k % 7) / 7.0);
    }
  } else {
    f.infiltration.model = InfiltrationModel::green_ampt;
    f.infiltration.p1 = {0.1};
    f.infiltration.p2 = {0.3};
    f.rain.rate = {{0.0, 10.0, 1e6}, {2e-4, 5e-5, 5e-5}};
    for (std::size_t k = 0; k < cells; ++k) f.rain.scale.push_back(0.5 + double(k % nx) / double(nx));
  }
  VolumeSource inlet;
  inlet.name = "segment west 10-26";
  for (index_t j = 10; j < 26; ++j) inlet.cells.push_back(j * nx);
  inlet.discharge = {{0.0, 15.0, 1e6}, {0.2, 1.0, 1.0}};
  VolumeSource well{"source 'well'", {19 * nx + 21}, TimeSeries::constant(0.05)};
  VolumeSource drain{"source 'drain'", {17 * nx + 30}, TimeSeries::constant(-0.08)};
  f.sources = {inlet, well, drain};
  p.boundary = {BoundaryCondition<double>{BoundaryKind::wall, 0}, {BoundaryKind::open, 0},
                {BoundaryKind::wall, 0}, {BoundaryKind::wall, 0}};
  p.segments.push_back(
      test_support::segment(Side::south, 25, 40, BoundaryKind::level, 0.45, {{0.0, 30.0, 1e6}, {0.45, 0.5, 0.5}}));
  PassiveScalar salt = test_support::scalar("salt", {}, 0.1, {3.0, 1.0, 0.0});
  for (index_t j = 0; j < ny; ++j)
    for (index_t i = 0; i < nx; ++i) salt.c.push_back(i > 30 ? 2.0 : 0.5);
  salt.segments = {4.0};
  salt.side = {0.0, 1.5, 0.0, 0.0};
  p.scalars = {salt, test_support::scalar("dye", {0.0}, 0.0, {0.0, 10.0, 0.0})};
  p.scalars[1].segments = {0.0};
  return p;
}

TEST(Mpi, forcing_segments_and_scalars_are_identical_to_one_rank) {
  for (Precision precision : {Precision::double_precision, Precision::single_precision}) {
    const Problem p = catchment(precision, false);
    OneRank one;
    for (int k : {1, 3}) {
      run_and_compare(p, k, 400, one);
      run_and_compare(p, k, 400, one, 1);
    }
  }
}

TEST(Mpi, radar_rain_and_initial_loss_are_identical_to_one_rank) {
  const Problem p = catchment(Precision::double_precision, true);
  OneRank one;
  run_and_compare(p, 2, 400, one);
  const Fields f = run_and_compare(p, 2, 400, one, 1);
  // The run did rain, soak in and move the scalars (the comparison is not of still water).
  if (mpi::rank() == 0) {
    const double dye = *std::max_element(f.hc[1].begin(), f.hc[1].end());
    EXPECT_GT(dye, 0.0);
  }
}

} // namespace
} // namespace shallows

int main(int argc, char** argv) {
  const shallows::mpi::Session session(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 reports; every rank runs every test (the runs are collective).
  if (shallows::mpi::rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  if (!shallows::mpi::active()) {
    std::fprintf(stderr, "mpi_invariants: not launched by mpirun (one rank): nothing distributed was tested\n");
    return 1;
  }
  return failed;
}
