// SPDX-License-Identifier: MIT
// The maxima every executor keeps (solver/cell_maxima.hpp): the core
// function against its definition, and a run's maxima against the states it
// went through, step by step, on a dam break over a dry bed with a dry island.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "shallows/physics/riemann/roe.hpp"
#include "shallows/solver/cell_maxima.hpp"
#include "shallows/solver/simulation.hpp"
#include "support/problems.hpp"

namespace {

using namespace shallows;
using namespace shallows::test_support;

TEST(CellMaxima, SpeedIsTheVelocityMagnitude) {
  EXPECT_EQ(flow_speed(3.0, -4.0), 5.0);
  EXPECT_EQ(flow_speed(-3.0f, 4.0f), 5.0f);
}

// The speed of a state as its edges see it: cell_primitive's velocity.
template <class Real>
Real edge_speed(State<Real> q, const PhysicsParams<Real>& p) {
  const CellPrimitive<Real> c = cell_primitive(q, Real(0), p);
  return std::sqrt(c.u * c.u + c.v * c.v);
}

// Random states, some dry, some exactly repeating the depth: the maxima are
// those of the wet states, kept as M, replaced only when they grow, and the
// arrival is flagged once, with the first wet state above the threshold
// (what a stored arrival time tested for NaN would say).
template <class Real, class M>
void random_states() {
  const PhysicsParams<Real> p{Real(9.81), Real(1e-3), Real(0)};
  const double threshold = 0.5;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> depth(-0.2, 1.0), discharge(-2.0, 2.0);
  for (int trial = 0; trial < 200; ++trial) {
    M max_h = 0, max_speed = 0;
    Real ref_h = 0, ref_speed = 0;
    bool arrived = false;
    for (int step = 0; step < 60; ++step) {
      const Real h = step % 7 == 3 ? ref_h : static_cast<Real>(std::max(depth(rng), 0.0));
      const State<Real> q{h, static_cast<Real>(discharge(rng)), static_cast<Real>(discharge(rng))};
      const int grew = grow_cell_maxima(q, p.h_dry, threshold, max_h, max_speed);
      const bool wet = q.h > p.h_dry;
      const bool grows_h = wet && ref_h < q.h;
      const bool grows_speed = wet && ref_speed < edge_speed(q, p);
      const bool arrives = wet && !arrived && static_cast<double>(q.h) > threshold;
      if (grows_h) ref_h = q.h;
      if (grows_speed) ref_speed = edge_speed(q, p);
      arrived = arrived || arrives;
      ASSERT_EQ((grew & kMaxDepthGrew) != 0, grows_h) << "trial " << trial << " step " << step;
      ASSERT_EQ((grew & kMaxSpeedGrew) != 0, grows_speed) << "trial " << trial << " step " << step;
      ASSERT_EQ((grew & kArrived) != 0, arrives) << "trial " << trial << " step " << step;
      ASSERT_EQ(max_h, static_cast<M>(ref_h));
      ASSERT_EQ(max_speed, static_cast<M>(ref_speed));
    }
  }
}

TEST(CellMaxima, AreTheLargestOfTheWetStates) {
  random_states<double, double>();
  random_states<float, float>();
  random_states<float, double>();  // the host keeps a float run's maxima in double: the same values
}

// Speeds a few ulps either side of the largest so far, at every scale from
// the subnormal to the overflowing: growth is what comparing the square
// root says (the shortcut that skips most square roots changes no result).
template <class Real>
void speeds_near_the_maximum() {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> exponent(std::log2(double(std::numeric_limits<Real>::denorm_min())),
                                                  std::log2(double(std::numeric_limits<Real>::max())));
  const Real inf = std::numeric_limits<Real>::infinity();
  for (int trial = 0; trial < 4000; ++trial) {
    const auto m = static_cast<Real>(std::exp2(exponent(rng)));
    Real u = m;
    for (int k = 0; k < 24; ++k) u = std::nextafter(u, Real(0));
    for (int k = 0; k < 48; ++k, u = std::nextafter(u, inf)) {
      Real max_h = 0, max_speed = m;
      const int grew = grow_cell_maxima(Real(1), u, Real(0), Real(1e-3), 0.5, max_h, max_speed);
      const Real speed = std::sqrt(u * u);
      ASSERT_EQ((grew & kMaxSpeedGrew) != 0, m < speed) << "m " << m << " u " << u;
      ASSERT_EQ(max_speed, m < speed ? speed : m);
    }
  }
}

TEST(CellMaxima, SkippedSquareRootsChangeNothing) {
  speeds_near_the_maximum<float>();
  speeds_near_the_maximum<double>();
}

// The speed of one cell of a run's state, in the run's precision.
double run_speed(const Fields& f, std::size_t k, Precision prec, double h_dry) {
  if (prec == Precision::single_precision) {
    const PhysicsParams<float> p{9.81f, static_cast<float>(h_dry), 0.0f};
    return edge_speed(State<float>{float(f.h[k]), float(f.hu[k]), float(f.hv[k])}, p);
  }
  const PhysicsParams<double> p{9.81, h_dry, 0.0};
  return edge_speed(State<double>{f.h[k], f.hu[k], f.hv[k]}, p);
}

// A run's maxima are those of the states after every step (and the initial
// one), its arrival times the time of the first state deeper than the
// threshold, NaN where none was. Both precisions, both schemes.
// The fused kernel's form (two states of a step, maxima in registers) keeps
// what growing with each state in turn keeps, arrival time included.
template <class Real, class M>
void over_a_step() {
  const PhysicsParams<Real> p{Real(9.81), Real(1e-3), Real(0)};
  const double threshold = 0.5;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> depth(-0.2, 1.0), discharge(-2.0, 2.0);
  const auto state = [&] {
    return State<Real>{static_cast<Real>(std::max(depth(rng), 0.0)), static_cast<Real>(discharge(rng)),
                       static_cast<Real>(discharge(rng))};
  };
  for (int trial = 0; trial < 200; ++trial) {
    M h_turn = 0, speed_turn = 0, h_step = 0, speed_step = 0;
    double arrival = std::numeric_limits<double>::quiet_NaN();
    for (int step = 0; step < 30; ++step) {
      const State<Real> n = state(), n1 = state();
      const bool next = step % 3 != 1;
      const double t_n = step, t_next = step + 0.5;
      int turn = track_cell_maxima(n, t_n, p.h_dry, threshold, h_turn, speed_turn, arrival);
      if (next) turn |= track_cell_maxima(n1, t_next, p.h_dry, threshold, h_turn, speed_turn, arrival);
      const Real inv_h = n1.h > Real(0) ? Real(1) / n1.h : Real(0);
      double arrived_at = 0;
      const int fused = track_cell_maxima_over_step(n, t_n, next, n1.h, n1.hu * inv_h, n1.hv * inv_h, t_next, p.h_dry,
                                                    threshold, h_step, speed_step, arrived_at);
      ASSERT_EQ(fused, turn) << "trial " << trial << " step " << step;
      ASSERT_EQ(h_step, h_turn);
      ASSERT_EQ(speed_step, speed_turn);
      if (fused & kArrived) {
        ASSERT_EQ(arrived_at, arrival);
      }
    }
  }
}

TEST(CellMaxima, OverAStepAsEachStateInTurn) {
  over_a_step<double, double>();
  over_a_step<float, float>();
  over_a_step<float, double>();
}

TEST(CellMaxima, RunKeepsTheMaximaOfEveryState) {
  for (Precision prec : {Precision::single_precision, Precision::double_precision}) {
    for (Scheme scheme : {Scheme::roe1, Scheme::roe3}) {
      Problem p = make_problem(
          40, 20, 0, 4, 0, 2, [](double x, double y) { return std::hypot(x - 3, y - 1) < 0.3 ? 0.4 : 0.0; },
          [](double x, double) { return x < 1.5 ? 0.3 : 0.0; });
      p.precision = prec;
      p.scheme = scheme;
      p.cfl = 0.45;
      BackendOptions o;
      o.kind = "cpu";
      o.track_maxima = true;
      o.arrival_threshold = 0.02;
      Simulation sim(p, o);
      // The run compares depths in its precision: h_dry as a Real.
      const double h_dry = prec == Precision::single_precision ? double(float(p.physics.h_dry)) : p.physics.h_dry;
      const auto n = static_cast<std::size_t>(p.grid.cells());
      std::vector<double> max_h(n, 0.0), max_speed(n, 0.0), arrival(n, std::numeric_limits<double>::quiet_NaN());
      const auto take = [&](const Fields& f, double t) {
        for (std::size_t k = 0; k < n; ++k) {
          if (!(f.h[k] > h_dry)) continue;
          max_h[k] = std::max(max_h[k], f.h[k]);
          max_speed[k] = std::max(max_speed[k], run_speed(f, k, prec, h_dry));
          if (std::isnan(arrival[k]) && f.h[k] > o.arrival_threshold) arrival[k] = t;
        }
      };
      take(sim.state(), 0.0);
      for (int step = 0; step < 80; ++step) {
        sim.advance_steps(1);
        take(sim.state(), sim.time());
      }
      const Maxima m = sim.maxima();
      const std::string what = std::string(prec == Precision::single_precision ? "float" : "double") +
                               (scheme == Scheme::roe1 ? " roe1" : " roe3");
      for (std::size_t k = 0; k < n; ++k) {
        ASSERT_EQ(m.max_h[k], max_h[k]) << what << " cell " << k;
        ASSERT_EQ(m.max_speed[k], max_speed[k]) << what << " cell " << k;
        ASSERT_TRUE(m.arrival_time[k] == arrival[k] || (std::isnan(m.arrival_time[k]) && std::isnan(arrival[k])))
            << what << " cell " << k << ": " << m.arrival_time[k] << " vs " << arrival[k];
      }
      EXPECT_TRUE(std::any_of(arrival.begin(), arrival.end(), [](double a) { return std::isnan(a); })) << what;
      EXPECT_TRUE(std::any_of(arrival.begin(), arrival.end(), [](double a) { return a > 0; })) << what;
    }
  }
}

} // namespace
