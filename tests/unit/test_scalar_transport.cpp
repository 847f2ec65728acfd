// SPDX-License-Identifier: MIT
// The core of passive-scalar transport (physics/scalar_transport.hpp): the
// edge mass flux against the fluctuations' own flux, its antisymmetry under
// mirroring, and the concentration update's consistency with continuity,
// its bounds and its forcing.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "shallows/mesh/structured/cartesian_edges.hpp"
#include "shallows/physics/scalar_transport.hpp"

namespace shallows {
namespace {

const PhysicsParams<double> kPhysics{9.81, 1e-6, 0.0};

struct Pair {
  State<double> l, r;
  double zl, zr;
};

// Wet/dry, sub- and supercritical, bed steps: every branch of the Roe solver.
Pair random_pair(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-3, 3), h(0, 2), z(-0.5, 0.5), coin(0, 1);
  Pair p;
  const double hl = coin(rng) < 0.15 ? 0.0 : h(rng);
  const double hr = coin(rng) < 0.15 ? 0.0 : h(rng);
  p.l = {hl, hl > 0 ? hl * u(rng) : 0.0, hl > 0 ? hl * u(rng) : 0.0};
  p.r = {hr, hr > 0 ? hr * u(rng) : 0.0, hr > 0 ? hr * u(rng) : 0.0};
  p.zl = z(rng);
  p.zr = z(rng);
  return p;
}

// The left cell loses hn_l + to_left.h, the right one gains hn_r - to_right.h:
// the same flux to round-off, which the edge's mass flux is.
TEST(ScalarTransport, EdgeMassFluxIsTheFluctuationsFlux) {
  std::mt19937 rng(7);
  for (int k = 0; k < 20000; ++k) {
    const Pair p = random_pair(rng);
    const auto f = cartesian_edge<0>(p.l, p.zl, p.r, p.zr, kPhysics);
    const double F = edge_mass_flux(p.l.hu, p.r.hu, f, true);
    const double from_left = p.l.hu + f.to_left.h, from_right = p.r.hu - f.to_right.h;
    const double scale = std::abs(p.l.hu) + std::abs(p.r.hu) + std::abs(f.to_left.h) + std::abs(f.to_right.h);
    EXPECT_NEAR(F, from_left, 1e-14 * scale + 1e-300) << k;
    EXPECT_NEAR(F, from_right, 1e-14 * scale + 1e-300) << k;
    EXPECT_EQ(edge_mass_flux(p.l.hu, p.r.hu, f, false), 0.0);
  }
}

// The mirrored edge (left and right swapped, normal reversed) carries the
// opposite flux bit for bit: scalars keep the solver's symmetry.
TEST(ScalarTransport, EdgeMassFluxIsAntisymmetric) {
  std::mt19937 rng(11);
  for (int k = 0; k < 20000; ++k) {
    const Pair p = random_pair(rng);
    const State<double> ml{p.r.h, -p.r.hu, p.r.hv}, mr{p.l.h, -p.l.hu, p.l.hv};
    const double F = edge_mass_flux(p.l.hu, p.r.hu, cartesian_edge<0>(p.l, p.zl, p.r, p.zr, kPhysics), true);
    const double G = edge_mass_flux(ml.hu, mr.hu, cartesian_edge<0>(ml, p.zr, mr, p.zl, kPhysics), true);
    EXPECT_EQ(F, -G) << k;
  }
}

// A wall (the mirror image beyond the edge) lets no water through.
TEST(ScalarTransport, NoFluxThroughAWall) {
  std::mt19937 rng(3);
  for (int k = 0; k < 5000; ++k) {
    const Pair p = random_pair(rng);
    const State<double> ghost{p.l.h, -p.l.hu, p.l.hv};
    const auto f = cartesian_edge<0>(p.l, p.zl, ghost, p.zl, kPhysics);
    EXPECT_EQ(edge_mass_flux(p.l.hu, ghost.hu, f, true), 0.0) << k;
  }
}

ScalarStencil<double> random_stencil(std::mt19937& rng, double c_all = -1) {
  std::uniform_real_distribution<double> flux(-0.4, 0.4), c(0, 5);
  const auto pick = [&] { return c_all >= 0 ? c_all : c(rng); };
  return {flux(rng), flux(rng), flux(rng), flux(rng), pick(), pick(), pick(), pick(), pick()};
}

// Consistency with continuity: a uniform concentration stays uniform, to
// round-off, whatever the fluxes; c = 1 exactly.
TEST(ScalarTransport, UniformConcentrationStaysUniform) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> h(0, 2);
  for (int k = 0; k < 20000; ++k) {
    const double c0 = k % 2 ? 1.0 : 0.37;
    const ScalarStencil<double> s = random_stencil(rng, c0);
    const double c1 = transported_concentration(s, h(rng), 0.5, 1.0, 1.0);
    if (c0 == 1.0) {
      EXPECT_EQ(c1, 1.0) << k;
    } else {
      EXPECT_NEAR(c1, c0, 8e-16 * c0 * 4) << k;
    }
  }
}

// No new extremum: the result lies between the cell's own and its inflowing
// neighbours' concentrations, also where a step would empty the cell.
TEST(ScalarTransport, NoNewExtremum) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> h(0, 0.3);
  for (int k = 0; k < 20000; ++k) {
    const ScalarStencil<double> s = random_stencil(rng);
    const double c1 = transported_concentration(s, h(rng), 1.0, 1.0, 1.0);
    double lo = s.c, hi = s.c;
    for (auto [in, c] : {std::pair{s.fw > 0, s.cw}, {s.fe < 0, s.ce}, {s.fs > 0, s.cs}, {s.fn < 0, s.cn}}) {
      if (in) lo = std::min(lo, c), hi = std::max(hi, c);
    }
    EXPECT_GE(c1, lo) << k;
    EXPECT_LE(c1, hi) << k;
  }
}

// Upwind in one dimension: the cell keeps what stays and mixes in what enters.
TEST(ScalarTransport, OneDimensionalUpwindStep) {
  // h = 1, flux 0.25 in through west with c = 2, out through east: c' = (1 * 1 - 0.25 * 1 + 0.25 * 2) / 1.
  const ScalarStencil<double> s{0.25, 0.25, 0, 0, 1.0, 2.0, 7.0, 9.0, 9.0};
  EXPECT_DOUBLE_EQ(transported_concentration(s, 1.0, 1.0, 1.0, 1.0), 1.25);
}

// Rain brings its concentration, infiltration takes the water's own; a sink
// takes the cell's, a source brings its own.
TEST(ScalarTransport, ForcingOfAScalar) {
  ForcingDepths moved;
  moved.rain = 0.01;
  moved.infiltration = 0.004;
  const double h = 0.2, c = 3.0;
  // Rain without solute: the amount is kept, diluted.
  const double diluted = forced_scalar(h * c, h, moved, 0.0);
  EXPECT_NEAR(diluted, h * c * (h + 0.01 - 0.004) / (h + 0.01), 1e-15);
  // Rain of the cell's own concentration: the concentration is kept.
  EXPECT_NEAR(forced_scalar(h * c, h, moved, c) / (h + 0.01 - 0.004), c, 1e-14);
  // Everything infiltrates: nothing is left.
  moved.infiltration = h + moved.rain;
  EXPECT_EQ(forced_scalar(h * c, h, moved, 1.0), 0.0);
  EXPECT_NEAR(sourced_scalar(h * c, h, 0.05, 10.0), h * c + 0.5, 1e-15);
  EXPECT_NEAR(sourced_scalar(h * c, h, -0.05, 10.0) / (h - 0.05), c, 1e-15);
  EXPECT_EQ(concentration(0.0, 0.0), 0.0);
  EXPECT_EQ(ghost_concentration(BoundaryKind::open, 4.0, 2.0), 4.0);
  EXPECT_EQ(ghost_concentration(BoundaryKind::inflow, 4.0, 2.0), 2.0);
}

}  // namespace
}  // namespace shallows
