// SPDX-License-Identifier: MIT
// Forcing (rain, infiltration, a Manning map, volume sources) on the CUDA
// grid executors, first and third order: the rain's account on a closed
// basin, agreement with the CPU executor with everything on at once (and
// with rain from a stack of radar frames), the batched advance against
// single steps, the same bits run after run, a restart through
// read_forcing_state / load_forcing_state, float runs; in first order the
// lagged kernel forces the cells itself, the sources run after it, and it
// gives the plain kernels' bits. Every test skips
// where no CUDA device is present; problems are built by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "shallows/exec/cuda_backend.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/simulation.hpp"
#include "shallows/solver/time_step.hpp"
#include "support/gpu.hpp"
#include "support/measures.hpp"
#include "support/problems.hpp"

namespace {

using namespace shallows;
using test_support::rel_l1;

const char* scheme_name(Scheme s) { return s == Scheme::roe3 ? "roe3" : "roe1"; }

BackendOptions options(const std::string& kind) {
  BackendOptions o;
  o.kind = kind;
  o.threads = 2;
  o.track_maxima = false;
  return o;
}

void walls(Problem& p) {
  for (Side s : {Side::west, Side::east, Side::south, Side::north}) p.bc(s) = {BoundaryKind::wall, 0};
}

index_t cell(const Problem& p, index_t i, index_t j) { return j * p.grid.nx + i; }

// |a - b| relative to |b| (absolute where b is 0).
double rel(double a, double b) { return b != 0 ? std::abs(a - b) / std::abs(b) : std::abs(a); }

// A closed bowl, wet in the middle and dry on the rim, under a constant rain.
Problem rain_basin(Scheme scheme, double rate) {
  Problem p = test_support::make_problem(
      37, 29, 0, 37, 0, 29,
      [](double x, double y) { return -1 + 0.002 * ((x - 18.5) * (x - 18.5) + (y - 14.5) * (y - 14.5)); },
      [](double, double) { return -0.5; });
  walls(p);
  p.scheme = scheme;
  p.precision = Precision::double_precision;
  p.forcing.rain.rate = TimeSeries::constant(rate);
  return p;
}

// Everything at once on an odd grid, walls all round: a dam break on a slope
// whose upper part is dry, an island of inactive cells, rain from a series
// scaled per cell, infiltration (Green-Ampt with Ks per cell, or initial +
// constant loss), a Manning map, a point source, a point sink, a line source
// of 5 cells along the west wall and, with Green-Ampt, a second point source
// on one of the line's cells (a later source sees the earlier one's water).
// sources = false: the cell forcing alone (the lagged kernel's in first order).
Problem everything(Scheme scheme, Precision precision, InfiltrationModel model, bool sources = true) {
  Problem p = test_support::make_problem(
      49, 37, 0, 24.5, 0, 18.5,
      [](double x, double y) {
        if (x > 10 && x < 11.5 && y > 8 && y < 10.5) return std::nan("");
        return -0.4 + 0.03 * x + 0.05 * std::sin(0.7 * y);
      },
      [](double x, double) { return x < 6 ? 0.5 : 0.1; });
  walls(p);
  p.scheme = scheme;
  p.precision = precision;
  p.cfl = 0.9;
  const auto n = static_cast<std::size_t>(p.grid.cells());
  Forcing& f = p.forcing;
  f.rain.rate = {{0.0, 2.0, 5.0, 8.0}, {0.0, 2e-3, 1e-3, 0.0}};
  f.rain.scale.resize(n);
  f.manning.resize(n);
  for (index_t j = 0; j < p.grid.ny; ++j) {
    for (index_t i = 0; i < p.grid.nx; ++i) {
      const auto k = static_cast<std::size_t>(cell(p, i, j));
      f.rain.scale[k] = 0.5 + p.grid.x_center(i) / 24.5;
      f.manning[k] = 0.02 + 0.01 * p.grid.y_center(j) / 18.5;
    }
  }
  p.physics.n_manning = 0;  // the map's friction is the forcing's
  f.infiltration.model = model;
  if (model == InfiltrationModel::green_ampt) {
    f.infiltration.p0.resize(n);
    for (std::size_t k = 0; k < n; ++k) f.infiltration.p0[k] = 2e-4 * (1 + 0.5 * std::sin(0.37 * double(k)));
    f.infiltration.p1 = {0.1};
    f.infiltration.p2 = {0.3};
  } else {
    f.infiltration.p0 = {0.002};
    f.infiltration.p1 = {2e-4};
  }
  if (!sources) return p;
  f.sources.push_back({"point", {cell(p, 24, 24)}, {{0.0, 3.0}, {0.02, 0.05}}});
  f.sources.push_back({"sink", {cell(p, 14, 5)}, TimeSeries::constant(-0.03)});
  VolumeSource line{"segment west 15-19", {}, TimeSeries::constant(0.1)};
  for (index_t j = 15; j < 20; ++j) line.cells.push_back(cell(p, 0, j));
  f.sources.push_back(line);
  if (model == InfiltrationModel::green_ampt) {
    f.sources.push_back({"on the line", {cell(p, 0, 17)}, TimeSeries::constant(0.02)});
  }
  return p;
}

// everything()'s west side a level and its north side an inflow, each
// following a series.
Problem with_side_series(Problem p) {
  p.bc(Side::west) = {BoundaryKind::level, 0.1};
  p.bc(Side::north) = {BoundaryKind::inflow, 0.0};
  p.forcing.boundary[static_cast<int>(Side::west)] = TimeSeries{{0, 3, 6}, {0.1, 0.35, 0.2}};
  p.forcing.boundary[static_cast<int>(Side::north)] = TimeSeries{{0, 2, 6}, {0.0, 0.05, 0.02}};
  return p;
}

struct Outcome {
  double t = 0;
  index_t steps = 0;
  Fields state;
  std::vector<double> infiltration;
  ForcingVolumes moved;
  BoundaryFlow sides;
  double volume0 = 0, volume = 0, positivity = 0;
};

Outcome run(const Problem& p, const std::string& kind, double t_end) {
  Simulation sim(p, options(kind));
  Outcome r;
  r.volume0 = sim.volume();
  sim.advance_to(t_end);
  r.t = sim.time();
  r.steps = sim.steps();
  r.state = sim.state();
  ForcingState state;
  sim.backend().read_forcing_state(state);
  r.infiltration = state.infiltration;
  r.moved = sim.backend().forcing_volumes();
  r.sides = sim.backend().boundary_flow();
  r.volume = sim.volume();
  r.positivity = sim.backend().positivity_volume();
  return r;
}

// Behind walls the volume changes by what the forcing and the depth clamps moved.
void expect_balance(const Outcome& r, double tol, const std::string& what) {
  const double expected = r.volume0 + r.moved.rain - r.moved.infiltration + r.moved.sources + r.positivity;
  std::printf("  %s: volume %.6e, balance off by %.2e relative\n", what.c_str(), r.volume, rel(r.volume, expected));
  EXPECT_LE(rel(r.volume, expected), tol) << what;
}

// Rain on a closed basin: the volume grows by exactly what forcing_volumes()
// says fell, which is rate x area x time.
TEST(CudaForcing, RainOnClosedBasinAccountsForEveryDrop) {
  SHALLOWS_REQUIRE_GPU();
  for (Scheme scheme : {Scheme::roe1, Scheme::roe3}) {
    const double rate = 1e-4, t_end = 20;
    const Problem p = rain_basin(scheme, rate);
    const Outcome r = run(p, "cuda", t_end);
    const double area = static_cast<double>(p.grid.cells()) * p.grid.dx * p.grid.dy;
    const double gained = r.volume - r.volume0 - r.positivity;
    std::printf("  %s: %lld steps, rain %.15e m^3, gained %.15e, rate x area x t %.15e\n", scheme_name(scheme),
                static_cast<long long>(r.steps), r.moved.rain, gained, rate * area * t_end);
    EXPECT_EQ(r.t, t_end) << scheme_name(scheme);
    EXPECT_LE(rel(gained, r.moved.rain), 1e-12) << scheme_name(scheme);
    EXPECT_LE(rel(r.moved.rain, rate * area * t_end), 1e-12) << scheme_name(scheme);
    EXPECT_EQ(r.moved.infiltration, 0.0);
    EXPECT_EQ(r.moved.sources, 0.0);
    EXPECT_TRUE(r.infiltration.empty());
  }
}

// A bowl that starts dry under rain: the first step is the dry bound
// (time_step.hpp), not the whole run, and the GPU steps as the CPU does.
TEST(CudaForcing, DryStartStepsAsTheCpu) {
  SHALLOWS_REQUIRE_GPU();
  for (Scheme scheme : {Scheme::roe1, Scheme::roe3}) {
    Problem p = rain_basin(scheme, 1e-3);
    p.h.assign(p.h.size(), 0.0);
    p.hu.assign(p.hu.size(), 0.0);
    p.hv.assign(p.hv.size(), 0.0);
    auto gpu = make_backend(p, options("cuda"));
    EXPECT_EQ(gpu->step(0.0, std::numeric_limits<double>::infinity()), dry_time_step(p)) << scheme_name(scheme);
    const Outcome c = run(p, "cpu", 30), g = run(p, "cuda", 30);
    EXPECT_GT(g.steps, 10) << scheme_name(scheme);
    EXPECT_EQ(g.steps, c.steps) << scheme_name(scheme);
    EXPECT_LE(rel_l1(g.state.h, c.state.h), scheme == Scheme::roe1 ? 0.0 : 1e-12) << scheme_name(scheme);
  }
}

// The CPU executor and the GPU agree to round-off with everything on: state,
// each cell's infiltration, and the volumes moved; both balance their water.
// First order runs the lagged kernel.
TEST(CudaForcing, AgreesWithCpuWithEverythingOn) {
  SHALLOWS_REQUIRE_GPU();
  for (Scheme scheme : {Scheme::roe1, Scheme::roe3}) {
    for (InfiltrationModel model : {InfiltrationModel::green_ampt, InfiltrationModel::initial_constant}) {
     for (bool sources : {true, false}) {
      const std::string what = std::string(scheme_name(scheme)) +
                               (model == InfiltrationModel::green_ampt ? ", Green-Ampt" : ", initial + constant") +
                               (sources ? "" : ", no sources");
      const Problem p = everything(scheme, Precision::double_precision, model, sources);
      const double t_end = 6;
      const Outcome cpu = run(p, "cpu", t_end), gpu = run(p, "cuda", t_end);
      const double dh = rel_l1(gpu.state.h, cpu.state.h), dhu = rel_l1(gpu.state.hu, cpu.state.hu),
                   dhv = rel_l1(gpu.state.hv, cpu.state.hv);
      const double df = rel_l1(gpu.infiltration, cpu.infiltration);
      std::printf("  %s: %lld / %lld steps, rel L1 h %.2e hu %.2e hv %.2e F %.2e\n", what.c_str(),
                  static_cast<long long>(gpu.steps), static_cast<long long>(cpu.steps), dh, dhu, dhv, df);
      std::printf("    rain %.6e / %.6e, infiltration %.6e / %.6e, sources %.6e / %.6e m^3\n", gpu.moved.rain,
                  cpu.moved.rain, gpu.moved.infiltration, cpu.moved.infiltration, gpu.moved.sources,
                  cpu.moved.sources);
      EXPECT_EQ(gpu.t, cpu.t) << what;
      EXPECT_LE(dh, 1e-12) << what;
      EXPECT_LE(dhu, 1e-12) << what;
      EXPECT_LE(dhv, 1e-12) << what;
      ASSERT_EQ(gpu.infiltration.size(), static_cast<std::size_t>(p.grid.cells())) << what;
      ASSERT_EQ(cpu.infiltration.size(), gpu.infiltration.size()) << what;
      EXPECT_LE(df, 1e-12) << what;
      EXPECT_LE(rel(gpu.moved.rain, cpu.moved.rain), 1e-12) << what;
      EXPECT_LE(rel(gpu.moved.infiltration, cpu.moved.infiltration), 1e-12) << what;
      EXPECT_LE(rel(gpu.moved.sources, cpu.moved.sources), 1e-12) << what;
      // Something happened: rain fell, the soil took some, the sources ran.
      EXPECT_GT(gpu.moved.rain, 0.0) << what;
      EXPECT_GT(gpu.moved.infiltration, 0.0) << what;
      if (sources) {
        EXPECT_GT(gpu.moved.sources, 0.0) << what;
      }
      EXPECT_GT(rel_l1(gpu.state.h, p.h), 1e-3) << what;
      expect_balance(gpu, 1e-12, "gpu " + what);
     }
    }
  }
}

// The rain of p from a stack of four frames, step-wise and different in
// every cell (the first from before the start, one change inside a step);
// returns the volume that falls on active cells by t_end (>= 4.41 s).
double rain_from_stack(Problem& p, double t_end) {
  Rain& rain = p.forcing.rain;
  rain.rate = {};
  rain.scale = {};
  rain.frame_times = {-1.0, 1.37, 2.9, 4.41};
  const double holds[4] = {1.37, 2.9 - 1.37, 4.41 - 2.9, t_end - 4.41};
  const auto cells = static_cast<std::size_t>(p.grid.cells());
  rain.frames.resize(4 * cells);
  double fallen = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    for (std::size_t c = 0; c < cells; ++c) {
      const double rate = 1e-3 * (1 + 0.5 * std::sin(0.11 * double(c) + double(k)));
      rain.frames[k * cells + c] = rate;
      if (!std::isnan(p.z[c])) fallen += rate * holds[k];
    }
  }
  return fallen * p.grid.dx * p.grid.dy;
}

// Radar rainfall on the GPU: the rain of everything() from a stack of four
// frames, step-wise and different in every cell (the first from before the
// start, one change inside a step), agrees with the CPU executor to
// round-off, the volumes included; the rain that fell is the stack's exact
// step-wise integral. First order runs the lagged kernel, which sums each
// frame's rates per row once.
TEST(CudaForcing, RainStackAgreesWithCpu) {
  SHALLOWS_REQUIRE_GPU();
  for (Scheme scheme : {Scheme::roe1, Scheme::roe3}) {
   for (bool sources : {true, false}) {
    Problem p = everything(scheme, Precision::double_precision, InfiltrationModel::green_ampt, sources);
    const double t_end = 6;
    const double fallen = rain_from_stack(p, t_end);
    const Outcome cpu = run(p, "cpu", t_end), gpu = run(p, "cuda", t_end);
    const double dh = rel_l1(gpu.state.h, cpu.state.h), dhu = rel_l1(gpu.state.hu, cpu.state.hu),
                 df = rel_l1(gpu.infiltration, cpu.infiltration);
    std::printf("  %s: %lld / %lld steps, rel L1 h %.2e hu %.2e F %.2e, rain %.15e / %.15e, exact %.15e m^3\n",
                scheme_name(scheme), static_cast<long long>(gpu.steps), static_cast<long long>(cpu.steps), dh, dhu,
                df, gpu.moved.rain, cpu.moved.rain, fallen);
    EXPECT_EQ(gpu.t, cpu.t) << scheme_name(scheme);
    EXPECT_LE(dh, 1e-12) << scheme_name(scheme);
    EXPECT_LE(dhu, 1e-12) << scheme_name(scheme);
    EXPECT_LE(df, 1e-12) << scheme_name(scheme);
    EXPECT_LE(rel(gpu.moved.rain, cpu.moved.rain), 1e-12) << scheme_name(scheme);
    EXPECT_LE(rel(gpu.moved.infiltration, cpu.moved.infiltration), 1e-12) << scheme_name(scheme);
    EXPECT_LE(rel(gpu.moved.rain, fallen), 1e-12) << scheme_name(scheme);
    expect_balance(gpu, 1e-12, std::string("gpu stack ") + scheme_name(scheme));
   }
  }
}

// Sides that follow time series (a stage hydrograph west, an inflow
// discharge south): the GPU takes each step's value at its start, as the CPU
// does, and the two agree to round-off, first and third order.
TEST(CudaForcing, BoundaryTimeSeriesAgreeWithCpu) {
  SHALLOWS_REQUIRE_GPU();
  for (Scheme scheme : {Scheme::roe1, Scheme::roe3}) {
    Problem p = rain_basin(scheme, 0.0);
    p.forcing.rain = {};
    p.bc(Side::west) = {BoundaryKind::level, 1.0};
    p.bc(Side::south) = {BoundaryKind::inflow, 0.0};
    p.forcing.boundary[static_cast<int>(Side::west)] = TimeSeries{{0, 2, 6}, {1.0, 1.4, 0.9}};
    p.forcing.boundary[static_cast<int>(Side::south)] = TimeSeries{{0, 3, 6}, {0.0, 0.5, 0.1}};
    const Outcome cpu = run(p, "cpu", 6), gpu = run(p, "cuda", 6);
    const double dh = rel_l1(gpu.state.h, cpu.state.h), dhu = rel_l1(gpu.state.hu, cpu.state.hu);
    std::printf("  %s: %lld / %lld steps, rel L1 h %.2e hu %.2e\n", scheme_name(scheme),
                static_cast<long long>(gpu.steps), static_cast<long long>(cpu.steps), dh, dhu);
    EXPECT_EQ(gpu.steps, cpu.steps) << scheme_name(scheme);
    EXPECT_LE(dh, 1e-12) << scheme_name(scheme);
    EXPECT_LE(dhu, 1e-12) << scheme_name(scheme);
    EXPECT_GT(rel_l1(gpu.state.h, p.h), 1e-3) << scheme_name(scheme);  // the boundaries moved the water
    // Both account for the water through the sides (summed in another order on the GPU), and the balance
    // closes with it.
    ASSERT_TRUE(gpu.sides.kept() && cpu.sides.kept()) << scheme_name(scheme);
    std::printf("    sides: in %.15e / %.15e, out %.15e / %.15e m^3\n", gpu.sides.in, cpu.sides.in, gpu.sides.out,
                cpu.sides.out);
    EXPECT_GT(gpu.sides.in, 0.0) << scheme_name(scheme);
    EXPECT_LE(rel(gpu.sides.in, cpu.sides.in), 1e-12) << scheme_name(scheme);
    EXPECT_LE(std::abs(gpu.sides.out - cpu.sides.out), 1e-12 * gpu.sides.in) << scheme_name(scheme);
    for (const Outcome* r : {&gpu, &cpu}) {
      const double expected = r->volume0 + r->positivity + r->sides.in - r->sides.out;
      EXPECT_LE(rel(r->volume, expected), 1e-12) << scheme_name(scheme) << (r == &gpu ? " gpu" : " cpu");
    }
  }
}

// Forcing with t and dt on the device (batched advance) takes the same steps,
// to the bit, as steps the host launches one by one, with sides that follow
// a series too; and a second run gives the same bits, the volumes included.
TEST(CudaForcing, BatchedAdvanceEqualsSingleStepsAndRepeats) {
  SHALLOWS_REQUIRE_GPU();
  for (Scheme scheme : {Scheme::roe1, Scheme::roe3}) {
   for (int variant = 0; variant < 3; ++variant) {
    const bool sources = variant != 1;
    Problem p = everything(scheme, Precision::double_precision, InfiltrationModel::green_ampt, sources);
    if (variant == 2) p = with_side_series(p);
    const double t_end = 2.5;
    auto batched = make_backend(p, options("cuda"));
    auto again = make_backend(p, options("cuda"));
    auto stepped = make_backend(p, options("cuda"));
    const AdvanceResult r = batched->advance(0.0, t_end, 1 << 30);
    again->advance(0.0, t_end, 1 << 30);
    double t = 0;
    index_t steps = 0;
    while (t < t_end) {
      const double remaining = t_end - t;
      const double dt = stepped->step(t, remaining);
      t = dt >= remaining ? t_end : t + dt;
      ++steps;
    }
    EXPECT_EQ(r.t, t_end) << scheme_name(scheme);
    EXPECT_EQ(r.steps, steps) << scheme_name(scheme);
    Fields fb, fa, fs;
    batched->read_state(fb);
    again->read_state(fa);
    stepped->read_state(fs);
    EXPECT_EQ(fb.h, fs.h) << scheme_name(scheme);
    EXPECT_EQ(fb.hu, fs.hu) << scheme_name(scheme);
    EXPECT_EQ(fb.hv, fs.hv) << scheme_name(scheme);
    EXPECT_EQ(fb.h, fa.h) << scheme_name(scheme);
    // The infiltration and every account, bit for bit.
    ForcingState sb, sa, ss;
    batched->read_forcing_state(sb);
    again->read_forcing_state(sa);
    stepped->read_forcing_state(ss);
    EXPECT_EQ(sb.infiltration, ss.infiltration) << scheme_name(scheme);
    EXPECT_EQ(sb.rain_rows, ss.rain_rows) << scheme_name(scheme);
    EXPECT_EQ(sb.infiltration_rows, ss.infiltration_rows) << scheme_name(scheme);
    EXPECT_EQ(sb.sources, ss.sources) << scheme_name(scheme);
    EXPECT_EQ(sb.infiltration, sa.infiltration) << scheme_name(scheme);
    EXPECT_EQ(sb.rain_rows, sa.rain_rows) << scheme_name(scheme);
    EXPECT_EQ(sb.infiltration_rows, sa.infiltration_rows) << scheme_name(scheme);
    EXPECT_EQ(sb.sources, sa.sources) << scheme_name(scheme);
    EXPECT_GT(std::count_if(sb.infiltration.begin(), sb.infiltration.end(), [](double F) { return F > 0; }), 0);
   }
  }
}

// A restart: the state and the forcing state (each cell's infiltration, the
// per-row and per-source accounts) read at t and put into a new executor give
// the run that did not stop, to the bit.
TEST(CudaForcing, RestartGoesOnAsTheRunThatDidNotStop) {
  SHALLOWS_REQUIRE_GPU();
  for (Scheme scheme : {Scheme::roe1, Scheme::roe3}) {
   for (int variant = 0; variant < 3; ++variant) {
    const bool sources = variant != 1;
    Problem p = everything(scheme, Precision::double_precision, InfiltrationModel::green_ampt, sources);
    if (variant == 2) p = with_side_series(p);  // the restarted rhs takes the series at t = 2, not 0
    auto through = make_backend(p, options("cuda"));
    through->advance(0.0, 2.0, 1 << 30);
    Fields state;
    through->read_state(state);
    ForcingState forcing;
    through->read_forcing_state(forcing);
    EXPECT_EQ(forcing.infiltration.size(), static_cast<std::size_t>(p.grid.cells()));
    EXPECT_EQ(forcing.rain_rows.size(), static_cast<std::size_t>(p.grid.ny));
    EXPECT_EQ(forcing.infiltration_rows.size(), static_cast<std::size_t>(p.grid.ny));
    EXPECT_EQ(forcing.sources.size(), p.forcing.sources.size());
    through->advance(2.0, 4.0, 1 << 30);

    auto restarted = make_backend(p, options("cuda"));
    restarted->load_state(state);
    restarted->load_forcing_state(forcing);
    ForcingState back;
    restarted->read_forcing_state(back);
    EXPECT_EQ(back.infiltration, forcing.infiltration);
    EXPECT_EQ(back.rain_rows, forcing.rain_rows);
    EXPECT_EQ(back.infiltration_rows, forcing.infiltration_rows);
    EXPECT_EQ(back.sources, forcing.sources);
    restarted->advance(2.0, 4.0, 1 << 30);

    Fields a, b;
    through->read_state(a);
    restarted->read_state(b);
    EXPECT_EQ(a.h, b.h) << scheme_name(scheme);
    EXPECT_EQ(a.hu, b.hu) << scheme_name(scheme);
    EXPECT_EQ(a.hv, b.hv) << scheme_name(scheme);
    ForcingState fa, fb;
    through->read_forcing_state(fa);
    restarted->read_forcing_state(fb);
    EXPECT_EQ(fa.infiltration, fb.infiltration) << scheme_name(scheme);
    const ForcingVolumes va = through->forcing_volumes(), vb = restarted->forcing_volumes();
    EXPECT_EQ(va.rain, vb.rain) << scheme_name(scheme);
    EXPECT_EQ(va.infiltration, vb.infiltration) << scheme_name(scheme);
    EXPECT_EQ(va.sources, vb.sources) << scheme_name(scheme);
    // A state of the wrong size is refused.
    forcing.rain_rows.pop_back();
    EXPECT_THROW(restarted->load_forcing_state(forcing), std::invalid_argument) << scheme_name(scheme);
   }
  }
}

// Float runs with forcing end with finite, non-negative depths, and the
// account balances to float round-off.
TEST(CudaForcing, FloatRunsStayFiniteAndNonNegative) {
  SHALLOWS_REQUIRE_GPU();
  for (Scheme scheme : {Scheme::roe1, Scheme::roe3}) {
    for (InfiltrationModel model : {InfiltrationModel::green_ampt, InfiltrationModel::initial_constant}) {
     for (bool sources : {true, false}) {
      const Problem p = everything(scheme, Precision::single_precision, model, sources);
      const Outcome r = run(p, "cuda", 6);
      const std::string what = std::string(scheme_name(scheme)) + " float" + (sources ? "" : ", no sources");
      bool finite = true, non_negative = true;
      for (std::size_t k = 0; k < r.state.h.size(); ++k) {
        finite = finite && std::isfinite(r.state.h[k]) && std::isfinite(r.state.hu[k]) && std::isfinite(r.state.hv[k]);
        non_negative = non_negative && r.state.h[k] >= 0;
      }
      EXPECT_TRUE(finite) << what;
      EXPECT_TRUE(non_negative) << what;
      EXPECT_GT(r.moved.rain, 0.0) << what;
      EXPECT_TRUE(std::isfinite(r.moved.infiltration) && std::isfinite(r.moved.sources)) << what;
      expect_balance(r, 1e-4, what);  // the mass balance's float tolerance
     }
    }
  }
}

#ifdef SHALLOWS_HAVE_CUDA
// First order: the lagged kernel applies rain, infiltration and a Manning
// map itself, the sources run after it, and it takes a side's series on the
// device; passive scalars follow it in a pass of their own, but not with
// a side that follows a series (the plain kernels).
TEST(CudaForcing, FirstOrderForcingPicksItsKernels) {
  SHALLOWS_REQUIRE_GPU();
  const CudaOptions lagged{};
  Problem p = rain_basin(Scheme::roe1, 1e-4);
  EXPECT_EQ(make_cuda_backend(p, options("cuda"), lagged)->stats().kernel, "lagged");
  p.forcing.sources.push_back({"well", {5}, TimeSeries::constant(1.0)});
  EXPECT_EQ(make_cuda_backend(p, options("cuda"), lagged)->stats().kernel, "lagged");
  p.forcing.sources.clear();
  p.bc(Side::west) = {BoundaryKind::level, 1.0};
  p.forcing.boundary[static_cast<int>(Side::west)] = TimeSeries{{0, 2}, {1.0, 1.4}};
  EXPECT_EQ(make_cuda_backend(p, options("cuda"), lagged)->stats().kernel, "lagged");
  p.scalars.push_back({});
  p.scalars.back().name = "salt";
  p.scalars.back().c = {0.0};
  EXPECT_EQ(make_cuda_backend(p, options("cuda"), lagged)->stats().kernel, "plain");
  p.forcing.boundary = {};
  EXPECT_EQ(make_cuda_backend(p, options("cuda"), lagged)->stats().kernel, "lagged");
  p.scalars.clear();
  p.forcing = {};
  EXPECT_EQ(make_cuda_backend(p, options("cuda"), lagged)->stats().kernel, "lagged");
}

// A run's kernel, "auto" (cuda_options_from_environment): the plain kernels on small grids in one process, where a
// thread per cell keeps the GPU busier; lagged from 256^2 cells where dry chunks may be skipped, and from 1500^2
// with forcing.
TEST(CudaForcing, AutoTakesThePlainKernelsOnSmallGrids) {
  SHALLOWS_REQUIRE_GPU();
  if (!std::getenv("SHALLOWS_CUDA_KERNEL")) {
    EXPECT_EQ(cuda_options_from_environment().kernel, "auto");
  }
  CudaOptions automatic;
  automatic.kernel = "auto";
  const auto kernel = [&](index_t nx, index_t ny, double rain) {
    Problem p = test_support::make_problem(
        nx, ny, 0, 1, 0, 1, [](double, double) { return 0.0; }, [](double, double) { return 0.5; });
    walls(p);
    if (rain > 0) p.forcing.rain.rate = TimeSeries::constant(rain);
    return make_cuda_backend(p, options("cuda"), automatic)->stats().kernel;
  };
  EXPECT_EQ(kernel(256, 256, 0), "plain");
  EXPECT_EQ(kernel(257, 256, 0), "lagged");
  EXPECT_EQ(kernel(1500, 1500, 1e-5), "plain");
  EXPECT_EQ(kernel(1501, 1500, 1e-5), "lagged");
}

// The lagged kernel's forcing gives the plain kernels' bits: the state, each
// cell's infiltration and the maxima, in both precisions, with a dry rim and
// an island, over 70 steps or more, the rain from a series scaled per cell
// or from a stack of frames, with and without the sources (a point, a sink,
// a line along a wall and, with Green-Ampt, a point on the line) and sides
// that follow a series, and the sources alone (the plain kernels step one by
// one with a series, the lagged kernel in batches); its accounts, summed in
// another order, agree to round-off.
TEST(CudaForcing, LaggedKernelForcesAsThePlainOnes) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision precision : {Precision::double_precision, Precision::single_precision}) {
    for (InfiltrationModel model : {InfiltrationModel::green_ampt, InfiltrationModel::initial_constant}) {
     for (int variant = 0; variant < 5; ++variant) {
      const bool stack = variant == 1, sources = variant >= 2, cells = variant != 3, series = variant == 4;
      if (!cells && model != InfiltrationModel::green_ampt) continue;
      const std::string what = std::string(precision == Precision::single_precision ? "float" : "double") +
                               (!cells                                   ? ", sources alone"
                                : model == InfiltrationModel::green_ampt ? ", Green-Ampt"
                                                                         : ", initial + constant") +
                               (stack ? ", rain stack" : "") + (sources && cells ? ", sources" : "") +
                               (series ? ", side series" : "");
      Problem p = everything(Scheme::roe1, precision, model, sources);
      if (series) p = with_side_series(p);
      // A source on the last column of the first strip of chunks (30 columns): its ring reaches the next strip.
      if (sources) p.forcing.sources.push_back({"strip edge", {cell(p, 29, 10)}, TimeSeries::constant(0.04)});
      if (stack) rain_from_stack(p, 6);
      if (!cells) {
        p.forcing.rain = {};
        p.forcing.infiltration = {};
        p.forcing.manning.clear();
        p.physics.n_manning = 0.02;
      }
      BackendOptions o = options("cuda");
      o.track_maxima = true;
      const test_support::KernelPair k = test_support::lagged_and_plain(p, o);
      const auto& [lagged, plain] = k;
      ASSERT_EQ(lagged->stats().kernel, "lagged");
      ASSERT_EQ(plain->stats().kernel, "plain");
      const double t_end = 6;
      const AdvanceResult a = lagged->advance(0.0, t_end, 1 << 30), b = plain->advance(0.0, t_end, 1 << 30);
      EXPECT_EQ(a.t, t_end) << what;
      EXPECT_EQ(a.steps, b.steps) << what;
      EXPECT_GE(a.steps, 70) << what;
      test_support::expect_same_bits(k, what);
      ForcingState sa, sb;
      lagged->read_forcing_state(sa);
      plain->read_forcing_state(sb);
      const ForcingVolumes va = lagged->forcing_volumes(), vb = plain->forcing_volumes();
      // Each source's volume is summed in the same order by both.
      EXPECT_EQ(sa.sources, sb.sources) << what;
      if (sources) {
        EXPECT_GT(va.sources, 0.0) << what;
      }
      if (!cells) continue;
      ASSERT_EQ(sa.infiltration.size(), static_cast<std::size_t>(p.grid.cells())) << what;
      EXPECT_EQ(sa.infiltration, sb.infiltration) << what;
      ASSERT_EQ(sa.rain_rows.size(), sb.rain_rows.size()) << what;
      for (std::size_t j = 0; j < sa.rain_rows.size(); ++j) {
        EXPECT_LE(rel(sa.rain_rows[j], sb.rain_rows[j]), 1e-14) << what << ", row " << j;
        EXPECT_LE(rel(sa.infiltration_rows[j], sb.infiltration_rows[j]), 1e-14) << what << ", row " << j;
      }
      std::printf("  %s: %lld steps, rain %.17g / %.17g, infiltration %.17g / %.17g m^3\n", what.c_str(),
                  static_cast<long long>(a.steps), va.rain, vb.rain, va.infiltration, vb.infiltration);
      EXPECT_GT(va.infiltration, 0.0) << what;
      EXPECT_LE(rel(va.rain, vb.rain), 1e-14) << what;
      EXPECT_LE(rel(va.infiltration, vb.infiltration), 1e-14) << what;
     }
    }
  }
}

// A source that names a cell outside the grid, or one cell twice, is refused by name.
TEST(CudaForcing, BadSourceCellsAreRefused) {
  SHALLOWS_REQUIRE_GPU();
  Problem p = rain_basin(Scheme::roe1, 1e-4);
  p.forcing.sources.push_back({"well", {p.grid.cells()}, TimeSeries::constant(1.0)});
  try {
    make_backend(p, options("cuda"));
    ADD_FAILURE() << "a cell outside the grid was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("source 'well'"), std::string::npos) << e.what();
  }
  p.forcing.sources.back().cells = {5, 5};
  EXPECT_THROW(make_backend(p, options("cuda")), std::invalid_argument);
}
#endif

} // namespace
