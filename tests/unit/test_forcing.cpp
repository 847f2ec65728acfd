// SPDX-License-Identifier: MIT
// The forcing core (physics/forcing.hpp): time-series integrals, the
// Green-Ampt step against its implicit analytic solution, the sharing of a
// source's volume.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "shallows/physics/forcing.hpp"
#include "shallows/solver/forcing.hpp"

namespace shallows {
namespace {

// A hydrograph: rises from 0 to 10 m^3/s over 100 s, falls to 2 by 300 s.
TimeSeries hydrograph() { return {{0.0, 100.0, 300.0}, {0.0, 10.0, 2.0}}; }

TEST(Series, ValueInterpolatesAndHoldsTheEnds) {
  const TimeSeries s = hydrograph();
  EXPECT_DOUBLE_EQ(series_value(s.view(), 50.0), 5.0);
  EXPECT_DOUBLE_EQ(series_value(s.view(), 200.0), 6.0);
  EXPECT_DOUBLE_EQ(series_value(s.view(), -5.0), 0.0);
  EXPECT_DOUBLE_EQ(series_value(s.view(), 400.0), 2.0);
  EXPECT_DOUBLE_EQ(series_value(TimeSeries::constant(3.5).view(), 1e9), 3.5);
}

TEST(Series, IntegralIsExactForThePiecewiseLinearFunction) {
  const TimeSeries s = hydrograph();
  // 0..100: triangle 500; 100..300: trapezoid (10 + 2) / 2 * 200 = 1200; beyond 300: 2 per second.
  EXPECT_NEAR(series_integral(s.view(), 0, 300), 1700.0, 1e-12);
  EXPECT_NEAR(series_integral(s.view(), 0, 350), 1800.0, 1e-12);
  EXPECT_NEAR(series_integral(s.view(), 50, 150), 0.5 * (5 + 10) * 50 + 0.5 * (10 + 8) * 50, 1e-12);
  EXPECT_NEAR(series_integral(s.view(), -10, 0), 0.0, 0);
  EXPECT_EQ(series_integral(s.view(), 20, 20), 0.0);
  EXPECT_NEAR(series_integral(TimeSeries::constant(2.5).view(), 1, 5), 10.0, 1e-15);
}

// However a run steps, its steps add up to the integral: what makes an
// inflow's volume exact.
TEST(Series, StepIntegralsAddUpToTheWholeIntegral) {
  const TimeSeries s = hydrograph();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dt(0.01, 7.0);
  double t = 0, sum = 0;
  while (t < 320) {
    const double next = std::min(t + dt(rng), 320.0);
    sum += series_integral(s.view(), t, next);
    t = next;
  }
  EXPECT_NEAR(sum, 1700.0 + 40.0, 1e-11);
}

// Time at which Green-Ampt under ponding reaches F: t(F) = (F - S ln(1 + F / S)) / Ks.
double green_ampt_time(double F, double ks, double S) { return (F - S * std::log1p(F / S)) / ks; }

// The portable log1p (IEEE basic operations only, so that CPU and GPU agree
// bit for bit) against libm's: magnitudes from 1e-300 to 1e300, both signs
// above -1, and the ends.
TEST(PortableLog1p, WithinTwoUlpsOverTheWholeRange) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> e(-300, 300), unit(0, 1);
  double worst = 0;
  for (int k = 0; k < 400000; ++k) {
    const double x = k % 4 == 0   ? -unit(rng)
                     : k % 4 == 1 ? unit(rng) * 3
                                  : std::pow(10.0, e(rng)) * (k % 8 == 2 ? -1 : 1);
    if (!(x > -1) || !std::isfinite(x)) continue;
    const double exact = std::log1p(x);
    worst = std::max(worst, std::abs(math::log1p(x) - exact) / std::abs(exact));
  }
  EXPECT_LE(worst, 2 * std::numeric_limits<double>::epsilon()) << "worst relative error " << worst;
  EXPECT_EQ(math::log1p(0.0), 0.0);
  EXPECT_EQ(math::log1p(1e-300), 1e-300);
  EXPECT_EQ(math::log1p(-1.0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(math::log1p(-2.0)));
  EXPECT_TRUE(std::isnan(math::log1p(std::nan(""))));
  EXPECT_EQ(math::log1p(std::numeric_limits<double>::infinity()), std::numeric_limits<double>::infinity());
  EXPECT_NEAR(math::log1p(std::exp(1.0) - 1), 1.0, 2e-16);
}

// log1p_ratio(a, b) = log(1 + a / b) with one division near 0, against
// libm's log1p of the quotient computed in long double, for a / b > -0.29
// (nearer -1 the rounding of a / b itself is magnified, as in log1p(a / b)),
// and up to 1e30, where it takes log1p's path.
TEST(PortableLog1p, RatioWithinTwoUlps) {
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> e(-30, 30), unit(0, 1);
  double worst = 0;
  for (int k = 0; k < 200000; ++k) {
    const double b = std::pow(10.0, e(rng));
    const double a = b * (k % 3 == 0 ? -0.29 * unit(rng) : k % 3 == 1 ? 0.5 * unit(rng) : std::pow(10.0, e(rng)));
    const double exact = static_cast<double>(std::log1p(static_cast<long double>(a) / static_cast<long double>(b)));
    if (exact == 0) continue;
    worst = std::max(worst, std::abs(math::log1p_ratio(a, b) - exact) / std::abs(exact));
  }
  EXPECT_LE(worst, 2 * std::numeric_limits<double>::epsilon()) << "worst relative error " << worst;
  EXPECT_EQ(math::log1p_ratio(0.0, 3.0), 0.0);
  EXPECT_EQ(math::log1p_ratio(1e-300, 1.0), 1e-300);
  EXPECT_EQ(math::log1p_ratio(-2.0, 2.0), -std::numeric_limits<double>::infinity());
  EXPECT_NEAR(math::log1p_ratio(std::exp(1.0) - 1, 1.0), 1.0, 2e-16);
}

TEST(GreenAmpt, StepsComposeToTheImplicitAnalyticSolution) {
  const double ks = 1e-5, S = 0.11 * 0.3;  // 36 mm/h, suction 0.11 m, deficit 0.3
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> dt(0.05, 40.0);
  double t = 0, F = 0;
  for (int k = 0; k < 400; ++k) {
    const double d = dt(rng);
    F = green_ampt_capacity(F, d, ks, S);
    t += d;
    ASSERT_GT(F, 0);
    EXPECT_NEAR(green_ampt_time(F, ks, S), t, 1e-9 * t) << "after " << k + 1 << " steps";
  }
  // One step over the whole time gives the same F.
  EXPECT_NEAR(green_ampt_capacity(0.0, t, ks, S), F, 1e-12 * F);
}

// A run's steps are short against the soil's time scale: 20000 steps of
// 0.01 s. The increment's Newton keeps F on the analytic curve to round-off
// (1e-15 measured); a residual in F1 itself, F1 - F0 - S ln((F1 + S) / (F0 +
// S)), lost the increment to cancellation and drifted to 2.4e-11.
TEST(GreenAmpt, ManyShortStepsStayOnTheAnalyticSolution) {
  const double ks = 1e-5, S = 0.11 * 0.3, dt = 0.01;
  double F = 0;
  for (int k = 0; k < 20000; ++k) F = green_ampt_capacity(F, dt, ks, S);
  EXPECT_NEAR(green_ampt_time(F, ks, S), 200.0, 1e-13 * 200.0);
}

TEST(GreenAmpt, DegenerateParameters) {
  EXPECT_EQ(green_ampt_capacity(0.2, 10.0, 0.0, 0.05), 0.2);           // impermeable soil
  EXPECT_DOUBLE_EQ(green_ampt_capacity(0.2, 10.0, 1e-5, 0.0), 0.2001);  // no suction: Ks dt
}

TEST(CellForcing, InfiltrationNeverTakesMoreThanIsThere) {
  PhysicsParams<double> p;
  CellForcing f;
  f.rain = 0.001;
  f.model = InfiltrationModel::initial_constant;
  f.p0 = 0.05;   // 50 mm initial loss
  f.p1 = 1e-3;   // 1 mm/s
  double F = 0;
  ForcingDepths moved;
  const State<double> q = apply_cell_forcing(State<double>{0.002, 0.001, -0.001}, f, 1.0, p, F, moved);
  EXPECT_EQ(q.h, 0.0);
  EXPECT_EQ(q.hu, 0.0);
  EXPECT_DOUBLE_EQ(moved.infiltration, 0.003);
  EXPECT_DOUBLE_EQ(F, 0.003);
}

// Green-Ampt in a cell: water up to Ks dt all soaks in (the soil's rate is at
// least Ks), more than the step's capacity leaves the rest, in between all of it.
TEST(CellForcing, GreenAmptTakesWhatIsThereUpToTheCapacity) {
  PhysicsParams<double> p;
  CellForcing f;
  f.model = InfiltrationModel::green_ampt;
  f.p0 = 1e-5;  // Ks, m/s
  f.p1 = 0.1;   // suction
  f.p2 = 0.3;   // deficit
  const double dt = 2.0, F0 = 0.004;
  const double capacity = green_ampt_capacity(F0, dt, f.p0, f.p1 * f.p2) - F0;
  ASSERT_GT(capacity, 2 * f.p0 * dt);  // the suction doubles the rate at least, at this F0
  for (const double rain : {0.0, 0.3 * f.p0 * dt, f.p0 * dt, 0.5 * (f.p0 * dt + capacity), 2 * capacity}) {
    f.rain = rain;
    double F = F0;
    ForcingDepths moved;
    const State<double> q = apply_cell_forcing(State<double>{0.0, 0.0, 0.0}, f, dt, p, F, moved);
    const double expected = std::min(rain, capacity);
    EXPECT_EQ(moved.infiltration, expected) << "rain " << rain;
    EXPECT_EQ(F, F0 + expected) << "rain " << rain;
    EXPECT_EQ(q.h, rain - expected) << "rain " << rain;
  }
}

// The Green-Ampt capacity a caller passes is asked for only with that soil
// and only where the water exceeds Ks dt (a GPU instance without the solve
// relies on it), and what it says is what the soil takes.
TEST(CellForcing, GreenAmptCapacityIsAskedOnlyForThatSoilPastKsDt) {
  PhysicsParams<double> p;
  CellForcing f;
  f.model = InfiltrationModel::green_ampt;
  f.p0 = 2e-5;
  f.p1 = 0.2;
  f.p2 = 0.25;
  const double dt = 0.7;
  for (const double F0 : {0.0, 1e-6, 0.01}) {
    for (const double h0 : {0.0, 0.5 * f.p0 * dt, 3 * f.p0 * dt, 0.2}) {
      int asked = 0;
      const auto given = [&](const CellForcing& g, double F, double step) {
        ++asked;
        EXPECT_EQ(F, F0);
        EXPECT_EQ(step, dt);
        return SolveGreenAmpt{}(g, F, step);
      };
      double F_solved = F0, F_given = F0;
      ForcingDepths solved, from_outside;
      const State<double> q0{h0, 0.1 * h0, -0.05 * h0};
      const State<double> a = apply_cell_forcing(q0, f, dt, p, F_solved, solved);
      const State<double> b = apply_cell_forcing(q0, f, dt, p, F_given, from_outside, given);
      EXPECT_EQ(asked, h0 > f.p0 * dt ? 1 : 0) << "F0 " << F0 << " h " << h0;
      EXPECT_EQ(a.h, b.h);
      EXPECT_EQ(a.hu, b.hu);
      EXPECT_EQ(a.hv, b.hv);
      EXPECT_EQ(F_solved, F_given);
      EXPECT_EQ(solved.infiltration, from_outside.infiltration);
    }
  }
  // Rain, a map, a constant loss: never asked.
  for (const InfiltrationModel m : {InfiltrationModel::none, InfiltrationModel::initial_constant}) {
    CellForcing g = f;
    g.model = m;
    g.rain = 0.01;
    g.manning = 0.05;
    double F0 = 0.001, F1 = 0.001;
    ForcingDepths a, b;
    const auto never = [](const CellForcing&, double, double) -> double {
      ADD_FAILURE() << "asked without Green-Ampt soil";
      return 0.0;
    };
    const State<double> qa = apply_cell_forcing(State<double>{0.3, 0.2, 0.1}, g, dt, p, F0, a);
    const State<double> qb = apply_cell_forcing(State<double>{0.3, 0.2, 0.1}, g, dt, p, F1, b, never);
    EXPECT_EQ(qa.h, qb.h);
    EXPECT_EQ(qa.hu, qb.hu);
    EXPECT_EQ(F0, F1);
  }
  // What the capacity says is what the soil takes, up to the water there.
  f.rain = 0;
  double F = 0.003;
  ForcingDepths moved;
  const State<double> q =
      apply_cell_forcing(State<double>{0.1, 0.0, 0.0}, f, dt, p, F, moved, [](const CellForcing&, double, double) {
        return 0.025;
      });
  EXPECT_EQ(moved.infiltration, 0.025);
  EXPECT_EQ(F, 0.003 + 0.025);
  EXPECT_EQ(q.h, 0.1 - 0.025);
}

// The soil's water leaves at the cell's velocity: the discharge shrinks with
// the depth (taken_discharge), and what rain brings arrives at rest.
TEST(CellForcing, SoilTakesItsShareOfTheDischarge) {
  PhysicsParams<double> p;
  CellForcing f;
  f.model = InfiltrationModel::initial_constant;
  f.p0 = 0.4;  // m
  double F = 0;
  ForcingDepths moved;
  const State<double> q = apply_cell_forcing(State<double>{1.0, 0.5, -0.2}, f, 1.0, p, F, moved);
  EXPECT_DOUBLE_EQ(q.h, 0.6);
  EXPECT_DOUBLE_EQ(q.hu / q.h, 0.5);
  EXPECT_DOUBLE_EQ(q.hv / q.h, -0.2);
  f.model = InfiltrationModel::none;
  f.rain = 1.0;
  const State<double> r = apply_cell_forcing(State<double>{1.0, 0.5, -0.2}, f, 1.0, p, F, moved);
  EXPECT_EQ(r.hu, 0.5);
  EXPECT_EQ(r.hv, -0.2);
}

TEST(CellForcing, InitialAndConstantLossUnderPondingIsExact) {
  PhysicsParams<double> p;
  CellForcing f;
  f.model = InfiltrationModel::initial_constant;
  f.p0 = 0.01;
  f.p1 = 2e-6;
  double F = 0, t = 0;
  State<double> q{5.0, 0, 0};
  for (int k = 0; k < 100; ++k) {
    const double dt = 0.5 + 0.01 * k;
    ForcingDepths moved;
    q = apply_cell_forcing(q, f, dt, p, F, moved);
    t += dt;
  }
  EXPECT_NEAR(F, 0.01 + 2e-6 * t, 1e-15);
  EXPECT_NEAR(q.h, 5.0 - F, 1e-14);
}

TEST(CellForcing, UniformMapFrictionEqualsTheConstantOne) {
  PhysicsParams<double> constant;
  constant.n_manning = 0.03;
  PhysicsParams<double> none;
  CellForcing f;
  f.manning = 0.03;
  double F = 0;
  ForcingDepths moved;
  const State<double> q{0.7, 0.3, -0.2};
  const State<double> a = apply_manning(q, 0.1, constant);
  const State<double> b = apply_cell_forcing(q, f, 0.1, none, F, moved);
  EXPECT_EQ(a.h, b.h);
  EXPECT_EQ(a.hu, b.hu);
  EXPECT_EQ(a.hv, b.hv);
}

// A sink's water leaves at the cell's velocity; a source's arrives at rest;
// a cell left dry keeps no discharge.
TEST(Sources, SinkWaterTakesItsShareOfTheDischarge) {
  double hu = 0.5, hv = -0.2;
  sourced_discharge(1.0, -0.4, 0.6, 1e-6, hu, hv);
  EXPECT_DOUBLE_EQ(hu, 0.3);
  EXPECT_DOUBLE_EQ(hv, -0.12);
  sourced_discharge(0.6, 0.4, 1.0, 1e-6, hu, hv);
  EXPECT_DOUBLE_EQ(hu, 0.3);
  EXPECT_DOUBLE_EQ(hv, -0.12);
  sourced_discharge(1.0, -1.0, 0.0, 1e-6, hu, hv);
  EXPECT_EQ(hu, 0.0);
  EXPECT_EQ(hv, 0.0);
}

TEST(Sources, VolumeIsSharedByDepthAndConserved) {
  const std::vector<double> h{0.0, 0.1, 0.5, 1.2, 0.3};
  double sum_w = 0;
  for (double x : h) sum_w += source_weight(x);
  const double area = 4.0, volume = 3.7;
  double total = 0;
  for (double x : h) total += source_depth(volume, source_weight(x), sum_w, 5, area, x) * area;
  EXPECT_NEAR(total, volume, 1e-15);
  EXPECT_EQ(source_depth(volume, source_weight(0.0), sum_w, 5, area, 0.0), 0.0);  // a dry cell among wet ones
  // All dry: evenly.
  EXPECT_DOUBLE_EQ(source_depth(volume, 0.0, 0.0, 5, area, 0.0), volume / 5 / area);
}

TEST(Sources, ASinkNeverTakesMoreThanTheCellHolds) {
  EXPECT_DOUBLE_EQ(source_depth(-10.0, 1.0, 1.0, 1, 4.0, 0.5), -0.5);
  EXPECT_DOUBLE_EQ(source_depth(-1.0, 1.0, 1.0, 1, 4.0, 0.5), -0.25);
  EXPECT_EQ(source_depth(-1.0, 0.0, 0.0, 1, 4.0, 0.0), 0.0);
}

// The message of check_forcing_sizes for f on `cells` cells ("" where it passes).
std::string size_error(const Forcing& f, std::size_t cells) {
  try {
    check_forcing_sizes(f, cells);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ForcingSizes, EachMisfitIsNamed) {
  constexpr std::size_t cells = 6;
  Forcing ok;
  ok.rain.rate = hydrograph();
  ok.rain.scale.assign(cells, 1.0);
  ok.rain.frame_times = {0.0, 60.0};
  ok.rain.frames.assign(2 * cells, 1e-5);
  ok.manning = {0.03};
  ok.infiltration.p0.assign(cells, 0.1);
  ok.sources.push_back({"well", {2}, hydrograph()});
  EXPECT_EQ(size_error(ok, cells), "");

  const auto fails = [&](const char* name, auto&& change, const std::string& expected) {
    Forcing f = ok;
    change(f);
    EXPECT_NE(size_error(f, cells).find(expected), std::string::npos) << name << ": " << size_error(f, cells);
  };
  fails("scale", [](Forcing& f) { f.rain.scale.pop_back(); }, "rain.scale has 5 values");
  fails("manning", [](Forcing& f) { f.manning.assign(7, 0.03); }, "manning has 7 values");
  fails("p2", [](Forcing& f) { f.infiltration.p2 = {1.0, 2.0}; }, "infiltration.p2 has 2 values");
  fails("frames", [](Forcing& f) { f.rain.frames.pop_back(); }, "rain.frames has 11 values; expected 2 frames of 6");
  fails("order", [](Forcing& f) { f.rain.frame_times = {60.0, 60.0}; }, "rain.frame_times must increase");
  fails("series", [](Forcing& f) { f.rain.rate.v.pop_back(); }, "rain.rate has 3 times but 2 values");
  fails("source", [](Forcing& f) { f.sources[0].discharge.t.push_back(400.0); }, "source 'well' has 4 times");
}

}  // namespace
}  // namespace shallows
