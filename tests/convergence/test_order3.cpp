// SPDX-License-Identifier: MIT
// Order of accuracy of the third-order scheme (roe3).
//
// 1. S003-T2: subcritical steady flow over a bump (seed 003 section 4.2.2),
//    run to steady state on 20, 40, 80, 160 cells along x; L1 errors of h and
//    q_x against the exact 1D steady solution, printed next to the seed's
//    Table 2; the order between the two finest meshes must reach 2.5.
//    The flow is one-dimensional, so the domain keeps its length but only two
//    rows of cells (walls at y = 0 and y = 20 either way): the rows evolve
//    identically, which a guard test checks against the full square grid.
//    Bed and initial state are exact cell averages (5-point Gauss), not
//    point values: point values differ from averages by O(dx^2) and would
//    cap the measured order at 2.
// 2. A smooth unsteady flow in a walled box over a smooth bed, where time and
//    space errors count together (dt ~ dx at fixed CFL): cosine modes, whose
//    even extension through the walls is smooth, so the walls do not spoil
//    the order. Reference: the next finer grid (errors of successive grids,
//    n = 16 ... 128, coarsened by 2 x 2 averages); order >= 2.5 at the finest pair.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "shallows/solver/simulation.hpp"
#include "support/problems.hpp"
#include "support/smooth_flows.hpp"

namespace order3_tests {

using namespace shallows;

constexpr double g = 9.81;

using test_support::gauss_average;

// ---------------------------------------------------------------- S003-T2

constexpr double kQ = 0.15, kLength = 20, kHOut = 0.5;

double bump_bed(double x) { return -(2 - 0.2 * std::exp(-0.16 * (x - 10) * (x - 10))); }

// Subcritical branch of q^2 / (2 g h^2) + h + z = const, with h(20) = 0.5.
double bump_depth(double x) {
  const double energy = kQ * kQ / (2 * g * kHOut * kHOut) + kHOut + bump_bed(kLength);
  double h = kHOut;
  for (int k = 0; k < 60; ++k) {
    const double f = kQ * kQ / (2 * g * h * h) + h + bump_bed(x) - energy;
    h -= f / (1 - kQ * kQ / (g * h * h * h));
  }
  return h;
}

Problem bump_problem(index_t nx, index_t ny) {
  Problem p = test_support::make_problem(
      nx, ny, 0, kLength, 0, kLength, [](double, double) { return 0.0; }, [](double, double) { return 0.0; });
  const double dx = kLength / static_cast<double>(nx);
  for (index_t i = 0; i < nx; ++i) {
    const double a = static_cast<double>(i) * dx, b = a + dx;
    const double z = gauss_average(a, b, bump_bed), h = gauss_average(a, b, bump_depth);
    for (index_t j = 0; j < ny; ++j) {
      const auto k = static_cast<std::size_t>(j * nx + i);
      p.z[k] = z;
      p.h[k] = h;
      p.hu[k] = kQ;
    }
  }
  p.bc(Side::west) = {BoundaryKind::inflow, kQ};
  p.bc(Side::east) = {BoundaryKind::level, kHOut + bump_bed(kLength)};
  p.bc(Side::south) = {BoundaryKind::wall, 0};
  p.bc(Side::north) = {BoundaryKind::wall, 0};
  p.scheme = Scheme::roe3;
  p.cfl = 0.9;
  return p;
}

struct SteadyErrors {
  double h, q;  // mean |error| per cell
  index_t steps;
  double residual;  // mean |h change| per cell over the last 20 s
};

// Steady state: 300 s, about 30 domain crossings of the waves (the boundaries
// reflect most of the initial transient, whose amplitude halves every ~40 s).
// What is left of it, the mean |change of h| over the last 20 s, is printed
// and must stay under 10% of the error at every level (at 160 cells it is ~6%;
// running on to 400 s changes the L1 errors by less than 2% and the orders
// by less than 0.03).
SteadyErrors bump_errors(index_t nx) {
  constexpr double kEnd = 300;
  const Problem p = bump_problem(nx, 2);
  Simulation sim(p, BackendOptions{"cpu", 1, false, 0.01});
  sim.advance_to(kEnd - 20);
  const Fields before = sim.state();
  sim.advance_to(kEnd);
  const Fields f = sim.state();
  SteadyErrors e{0, 0, sim.steps(), 0};
  const double dx = kLength / static_cast<double>(nx);
  for (index_t i = 0; i < nx; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const double a = static_cast<double>(i) * dx;
    e.h += std::abs(f.h[k] - gauss_average(a, a + dx, bump_depth));
    e.q += std::abs(f.hu[k] - kQ);
  }
  e.h /= static_cast<double>(nx);
  e.q /= static_cast<double>(nx);
  for (std::size_t k = 0; k < f.h.size(); ++k) e.residual += std::abs(f.h[k] - before.h[k]);
  e.residual /= static_cast<double>(f.h.size());
  return e;
}

TEST(Order3, SteadyFlowOverABumpIsOneDimensional) {
  // The square grid and the two-row grid give the same rows.
  const Problem square = bump_problem(20, 20), strip = bump_problem(20, 2);
  Simulation a(square, BackendOptions{"cpu", 1, false, 0.01});
  Simulation b(strip, BackendOptions{"cpu", 1, false, 0.01});
  a.advance_steps(200);
  b.advance_steps(200);
  EXPECT_EQ(a.time(), b.time());
  const Fields fa = a.state(), fb = b.state();
  for (index_t j = 0; j < 20; ++j) {
    for (index_t i = 0; i < 20; ++i) {
      const auto ka = static_cast<std::size_t>(j * 20 + i), kb = static_cast<std::size_t>(i);
      EXPECT_NEAR(fa.h[ka], fb.h[kb], 1e-14);
      EXPECT_NEAR(fa.hu[ka], fb.hu[kb], 1e-14);
      EXPECT_NEAR(fa.hv[ka], 0.0, 1e-14);
    }
  }
}

TEST(Order3, SteadyFlowOverABumpS003T2) {
  const index_t sizes[] = {20, 40, 80, 160};
  // Seed 003 Table 2 for 20^2 .. 160^2 (its 10^2 row left out).
  const double paper_h[] = {3.93e-3, 5.71e-4, 4.87e-5, 3.32e-6};
  const double paper_q[] = {1.04e-2, 8.42e-4, 3.89e-5, 1.86e-6};
  std::printf("  S003-T2, roe3, L1 = mean |error| per cell (x |domain| = 400 m^2 for the integral)\n");
  std::printf("  %-8s %-10s %-6s %-10s %-6s %-11s | %-9s %-6s %-9s %-6s\n", "cells", "L1(h)", "order", "L1(q_x)",
              "order", "int L1(h)", "paper h", "order", "paper q", "order");
  double previous_h = 0, previous_q = 0, order_h = 0, order_q = 0;
  for (int level = 0; level < 4; ++level) {
    const index_t n = sizes[level];
    const SteadyErrors e = bump_errors(n);
    order_h = previous_h > 0 ? std::log2(previous_h / e.h) : 0;
    order_q = previous_q > 0 ? std::log2(previous_q / e.q) : 0;
    const double paper_order_h = level > 0 ? std::log2(paper_h[level - 1] / paper_h[level]) : 0;
    const double paper_order_q = level > 0 ? std::log2(paper_q[level - 1] / paper_q[level]) : 0;
    std::printf("  %3lldx%-4lld %.3e  %-6.2f %.3e  %-6.2f %.3e   | %.2e  %-6.2f %.2e  %-6.2f  (%lld steps, residual %.1e)\n",
                static_cast<long long>(n), static_cast<long long>(n), e.h, order_h, e.q, order_q, 400 * e.h,
                paper_h[level], paper_order_h, paper_q[level], paper_order_q, static_cast<long long>(e.steps),
                e.residual);
    EXPECT_LT(e.residual, 0.1 * e.h) << n << " cells: not at steady state";
    previous_h = e.h;
    previous_q = e.q;
  }
  EXPECT_GE(order_h, 2.5);
  EXPECT_GE(order_q, 2.5);
  EXPECT_LT(previous_h, 1e-7);
}

// ------------------------------------------------- smooth unsteady flow

double box_bed(double x, double y) { return -1 + 0.1 * std::cos(M_PI * x) * std::cos(M_PI * y); }
double box_surface(double x, double y) { return 0.05 * std::cos(M_PI * x) + 0.04 * std::cos(2 * M_PI * y); }

Fields box_run(index_t n, double t_end) {
  Problem p = test_support::make_problem(
      n, n, 0, 1, 0, 1, [](double, double) { return 0.0; }, [](double, double) { return 0.0; });
  p.z = test_support::cell_averages(p.grid, box_bed);
  p.h = test_support::cell_averages(p.grid, [](double x, double y) { return box_surface(x, y) - box_bed(x, y); });
  p.scheme = Scheme::roe3;
  p.t_end = t_end;
  Simulation sim(p, BackendOptions{"cpu", 1, false, 0.01});
  sim.advance_to(t_end);
  return sim.state();
}

// Mean |coarse - 2x2 average of fine| of h, hu and hv together.
double difference(const Fields& coarse, index_t n, const Fields& fine) {
  double e = 0;
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < n; ++i) {
      const auto c = static_cast<std::size_t>(j * n + i);
      const auto f00 = static_cast<std::size_t>(2 * j * 2 * n + 2 * i);
      const auto f01 = f00 + 1, f10 = f00 + static_cast<std::size_t>(2 * n), f11 = f10 + 1;
      const auto avg = [&](const std::vector<double>& v) { return 0.25 * ((v[f00] + v[f01]) + (v[f10] + v[f11])); };
      e += std::abs(coarse.h[c] - avg(fine.h)) + std::abs(coarse.hu[c] - avg(fine.hu)) +
           std::abs(coarse.hv[c] - avg(fine.hv));
    }
  }
  return e / static_cast<double>(n * n);
}

TEST(Order3, SmoothUnsteadyFlowInTimeAndSpace) {
  constexpr double kEnd = 0.25;
  const index_t sizes[] = {16, 32, 64, 128};
  std::vector<Fields> runs;
  for (index_t n : sizes) runs.push_back(box_run(n, kEnd));
  double previous = 0, order = 0;
  std::printf("  smooth sloshing in a walled box, t = %.2f s, roe3 (dt ~ dx, CFL 0.9)\n", kEnd);
  for (std::size_t level = 0; level + 1 < runs.size(); ++level) {
    const double e = difference(runs[level], sizes[level], runs[level + 1]);
    order = previous > 0 ? std::log2(previous / e) : 0;
    std::printf("  %4lld^2 vs %4lld^2: L1 %.3e  order %.2f\n", static_cast<long long>(sizes[level]),
                static_cast<long long>(sizes[level + 1]), e, order);
    previous = e;
  }
  EXPECT_GE(order, 2.5);
}

} // namespace
