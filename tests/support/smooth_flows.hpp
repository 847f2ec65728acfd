// SPDX-License-Identifier: MIT
#pragma once
// Smooth flows with exact solutions for order-of-accuracy studies of the
// third-order scheme, as cell averages (what a finite-volume scheme holds).
//  * Steady subcritical flow over a Gaussian bump in a channel with walls
//    along its sides: discharge q in from the west, level eta = 0 at the
//    east; exact depth from Bernoulli, q^2 / (2 g h^2) + h + z = const.
//  * A Gaussian vortex carried by a uniform flow over a flat bed (2D,
//    unsteady): u_theta = omega r exp(-alpha r^2), in cyclostrophic balance
//    g dh/dr = u_theta^2 / r, i.e. h = h0 - omega^2 / (4 alpha g) exp(-2 alpha r^2);
//    a steady solution moved by a Galilean shift, so exact at every time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "shallows/solver/fields.hpp"
#include "shallows/solver/problem.hpp"
#include "shallows/solver/simulation.hpp"

namespace shallows::test_support {

// Average of f over [a, b], 5-point Gauss-Legendre (exact to degree 9).
template <class F>
double gauss_average(double a, double b, F f) {
  static constexpr double xs[5] = {-0.9061798459386640, -0.5384693101056831, 0.0, 0.5384693101056831,
                                   0.9061798459386640};
  static constexpr double ws[5] = {0.2369268850561891, 0.4786286704993665, 0.5688888888888889, 0.4786286704993665,
                                   0.2369268850561891};
  double s = 0;
  for (int k = 0; k < 5; ++k) s += ws[k] * f(0.5 * (a + b) + 0.5 * (b - a) * xs[k]);
  return 0.5 * s;
}

// Averages of f(x, y) over the cells of a grid, 5 x 5 Gauss points, row-major.
template <class F>
std::vector<double> cell_averages(const Grid& g, F f) {
  std::vector<double> out(static_cast<std::size_t>(g.cells()));
  for (index_t j = 0; j < g.ny; ++j) {
    const double y0 = g.y0 + static_cast<double>(j) * g.dy;
    for (index_t i = 0; i < g.nx; ++i) {
      const double x0 = g.x0 + static_cast<double>(i) * g.dx;
      out[static_cast<std::size_t>(j * g.nx + i)] = gauss_average(
          y0, y0 + g.dy, [&](double y) { return gauss_average(x0, x0 + g.dx, [&](double x) { return f(x, y); }); });
    }
  }
  return out;
}

// ------------------------------------------------------------ bump channel

// One member of the family: outlet depth 1 m (eta = 0, bed -1 far from the
// bump), bump z = -1 + height exp(-((x - L/2) / width)^2), discharge q from
// the outlet Froude number q / (h sqrt(g h)).
struct BumpFlow {
  double froude;  // at the outlet
  double width;   // m
  double height;  // m (= fraction of the outlet depth)
  double g = 9.81;

  double depth_out() const { return 1.0; }
  double discharge() const { return froude * std::sqrt(g) * depth_out(); }
  // Long enough that the bump is below 1e-11 of its height at both ends.
  double length() const { return std::max(6.0, 10.0 * width); }
  double bed(double x) const {
    const double s = (x - 0.5 * length()) / width;
    return -depth_out() + height * std::exp(-s * s);
  }
  // Subcritical branch of the Bernoulli relation (Newton from the outlet depth).
  double depth(double x) const {
    const double q = discharge(), h_out = depth_out();
    const double energy = q * q / (2 * g * h_out * h_out) + h_out + bed(length());
    double h = h_out;
    for (int k = 0; k < 100; ++k) {
      const double f = q * q / (2 * g * h * h) + h + bed(x) - energy;
      h -= f / (1 - q * q / (g * h * h * h));
    }
    return h;
  }
  double crest_froude() const {
    const double h = depth(0.5 * length());
    return discharge() / (h * std::sqrt(g * h));
  }
  std::string name() const {
    char s[96];
    std::snprintf(s, sizeof s, "Fr %.2f (crest %.2f), width %.2g m, height %.0f%%", froude, crest_froude(), width,
                  100 * height / depth_out());
    return s;
  }

  // The channel on cells of side dx, ny rows (the flow is 1D, walls at both
  // sides); bed and initial state are the exact steady solution's cell
  // averages, or its values at the cell centres when `centres`.
  Problem problem(double dx, index_t ny, bool centres = false) const {
    Problem p;
    p.grid.nx = static_cast<index_t>(std::lround(length() / dx));
    p.grid.ny = ny;
    p.grid.dx = length() / static_cast<double>(p.grid.nx);
    p.grid.dy = p.grid.dx;
    const auto bed_f = [this](double x, double) { return bed(x); };
    const auto depth_f = [this](double x, double) { return depth(x); };
    if (centres) {
      for (index_t j = 0; j < ny; ++j)
        for (index_t i = 0; i < p.grid.nx; ++i) {
          p.z.push_back(bed(p.grid.x_center(i)));
          p.h.push_back(depth(p.grid.x_center(i)));
        }
    } else {
      p.z = cell_averages(p.grid, bed_f);
      p.h = cell_averages(p.grid, depth_f);
    }
    p.hu.assign(p.h.size(), discharge());
    p.hv.assign(p.h.size(), 0.0);
    p.bc(Side::west) = {BoundaryKind::inflow, discharge()};
    p.bc(Side::east) = {BoundaryKind::level, 0.0};
    p.bc(Side::south) = {BoundaryKind::wall, 0};
    p.bc(Side::north) = {BoundaryKind::wall, 0};
    p.physics.g = g;
    p.scheme = Scheme::roe3;
    p.cfl = 0.9;
    p.t_end = 1e30;
    return p;
  }

  // Time the slower (upstream) wave takes to cross the channel.
  double crossing_time() const {
    const double c = std::sqrt(g * depth_out()), u = discharge() / depth_out();
    return length() / (c - u);
  }
};

// L1 = mean |error| per cell of h and hu of the first row against the exact
// steady solution's cell averages (or centre values when `centres`).
struct SteadyError {
  double h = 0, q = 0;
};

inline SteadyError steady_error(const BumpFlow& b, const Grid& g, const Fields& f, bool centres = false) {
  SteadyError e;
  for (index_t i = 0; i < g.nx; ++i) {
    const double a = g.x0 + static_cast<double>(i) * g.dx;
    const double exact = centres ? b.depth(g.x_center(i))
                                 : gauss_average(a, a + g.dx, [&](double x) { return b.depth(x); });
    e.h += std::abs(f.h[static_cast<std::size_t>(i)] - exact);
    e.q += std::abs(f.hu[static_cast<std::size_t>(i)] - b.discharge());
  }
  e.h /= static_cast<double>(g.nx);
  e.q /= static_cast<double>(g.nx);
  return e;
}

// Runs p (a member's problem), started from the exact steady state's
// averages, on backend `kind` until the start-up transient has left: one
// crossing of the slower wave at a time, until a crossing changes h by less
// than 5% of the error (at most 60 crossings); fails the test otherwise.
inline Fields steady_state(const BumpFlow& b, const Problem& p, const std::string& kind) {
  Simulation sim(p, BackendOptions{kind, 1, false, 0.01});
  Fields f = sim.state();
  double change = 0, error = 0;
  for (int k = 1; k <= 60; ++k) {
    sim.advance_to(k * b.crossing_time());
    const Fields next = sim.state();
    change = 0;
    for (std::size_t c = 0; c < f.h.size(); ++c) change += std::abs(next.h[c] - f.h[c]);
    change /= static_cast<double>(f.h.size());
    error = steady_error(b, p.grid, next).h;
    f = next;
    if (k >= 3 && change < 0.05 * error) break;
  }
  EXPECT_LT(change, 0.05 * error) << "dx " << p.grid.dx << ": not steady";
  return f;
}

// ------------------------------------------------------------ moving vortex

struct MovingVortex {
  double u0 = 1.0, v0 = 0.5;  // carrying flow (m/s)
  double omega = 1.0;         // 1/s
  double alpha = 2.0;         // 1/m^2: fastest swirl (0.3 m/s) at r = 1/sqrt(2 alpha) = 0.5 m
  double h0 = 1.0;
  double x0 = 3.5, y0 = 3.5;  // centre at t = 0
  double side = 8.0;          // domain [0, side]^2, open sides, 3.5 m or more from the vortex until t = 1 s
  double g = 9.81;

  struct Point {
    double h, hu, hv;
  };
  Point at(double x, double y, double t) const {
    const double dx = x - (x0 + u0 * t), dy = y - (y0 + v0 * t);
    const double r2 = dx * dx + dy * dy;
    const double s = omega * std::exp(-alpha * r2);
    const double h = h0 - omega * omega / (4 * alpha * g) * std::exp(-2 * alpha * r2);
    return {h, h * (u0 - s * dy), h * (v0 + s * dx)};
  }

  Fields exact(const Grid& grid, double t) const {
    return {cell_averages(grid, [&](double x, double y) { return at(x, y, t).h; }),
            cell_averages(grid, [&](double x, double y) { return at(x, y, t).hu; }),
            cell_averages(grid, [&](double x, double y) { return at(x, y, t).hv; }),
            {}};
  }

  Problem problem(double dx) const {
    Problem p;
    p.grid.nx = p.grid.ny = static_cast<index_t>(std::lround(side / dx));
    p.grid.dx = p.grid.dy = side / static_cast<double>(p.grid.nx);
    const Fields f = exact(p.grid, 0);
    p.h = f.h;
    p.hu = f.hu;
    p.hv = f.hv;
    p.z.assign(p.h.size(), 0.0);
    for (auto s : {Side::west, Side::east, Side::south, Side::north}) p.bc(s) = {BoundaryKind::open, 0};
    p.physics.g = g;
    p.scheme = Scheme::roe3;
    p.cfl = 0.9;
    p.t_end = 1e30;
    return p;
  }
};

// Mean |a - b| per cell of h, hu and hv together.
inline double l1_distance(const Fields& a, const Fields& b) {
  double e = 0;
  for (std::size_t k = 0; k < a.h.size(); ++k)
    e += std::abs(a.h[k] - b.h[k]) + std::abs(a.hu[k] - b.hu[k]) + std::abs(a.hv[k] - b.hv[k]);
  return e / static_cast<double>(a.h.size());
}

} // namespace shallows::test_support
