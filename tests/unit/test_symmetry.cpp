// SPDX-License-Identifier: MIT
// Exact symmetries of the discrete scheme and of its parallel execution:
// a mirrored problem gives the mirrored solution bit for bit, swapping x and
// y swaps the solution, and 1 and N threads give identical results.
#include <gtest/gtest.h>

#include <cmath>

#include "shallows/solver/simulation.hpp"
#include "support/problems.hpp"

namespace {

using namespace shallows;

// A 2D dam break over a bump with a dry corner, symmetric in nothing.
Problem asymmetric_problem(index_t nx, index_t ny) {
  auto z = [](double x, double y) {
    return 0.3 * std::exp(-40 * ((x - 0.6) * (x - 0.6) + (y - 0.4) * (y - 0.4))) + 0.2 * x * y;
  };
  auto eta = [](double x, double y) { return (x < 0.35 && y < 0.7) ? 1.0 : 0.25; };
  Problem p = test_support::make_problem(nx, ny, 0, 1, 0, 1, z, eta);
  for (index_t j = 0; j < ny; ++j) {
    for (index_t i = 0; i < nx; ++i) p.hv[static_cast<std::size_t>(j * nx + i)] = 0.05 * p.h[static_cast<std::size_t>(j * nx + i)];
  }
  p.bc(Side::east) = {BoundaryKind::open, 0};
  p.bc(Side::north) = {BoundaryKind::open, 0};
  p.t_end = 0.3;
  p.physics.n_manning = 0.02;
  return p;
}

// The same problem with cells permuted by to(i, j) -> (i', j') and discharges
// mapped by flip (mirror: hu -> -hu; swap: hu <-> hv).
template <class Map>
Problem permuted(const Problem& a, Map to, bool mirror_x) {
  Problem b = a;
  const index_t n = a.grid.nx;
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < n; ++i) {
      const auto [ib, jb] = to(i, j);
      const auto ka = static_cast<std::size_t>(j * n + i), kb = static_cast<std::size_t>(jb * n + ib);
      b.z[kb] = a.z[ka];
      b.h[kb] = a.h[ka];
      b.hu[kb] = mirror_x ? -a.hu[ka] : a.hv[ka];
      b.hv[kb] = mirror_x ? a.hv[ka] : a.hu[ka];
    }
  }
  if (mirror_x) {
    std::swap(b.bc(Side::east), b.bc(Side::west));
  } else {
    b.bc(Side::west) = a.bc(Side::south);
    b.bc(Side::south) = a.bc(Side::west);
    b.bc(Side::east) = a.bc(Side::north);
    b.bc(Side::north) = a.bc(Side::east);
  }
  return b;
}

Simulation run(const Problem& p, int threads) {
  Simulation sim(p, BackendOptions{"cpu", threads, true, 0.01});
  sim.advance_to(p.t_end);
  return sim;
}

TEST(Symmetry, MirrorInXIsExact) {
  const index_t n = 40;
  const Problem pa = asymmetric_problem(n, n);
  const Simulation a = run(pa, 1);
  const Simulation b = run(permuted(pa, [n](index_t i, index_t j) { return std::pair{n - 1 - i, j}; }, true), 1);
  ASSERT_EQ(a.steps(), b.steps());
  const Fields fa = a.state(), fb = b.state();
  int checked = 0;
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < n; ++i) {
      const auto ka = static_cast<std::size_t>(j * n + i);
      const auto kb = static_cast<std::size_t>(j * n + (n - 1 - i));
      ASSERT_EQ(fa.h[ka], fb.h[kb]) << "cell " << i << "," << j;
      ASSERT_EQ(fa.hu[ka], -fb.hu[kb]) << "cell " << i << "," << j;
      ASSERT_EQ(fa.hv[ka], fb.hv[kb]) << "cell " << i << "," << j;
      checked += fa.hu[ka] != 0;
    }
  }
  EXPECT_GT(checked, 100);  // the flow really moved
}

TEST(Symmetry, SwappingXAndYIsExact) {
  const index_t n = 40;
  const Problem pa = asymmetric_problem(n, n);
  const Simulation a = run(pa, 1);
  const Simulation b = run(permuted(pa, [](index_t i, index_t j) { return std::pair{j, i}; }, false), 1);
  ASSERT_EQ(a.steps(), b.steps());
  const Fields fa = a.state(), fb = b.state();
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < n; ++i) {
      const auto ka = static_cast<std::size_t>(j * n + i);
      const auto kb = static_cast<std::size_t>(i * n + j);
      ASSERT_EQ(fa.h[ka], fb.h[kb]) << "cell " << i << "," << j;
      ASSERT_EQ(fa.hu[ka], fb.hv[kb]) << "cell " << i << "," << j;
      ASSERT_EQ(fa.hv[ka], fb.hu[kb]) << "cell " << i << "," << j;
    }
  }
}

TEST(Symmetry, OneAndManyThreadsAreBitIdentical) {
  const Problem p = asymmetric_problem(120, 97);  // rows not a multiple of any block
  const Simulation a = run(p, 1);
  for (int threads : {2, 3, 5}) {
    const Simulation b = run(p, threads);
    ASSERT_EQ(a.steps(), b.steps());
    const Fields fa = a.state(), fb = b.state();
    EXPECT_EQ(fa.h, fb.h) << threads << " threads";
    EXPECT_EQ(fa.hu, fb.hu) << threads << " threads";
    EXPECT_EQ(fa.hv, fb.hv) << threads << " threads";
    const Maxima ma = a.maxima(), mb = b.maxima();
    EXPECT_EQ(ma.max_h, mb.max_h);
  }
}

} // namespace
