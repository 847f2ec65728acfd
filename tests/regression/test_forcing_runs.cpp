// SPDX-License-Identifier: MIT
// Runs with forcing on the CPU executors (roe1 and roe3): rain on a closed
// basin (a constant, a hyetograph, a raster, a stack of radar frames),
// Green-Ampt and initial + constant loss under ponding against their exact
// solutions, inflow hydrographs and sinks, a Manning map.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/mass_balance.hpp"
#include "shallows/solver/run.hpp"
#include "support/problems.hpp"
#include "support/rain_stack_file.hpp"

namespace shallows {
namespace {

using test_support::make_problem;

struct Variant {
  Scheme scheme;
  Precision precision;
  std::string name() const {
    return std::string(scheme == Scheme::roe1 ? "roe1" : "roe3") +
           (precision == Precision::double_precision ? "_double" : "_float");
  }
};

class ForcingRun : public ::testing::TestWithParam<Variant> {};

// A walled basin 40 x 30 cells of 5 m over a sloping bed with a dry corner
// and an inactive island; water at rest at eta = 1.
Problem basin(const Variant& v) {
  const auto z = [](double x, double y) {
    if (std::hypot(x - 120, y - 70) < 18) return std::numeric_limits<double>::quiet_NaN();
    return 0.004 * x + 0.002 * y;
  };
  Problem p = make_problem(40, 30, 0, 200, 0, 150, z, [](double x, double) { return x < 150 ? 1.0 : 0.0; });
  p.scheme = v.scheme;
  p.precision = v.precision;
  p.physics.n_manning = 0.02;
  p.t_end = 60;
  return p;
}

struct Result {
  double initial = 0, final = 0;
  ForcingVolumes moved;
  Fields state;
  std::vector<double> infiltrated;
  double positivity = 0;
};

Result run(const Problem& p, double t_end, int threads = 1) {
  BackendOptions o;
  o.kind = "cpu";
  o.threads = threads;
  auto b = make_backend(p, o);
  Result r;
  r.initial = b->volume();
  const AdvanceResult a = b->advance(0, t_end, 1000000);
  EXPECT_EQ(a.t, t_end);
  r.final = b->volume();
  r.moved = b->forcing_volumes();
  b->read_state(r.state);
  ForcingState state;
  b->read_forcing_state(state);
  r.infiltrated = state.infiltration;
  r.positivity = b->positivity_volume();
  return r;
}

double active_area(const Problem& p) {
  double n = 0;
  for (double z : p.z) n += std::isnan(z) ? 0 : 1;
  return n * p.grid.dx * p.grid.dy;
}

double tolerance(const Variant& v) { return v.precision == Precision::double_precision ? 1e-12 : 2e-5; }

TEST_P(ForcingRun, RainOnAClosedBasinIsStoredExactly) {
  Problem p = basin(GetParam());
  p.forcing.rain.rate = TimeSeries::constant(50.0 / 3.6e6);  // 50 mm/h
  const Result r = run(p, 60);
  const double expected = 50.0 / 3.6e6 * 60 * active_area(p);
  EXPECT_NEAR(r.moved.rain, expected, 1e-13 * expected);
  const double scale = std::max(r.initial, r.final);
  EXPECT_NEAR(r.final - r.initial - r.positivity, expected, tolerance(GetParam()) * scale);
}

TEST_P(ForcingRun, HyetographAndRainRasterDeliverTheirIntegral) {
  Problem p = basin(GetParam());
  p.forcing.rain.rate = TimeSeries{{0, 20, 40}, {0, 100 / 3.6e6, 10 / 3.6e6}};
  p.forcing.rain.scale.resize(p.z.size());
  double weighted = 0;
  for (std::size_t k = 0; k < p.z.size(); ++k) {
    p.forcing.rain.scale[k] = 0.5 + static_cast<double>(k % 7) / 7.0;
    if (!std::isnan(p.z[k])) weighted += p.forcing.rain.scale[k];
  }
  const Result r = run(p, 60);
  // 0..20: 1000/3.6e6 * ... triangle; 20..40 trapezoid; 40..60 constant 10 mm/h.
  const double depth = (0.5 * 100 * 20 + 0.5 * 110 * 20 + 10 * 20) / 3.6e6;
  const double expected = depth * weighted * p.grid.dx * p.grid.dy;
  EXPECT_NEAR(r.moved.rain, expected, 1e-12 * expected);
  EXPECT_NEAR(r.final - r.initial - r.positivity, expected, tolerance(GetParam()) * std::max(r.initial, r.final));
}

// Radar rainfall: three frames, step-wise in time and different in every
// cell, the first from before the start. The rain that fell is the exact sum
// over the frames of rate x cell area x the part of the run the frame holds,
// and the closed basin keeps it.
TEST_P(ForcingRun, RainStackDeliversItsStepWiseIntegral) {
  Problem p = basin(GetParam());
  Rain& rain = p.forcing.rain;
  rain.frame_times = {-30, 17.3, 41.1};
  const double holds[3] = {17.3, 41.1 - 17.3, 60 - 41.1};
  const std::size_t cells = p.z.size();
  rain.frames.resize(3 * cells);
  double expected = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    for (std::size_t c = 0; c < cells; ++c) {
      const double rate = (20.0 + 30.0 * double(k) + double(c % 11)) / 3.6e6;
      rain.frames[k * cells + c] = rate;
      if (!std::isnan(p.z[c])) expected += rate * holds[k];
    }
  }
  expected *= p.grid.dx * p.grid.dy;
  const Result r = run(p, 60);
  EXPECT_NEAR(r.moved.rain, expected, 1e-12 * expected);
  EXPECT_NEAR(r.final - r.initial - r.positivity, expected, tolerance(GetParam()) * std::max(r.initial, r.final));
}

// A stack of one uniform frame is a constant rate: the same bits.
TEST_P(ForcingRun, StackOfOneUniformFrameEqualsConstantRain) {
  Problem a = basin(GetParam());
  Problem b = a;
  a.forcing.rain.rate = TimeSeries::constant(40 / 3.6e6);
  b.forcing.rain.frame_times = {0};
  b.forcing.rain.frames.assign(b.z.size(), 40 / 3.6e6);
  const Result ra = run(a, 30), rb = run(b, 30);
  EXPECT_EQ(ra.state.h, rb.state.h);
  EXPECT_EQ(ra.state.hu, rb.state.hu);
  EXPECT_EQ(ra.moved.rain, rb.moved.rain);
}

// Deep ponded water on permeable soil: every cell's F(t) is the analytic
// Green-Ampt solution t = (F - S ln(1 + F / S)) / Ks.
TEST_P(ForcingRun, GreenAmptUnderPondingFollowsTheAnalyticSolution) {
  Problem p = make_problem(24, 18, 0, 120, 0, 90, [](double, double) { return 0.0; },
                           [](double, double) { return 2.0; });
  p.scheme = GetParam().scheme;
  p.precision = GetParam().precision;
  p.forcing.infiltration.model = InfiltrationModel::green_ampt;
  p.forcing.infiltration.p0 = {3e-5};
  p.forcing.infiltration.p1 = {0.2};
  p.forcing.infiltration.p2 = {0.35};
  const double t_end = 900;
  const Result r = run(p, t_end);
  const double S = 0.2 * 0.35;
  ASSERT_EQ(r.infiltrated.size(), p.z.size());
  for (double F : r.infiltrated) {
    ASSERT_NEAR((F - S * std::log1p(F / S)) / 3e-5, t_end, 1e-8 * t_end);
  }
  const double F = r.infiltrated[0];
  EXPECT_NEAR(r.moved.infiltration, F * active_area(p), 1e-12 * F * active_area(p));
  for (double h : r.state.h) EXPECT_NEAR(h, 2.0 - F, GetParam().precision == Precision::double_precision ? 1e-12 : 1e-6);
}

TEST_P(ForcingRun, InitialAndConstantLossIsExact) {
  Problem p = make_problem(16, 12, 0, 80, 0, 60, [](double, double) { return 0.0; },
                           [](double, double) { return 1.0; });
  p.scheme = GetParam().scheme;
  p.precision = GetParam().precision;
  p.forcing.infiltration.model = InfiltrationModel::initial_constant;
  p.forcing.infiltration.p0 = {0.015};
  p.forcing.infiltration.p1 = {1e-5};
  const Result r = run(p, 300);
  for (double F : r.infiltrated) ASSERT_NEAR(F, 0.015 + 1e-5 * 300, 1e-15);
  for (double h : r.state.h) EXPECT_NEAR(h, 1.0 - 0.018, GetParam().precision == Precision::double_precision ? 1e-14 : 1e-5);
}

// An inflow hydrograph along five cells of a walled side and a point sink:
// the basin gains exactly the hydrograph's integral less what the sink took.
TEST_P(ForcingRun, HydrographInflowAndSinkAreConserved) {
  Problem p = basin(GetParam());
  VolumeSource inflow;
  inflow.name = "segment west";
  for (index_t j = 10; j < 15; ++j) inflow.cells.push_back(j * p.grid.nx);
  inflow.discharge = TimeSeries{{0, 30, 60}, {0, 8, 3}};
  VolumeSource sink;
  sink.name = "sink";
  sink.cells = {5 * p.grid.nx + 20};
  sink.discharge = TimeSeries::constant(-0.05);
  p.forcing.sources = {inflow, sink};
  const Result r = run(p, 60);
  const double in = 0.5 * 8 * 30 + 0.5 * 11 * 30;
  EXPECT_NEAR(r.moved.sources, in - 0.05 * 60, 1e-12 * in);  // the sink cell keeps water throughout
  EXPECT_NEAR(r.final - r.initial - r.positivity, r.moved.sources, tolerance(GetParam()) * r.final);
}

TEST_P(ForcingRun, ASinkEmptiesItsCellAndNoMore) {
  Problem p = basin(GetParam());
  VolumeSource sink;
  sink.name = "pump";
  sink.cells = {3 * p.grid.nx + 30};  // in the shallow part near the dry corner
  sink.discharge = TimeSeries::constant(-1000.0);
  p.forcing.sources = {sink};
  const Result r = run(p, 30);
  for (double h : r.state.h) ASSERT_GE(h, 0.0);
  EXPECT_LT(r.moved.sources, 0);
  EXPECT_GT(r.moved.sources, -1000.0 * 30);  // limited by the water there
  EXPECT_NEAR(r.final - r.initial - r.positivity, r.moved.sources, tolerance(GetParam()) * r.initial);
}

TEST_P(ForcingRun, ResultsDoNotDependOnTheThreadCount) {
  Problem p = basin(GetParam());
  p.forcing.rain.rate = TimeSeries::constant(30 / 3.6e6);
  p.forcing.infiltration.model = InfiltrationModel::green_ampt;
  p.forcing.infiltration.p0 = {1e-6};
  p.forcing.infiltration.p1 = {0.1};
  p.forcing.infiltration.p2 = {0.3};
  const Result a = run(p, 20, 1), b = run(p, 20, 2);
  EXPECT_EQ(a.state.h, b.state.h);
  EXPECT_EQ(a.state.hu, b.state.hu);
  EXPECT_EQ(a.infiltrated, b.infiltrated);
  EXPECT_EQ(a.moved.rain, b.moved.rain);
  EXPECT_EQ(a.moved.infiltration, b.moved.infiltration);
}

INSTANTIATE_TEST_SUITE_P(Schemes, ForcingRun,
                         ::testing::Values(Variant{Scheme::roe1, Precision::double_precision},
                                           Variant{Scheme::roe1, Precision::single_precision},
                                           Variant{Scheme::roe3, Precision::double_precision}),
                         [](const auto& param_info) { return param_info.param.name(); });

// First order: a Manning map of one value gives the bits of the constant
// coefficient (the same friction, applied after the update either way).
TEST(ForcingManningMap, UniformMapEqualsTheConstant) {
  Problem a = basin({Scheme::roe1, Precision::double_precision});
  a.physics.n_manning = 0.035;
  Problem b = a;
  b.physics.n_manning = 0;
  b.forcing.manning.assign(b.z.size(), 0.035);
  const Result ra = run(a, 30), rb = run(b, 30);
  EXPECT_EQ(ra.state.h, rb.state.h);
  EXPECT_EQ(ra.state.hu, rb.state.hu);
  EXPECT_EQ(ra.state.hv, rb.state.hv);
}

// A rough half (where the water spreads into the dry corner) slows the flow
// there: the map is applied cell by cell.
TEST(ForcingManningMap, RougherCellsFlowSlower) {
  Problem smooth = basin({Scheme::roe1, Precision::double_precision});
  smooth.physics.n_manning = 0;
  Problem rough = smooth;
  rough.forcing.manning.assign(rough.z.size(), 0.0);
  for (index_t j = 0; j < rough.grid.ny; ++j)
    for (index_t i = rough.grid.nx / 2; i < rough.grid.nx; ++i)
      rough.forcing.manning[static_cast<std::size_t>(j * rough.grid.nx + i)] = 0.1;
  const Result rs = run(smooth, 30), rr = run(rough, 30);
  double ks = 0, kr = 0;
  for (index_t j = 0; j < smooth.grid.ny; ++j) {
    for (index_t i = smooth.grid.nx / 2; i < smooth.grid.nx; ++i) {
      const auto k = static_cast<std::size_t>(j * smooth.grid.nx + i);
      ks += std::abs(rs.state.hu[k]);
      kr += std::abs(rr.state.hu[k]);
    }
  }
  EXPECT_LT(kr, 0.8 * ks);
}

// Water through open sides: an inflow west, a level east, an open north over
// a bed with an island; the sides' account closes the balance to round-off,
// first and third order, in both precisions, with rain and a source on top.
TEST(BoundaryFlow, OpenSidesCloseTheBalance) {
  for (const Variant v : {Variant{Scheme::roe1, Precision::double_precision},
                          Variant{Scheme::roe1, Precision::single_precision},
                          Variant{Scheme::roe3, Precision::double_precision},
                          Variant{Scheme::roe3, Precision::single_precision}}) {
    const Precision precision = v.precision;
    Problem p = basin(v);
    p.bc(Side::west) = {BoundaryKind::inflow, 0.3};
    p.bc(Side::east) = {BoundaryKind::level, 0.5};
    p.bc(Side::north) = {BoundaryKind::open, 0.0};
    p.forcing.rain.rate = TimeSeries::constant(20 / 3.6e6);
    VolumeSource well;
    well.name = "well";
    well.cells = {12 * p.grid.nx + 8};
    well.discharge = TimeSeries::constant(0.2);
    p.forcing.sources = {well};
    BackendOptions o;
    o.kind = "cpu";
    o.threads = 1;
    auto b = make_backend(p, o);
    const double v0 = b->volume();
    b->advance(0, 40, 1000000);
    const BoundaryFlow sides = b->boundary_flow();
    ASSERT_TRUE(sides.kept());
    EXPECT_GT(sides.in, 0.0);
    EXPECT_GT(sides.out, 0.0);
    const MassBalance mb = mass_balance(p, v0, b->volume(), b->positivity_volume(), b->forcing_volumes(), sides);
    EXPECT_FALSE(mb.closed);
    EXPECT_TRUE(mb.checked);
    EXPECT_LT(std::abs(mb.relative_residual), precision == Precision::double_precision ? 1e-13 : 1e-5)
        << v.name() << ": " << mb.relative_residual;
  }
}

// A stage hydrograph on the west side of a walled channel: the level rises
// and falls slowly enough for the channel to follow it, and the water at the
// far end stands at eta(t).
TEST(BoundarySeries, LevelSideFollowsItsStageHydrograph) {
  for (Scheme scheme : {Scheme::roe1, Scheme::roe3}) {
    Problem p = make_problem(40, 2, 0, 200, 0, 10, [](double, double) { return 0.0; },
                             [](double, double) { return 1.0; });
    p.scheme = scheme;
    p.bc(Side::west) = {BoundaryKind::level, 1.0};
    p.physics.n_manning = 0.03;  // damps the seiche (period 2 L / sqrt(g h) = 120 s) the changes start
    p.forcing.boundary[static_cast<int>(Side::west)] = TimeSeries{{0, 3000, 6000}, {1.0, 1.3, 1.2}};
    const Result r = run(p, 6000, 1);
    // Quasi-static: both ends within 5 mm of the stage.
    EXPECT_NEAR(r.state.h[39], 1.2, 0.005) << (scheme == Scheme::roe1 ? "roe1" : "roe3");
    EXPECT_NEAR(r.state.h[0], 1.2, 0.005);
  }
}

// A series that holds one value gives the bits of the constant condition.
TEST(BoundarySeries, ConstantSeriesEqualsTheConstantCondition) {
  Problem a = make_problem(30, 20, 0, 150, 0, 100, [](double x, double) { return 0.002 * x; },
                           [](double, double) { return 0.8; });
  a.bc(Side::west) = {BoundaryKind::inflow, 0.4};
  a.bc(Side::east) = {BoundaryKind::level, 0.7};
  Problem b = a;
  b.forcing.boundary[static_cast<int>(Side::west)] = TimeSeries{{0, 100}, {0.4, 0.4}};
  b.forcing.boundary[static_cast<int>(Side::east)] = TimeSeries::constant(0.7);
  const Result ra = run(a, 40), rb = run(b, 40);
  EXPECT_EQ(ra.state.h, rb.state.h);
  EXPECT_EQ(ra.state.hu, rb.state.hu);
}

#if defined(SHALLOWS_HAVE_NETCDF)
// Radar rainfall end to end: a case whose rain is a NetCDF stack (times in
// minutes since a date, the run's start; rows north first; the first frame
// before the start), run through run_case on a walled basin. The summary's
// rain volume is the stack's step-wise integral and the mass balance holds.
TEST(ForcingCase, RadarStackRunDeliversItsIntegralAndBalances) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "shallows_forcing_runs_radar";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  test_support::StackFile stack;
  stack.x.clear();
  stack.y.clear();
  for (int i = 0; i < 20; ++i) stack.x.push_back(2.5 + 5 * i);
  for (int j = 14; j >= 0; --j) stack.y.push_back(2.5 + 5 * j);
  stack.times = {-2, 0.5, 1.2};
  stack.time_units = "minutes since 2024-06-01 12:00:00";
  const auto rate = [](std::size_t k, std::size_t c, std::size_t r) {
    return static_cast<float>(10 + 20 * k + c + 2 * r);  // mm/h
  };
  stack.value = rate;
  test_support::write_stack(dir / "radar.nc", stack);
  const std::string text = R"(
[domain]
nx = 20
ny = 15
x = [0, 100]
y = [0, 75]
[bathymetry]
z = "0.004 * x + 0.002 * y"
[initial]
eta = 0.3
[time]
end = 90
output_every = 90
[output]
dir = ")" + (dir / "out").string() + R"("
format = []
[rain]
rate = { file = "radar.nc", variable = "rr" }
)";
  const io::Case c = io::parse_case(text, (dir / "case.toml").string(), dir);
  RunOptions o;
  o.backend.kind = "cpu";
  o.backend.threads = 1;
  o.progress = false;
  o.quiet = true;
  const RunSummary r = run_case(c, o);
  // Frame 0 holds on [0, 30 s), frame 1 on [30, 72 s), frame 2 on [72, 90 s].
  const double holds[3] = {30, 42, 18};
  double expected = 0;
  for (std::size_t k = 0; k < 3; ++k)
    for (std::size_t row = 0; row < 15; ++row)
      for (std::size_t col = 0; col < 20; ++col) expected += rate(k, col, row) / 3.6e6 * holds[k] * 25;
  EXPECT_NEAR(r.forcing.rain, expected, 1e-12 * expected);
  EXPECT_TRUE(r.mass_balance.checked);
  EXPECT_TRUE(r.mass_balance.ok) << r.mass_balance.relative_residual;
  std::filesystem::remove_all(dir);
}
#endif

}  // namespace
}  // namespace shallows
