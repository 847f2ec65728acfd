// SPDX-License-Identifier: MIT
// The compact third-order reconstruction of seed 003 section 3
// (numerics/reconstruction.hpp) and its shallow-water use (numerics/roe3.hpp):
//  * exact for polynomials of degree <= 2 (at the edge and interior Gauss
//    points, with dx != dy), conservative, exact for constants bit for bit;
//  * third-order at the Gauss points for a smooth function;
//  * switches to the first-degree truncation (eq. 23) at a discontinuity and
//    creates no new extrema there;
//  * keeps depths non-negative next to dry cells (first-order fallback), also
//    through a whole dam break on a dry bed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "shallows/numerics/reconstruction.hpp"
#include "shallows/numerics/roe3.hpp"
#include "shallows/solver/simulation.hpp"
#include "support/exact.hpp"
#include "support/problems.hpp"

namespace {

using namespace shallows;

constexpr double kDx = 0.3, kDy = 0.2;

// Exact average over the cell with centre offset (di, dj) (in cells) of
// F = c0 + cx xi + cy eta + cxx xi^2 + cxy xi eta + cyy eta^2 (normalised coordinates).
double cell_average(const recon::Quadratic<double>& f, int di, int dj) {
  const double a = di, b = dj;
  return f.c0 + f.cx * a + f.cy * b + f.cxx * (a * a + 1.0 / 12) + f.cxy * a * b + f.cyy * (b * b + 1.0 / 12);
}

void stencil_of(const recon::Quadratic<double>& f, double (&out)[9]) {
  for (int dj = -1; dj <= 1; ++dj)
    for (int di = -1; di <= 1; ++di) out[3 * (dj + 1) + (di + 1)] = cell_average(f, di, dj);
}

// The 12 quadrature points (PointValues layout) in normalised coordinates.
struct Point {
  double xi, eta;
};
void points(Point (&p)[12]) {
  const double g = recon::gauss_offset<double>();
  int k = 0;
  for (int l = 0; l < 2; ++l) p[k++] = {0.5, l ? g : -g};
  for (int l = 0; l < 2; ++l) p[k++] = {-0.5, l ? g : -g};
  for (int l = 0; l < 2; ++l) p[k++] = {l ? g : -g, 0.5};
  for (int l = 0; l < 2; ++l) p[k++] = {l ? g : -g, -0.5};
  for (int q = 0; q < 4; ++q) p[k++] = {(q & 1) ? g : -g, (q & 2) ? g : -g};
}
void values(const recon::PointValues<double>& v, double (&out)[12]) {
  int k = 0;
  for (double x : v.edge) out[k++] = x;
  for (double x : v.q) out[k++] = x;
}

TEST(Reconstruction, ExactForQuadraticsInTheSmoothRegime) {
  const auto prm = recon::make_params<double>(kDx, kDy);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  Point pts[12];
  points(pts);
  for (int trial = 0; trial < 200; ++trial) {
    // Small first derivatives keep beta under tol = dx^2 + dy^2: degree two is used.
    const recon::Quadratic<double> f{u(rng), 0.05 * u(rng), 0.05 * u(rng), 0.05 * u(rng), 0.05 * u(rng), 0.05 * u(rng)};
    double s[9];
    stencil_of(f, s);
    bool smooth = false;
    const auto p = recon::reconstruct(s, prm, &smooth);
    ASSERT_TRUE(smooth);
    EXPECT_NEAR(p.cx, f.cx, 1e-14);
    EXPECT_NEAR(p.cy, f.cy, 1e-14);
    EXPECT_NEAR(p.cxx, f.cxx, 1e-14);
    EXPECT_NEAR(p.cxy, f.cxy, 1e-14);
    EXPECT_NEAR(p.cyy, f.cyy, 1e-14);
    double v[12];
    values(recon::edge_and_interior_values(p), v);
    for (int k = 0; k < 12; ++k) EXPECT_NEAR(v[k], f(pts[k].xi, pts[k].eta), 1e-14) << "point " << k;
  }
}

TEST(Reconstruction, ExactForLinearFunctionsEvenWhenSwitchedToDegreeOne) {
  const auto prm = recon::make_params<double>(kDx, kDy);
  Point pts[12];
  points(pts);
  // A steep plane: every beta is far above tol, so the truncations of eq. 23 are used.
  const recon::Quadratic<double> f{3, 40, -25, 0, 0, 0};
  double s[9];
  stencil_of(f, s);
  bool smooth = true;
  const auto p = recon::reconstruct(s, prm, &smooth);
  EXPECT_FALSE(smooth);
  double v[12];
  values(recon::edge_and_interior_values(p), v);
  for (int k = 0; k < 12; ++k) EXPECT_NEAR(v[k], f(pts[k].xi, pts[k].eta), 1e-12) << "point " << k;
}

TEST(Reconstruction, ConservativeForAnyData) {
  const auto prm = recon::make_params<double>(kDx, kDy);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 500; ++trial) {
    double s[9];
    const double scale = trial % 2 ? 1.0 : 1e-3;  // both branches
    for (double& x : s) x = 2 + scale * u(rng);
    const auto p = recon::reconstruct(s, prm);
    // Exact cell average of the polynomial: c0 + (cxx + cyy) / 12.
    EXPECT_NEAR(p.c0 + (p.cxx + p.cyy) / 12, s[4], 1e-15);
    // The 2 x 2 Gauss rule is exact for it.
    const auto v = recon::edge_and_interior_values(p);
    EXPECT_NEAR(0.25 * (v.q[0] + v.q[1] + v.q[2] + v.q[3]), s[4], 1e-14);
  }
}

TEST(Reconstruction, ConstantsAreReproducedBitForBit) {
  for (double c : {0.0, 1.0 / 3.0, -1234.5678, 1e-7}) {
    double s[9];
    for (double& x : s) x = c;
    const auto v = recon::edge_and_interior_values(recon::reconstruct(s, recon::make_params<double>(kDx, kDy)));
    double out[12];
    values(v, out);
    for (double x : out) EXPECT_EQ(x, c);
    float sf[9];
    for (float& x : sf) x = static_cast<float>(c);
    const auto vf = recon::edge_and_interior_values(recon::reconstruct(sf, recon::make_params<float>(kDx, kDy)));
    for (float x : vf.edge) EXPECT_EQ(x, static_cast<float>(c));
    for (float x : vf.q) EXPECT_EQ(x, static_cast<float>(c));
  }
}

// Largest error at the 12 points for F = sin(kx x + 0.3) cos(ky y) on a cell
// of size d x d at (x0, y0), with exact cell averages.
double smooth_error(double d) {
  const double kx = 1.3, ky = 0.7, x0 = 0.4, y0 = -0.2;
  // Exact averages: int sin(kx x + .3) dx = -cos(.)/kx, int cos(ky y) dy = sin(.)/ky.
  const auto avg = [&](int di, int dj) {
    const double xa = x0 + (di - 0.5) * d, xb = xa + d, ya = y0 + (dj - 0.5) * d, yb = ya + d;
    return (std::cos(kx * xa + 0.3) - std::cos(kx * xb + 0.3)) / (kx * d) * (std::sin(ky * yb) - std::sin(ky * ya)) /
           (ky * d);
  };
  double s[9];
  for (int dj = -1; dj <= 1; ++dj)
    for (int di = -1; di <= 1; ++di) s[3 * (dj + 1) + (di + 1)] = avg(di, dj);
  const auto p = recon::reconstruct(s, recon::make_params<double>(d, d));
  double v[12];
  values(recon::edge_and_interior_values(p), v);
  Point pts[12];
  points(pts);
  double e = 0;
  for (int k = 0; k < 12; ++k) {
    const double x = x0 + pts[k].xi * d, y = y0 + pts[k].eta * d;
    e = std::max(e, std::abs(v[k] - std::sin(kx * x + 0.3) * std::cos(ky * y)));
  }
  return e;
}

TEST(Reconstruction, ThirdOrderAtTheGaussPointsForASmoothFunction) {
  double previous = 0;
  for (double d : {0.2, 0.1, 0.05, 0.025}) {
    const double e = smooth_error(d);
    if (previous > 0) {
      std::printf("  d = %.3f  max error %.3e  order %.2f\n", d, e, std::log2(previous / e));
      EXPECT_GE(std::log2(previous / e), 2.8);
    }
    previous = e;
  }
}

// A step of height 1 across the stencil: the reconstruction switches to
// degree one. Grid-aligned steps create no new extrema; oblique ones can
// (the four degree-one polynomials of eq. 23 are fitted to diagonal cells and
// all have comparable indicators there), by a bounded amount, measured here.
TEST(Reconstruction, SwitchesToDegreeOneAtADiscontinuityWithoutNewExtrema) {
  const auto prm = recon::make_params<double>(0.05, 0.05);
  int switched = 0, cases = 0;
  double worst_oblique = 0;
  const int normals[][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}, {1, 1}, {1, -1}, {-1, 1}, {2, 1}, {1, 2}, {-2, 1}};
  for (const auto& nrm : normals) {
    const bool aligned = nrm[0] == 0 || nrm[1] == 0;
    for (double c : {-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5}) {
      double s[9];
      double lo = 1e300, hi = -1e300;
      for (int dj = -1; dj <= 1; ++dj)
        for (int di = -1; di <= 1; ++di) {
          const double v = (nrm[0] * di + nrm[1] * dj > c) ? 1.7 : 0.7;
          s[3 * (dj + 1) + (di + 1)] = v;
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      if (hi == lo) continue;
      ++cases;
      bool smooth = true;
      const auto p = recon::reconstruct(s, prm, &smooth);
      switched += !smooth;
      EXPECT_FALSE(smooth) << "normal (" << nrm[0] << "," << nrm[1] << ") c = " << c;
      double v[12];
      values(recon::edge_and_interior_values(p), v);
      for (int k = 0; k < 12; ++k) {
        const double excess = std::max(lo - v[k], v[k] - hi);
        if (aligned) {
          EXPECT_LE(excess, 1e-12) << "normal (" << nrm[0] << "," << nrm[1] << ") c = " << c << " point " << k;
        } else {
          worst_oblique = std::max(worst_oblique, excess);
        }
      }
    }
  }
  std::printf("  largest over/undershoot at an oblique unit step: %.3f\n", worst_oblique);
  EXPECT_LE(worst_oblique, 0.3);
  EXPECT_GT(cases, 30);
  EXPECT_EQ(switched, cases);
}

// A 1D row with a step, cell by cell: no point value leaves [min, max] of
// the data (no overshoot next to the jump), in the x and the y direction.
TEST(Reconstruction, StepProfileHasNoOvershootAlongXAndY) {
  const auto prm = recon::make_params<double>(0.01, 0.01);
  std::vector<double> row(40);
  for (std::size_t i = 0; i < row.size(); ++i) row[i] = i < 20 ? 2.0 : 0.5;
  for (int axis = 0; axis < 2; ++axis) {
    for (std::size_t i = 1; i + 1 < row.size(); ++i) {
      double s[9];
      for (int dj = -1; dj <= 1; ++dj)
        for (int di = -1; di <= 1; ++di) {
          const int along = axis == 0 ? di : dj;
          s[3 * (dj + 1) + (di + 1)] = row[static_cast<std::size_t>(static_cast<int>(i) + along)];
        }
      double v[12];
      values(recon::edge_and_interior_values(recon::reconstruct(s, prm)), v);
      for (double x : v) {
        EXPECT_GE(x, 0.5 - 1e-12) << "cell " << i << " axis " << axis;
        EXPECT_LE(x, 2.0 + 1e-12) << "cell " << i << " axis " << axis;
      }
    }
  }
}

// roe3::cell_trace next to dry cells and where the bed reconstruction would
// pierce the surface: first-order fallback, depths >= 0 at every point.
TEST(Reconstruction, DepthStaysNonNegativeNextToDryCells) {
  const auto prm = roe3::make_params<double>(PhysicsParams<double>{}, 0.1, 0.1);
  // A wet cell with one dry neighbour: the fallback gives the cell average.
  double h[9], hu[9], hv[9], z[9];
  for (int k = 0; k < 9; ++k) {
    z[k] = -1;
    h[k] = 1;
    hu[k] = 0.3 * k;
    hv[k] = -0.1 * k;
  }
  h[5] = 0;
  z[5] = 0.5;
  roe3::BedPoints<double> zp = roe3::bed_points(z, prm.rec);
  auto t = roe3::cell_trace(h, hu, hv, z, zp, prm);
  EXPECT_FALSE(t.high_order);
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(t.h[k], 1.0);
    EXPECT_EQ(t.hu[k], hu[4]);
    EXPECT_EQ(t.z[k], -1.0);
  }
  EXPECT_EQ(t.interior.h, 0.0);

  // Thin films over a rough bed, every cell wet: where the reconstructed
  // depth would dip below the dry tolerance the cell falls back to its
  // average; either way no point depth is negative.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  int fallbacks = 0, high = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    for (int k = 0; k < 9; ++k) {
      z[k] = 0.2 * (2 * u(rng) - 1);
      h[k] = 1e-4 + 0.05 * u(rng);
      hu[k] = 0.01 * (2 * u(rng) - 1);
      hv[k] = 0.01 * (2 * u(rng) - 1);
    }
    zp = roe3::bed_points(z, prm.rec);
    t = roe3::cell_trace(h, hu, hv, z, zp, prm);
    (t.high_order ? high : fallbacks) += 1;
    for (int k = 0; k < 8; ++k) {
      EXPECT_GE(t.h[k], 0.0);
      if (t.high_order) {
        EXPECT_GT(t.h[k], prm.phys.h_dry);
      }
    }
  }
  EXPECT_GT(fallbacks, 100);
  EXPECT_GT(high, 100);

  // Well inside a lake the reconstruction is of third order.
  for (int k = 0; k < 9; ++k) {
    z[k] = -2 + 0.01 * k;
    h[k] = -z[k];
    hu[k] = hv[k] = 0;
  }
  zp = roe3::bed_points(z, prm.rec);
  t = roe3::cell_trace(h, hu, hv, z, zp, prm);
  EXPECT_TRUE(t.high_order);
  EXPECT_EQ(t.interior.h, 0.0);
  EXPECT_EQ(t.interior.hu, 0.0);
  EXPECT_EQ(t.interior.hv, 0.0);
}

// Dam break on a dry bed (Ritter) with roe3: depth never negative, nothing
// NaN, mass conserved behind walls, and close to the exact solution.
TEST(Reconstruction, DryBedDamBreakStaysNonNegative) {
  constexpr double kLength = 40, kDam = 20, kTime = 2, kHl = 1, g = 9.81;
  const index_t n = 200;
  for (Precision precision : {Precision::double_precision, Precision::single_precision}) {
    Problem p = test_support::make_problem(
        n, 4, 0, kLength, 0, 4 * kLength / double(n), [](double, double) { return 0.0; },
        [](double x, double) { return x < kDam ? kHl : 0.0; });
    p.scheme = Scheme::roe3;
    p.precision = precision;
    p.t_end = kTime;
    Simulation sim(p, BackendOptions{"cpu", 2, false, 0.01});
    const double v0 = sim.volume();
    double min_h = 0;
    bool finite = true;
    sim.advance_to(kTime, [&](double, double) {
      const Fields f = sim.state();
      for (std::size_t k = 0; k < f.h.size(); ++k) {
        min_h = std::min(min_h, f.h[k]);
        finite = finite && std::isfinite(f.h[k]) && std::isfinite(f.hu[k]) && std::isfinite(f.hv[k]);
      }
    });
    EXPECT_TRUE(finite);
    EXPECT_GE(min_h, 0.0);
    EXPECT_LE(std::abs(sim.volume() - v0) / v0, precision == Precision::double_precision ? 1e-12 : 1e-5);
    const Fields f = sim.state();
    const double d = kLength / double(n);
    double error = 0;
    for (index_t i = 0; i < n; ++i) {
      const double xi = ((double(i) + 0.5) * d - kDam) / kTime;
      error += std::abs(f.h[static_cast<std::size_t>(i)] - test_support::ritter_depth(xi, kHl, g)) * d;
    }
    std::printf("  Ritter roe3 (%s) n=%lld L1(h) = %.4e\n", precision == Precision::double_precision ? "double" : "float",
                static_cast<long long>(n), error);
    EXPECT_LT(error, 0.1);  // first order (roe1) at n = 200: 0.24
  }
}

} // namespace
