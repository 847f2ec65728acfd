// SPDX-License-Identifier: MIT
// Properties of the edge fluctuations: consistency, the fluctuations add up
// to the flux difference, well-balancing, wet/dry walls, mirror symmetry,
// frame invariance.
#include <gtest/gtest.h>

#include <cmath>

#include "shallows/physics/riemann/roe.hpp"

namespace {

using namespace shallows;
using S = State<double>;
const PhysicsParams<double> params{9.81, 1e-6, 0.0};

void expect_state_eq(const S& a, const S& b) {
  EXPECT_EQ(a.h, b.h);
  EXPECT_EQ(a.hu, b.hu);
  EXPECT_EQ(a.hv, b.hv);
}

TEST(Riemann, EqualStatesOnFlatBedGiveNoFluctuation) {
  const S q{1.5, 0.7, -0.2};
  const auto f = roe_x(q, 0.0, q, 0.0, params);
  expect_state_eq(f.to_left, {0, 0, 0});
  expect_state_eq(f.to_right, {0, 0, 0});
  EXPECT_NEAR(f.speed, 0.7 / 1.5 + std::sqrt(9.81 * 1.5), 1e-12);
}

TEST(Riemann, FluctuationsSumToFluxDifferencePlusBedTerm) {
  const S l{2.0, 1.0, 0.3}, r{1.2, -0.4, 0.5};
  const double zl = -1.0, zr = -0.7;
  const auto f = roe_x(l, zl, r, zr, params);
  const auto flux = [](const S& q) {
    const double u = q.hu / q.h;
    return S{q.hu, q.hu * u + 0.5 * 9.81 * q.h * q.h, q.hv * u};
  };
  const S df = flux(r) - flux(l);
  const double bed = 9.81 * 0.5 * (l.h + r.h) * (zr - zl);
  EXPECT_NEAR(f.to_left.h + f.to_right.h, df.h, 1e-12);
  EXPECT_NEAR(f.to_left.hu + f.to_right.hu, df.hu + bed, 1e-12);
  EXPECT_NEAR(f.to_left.hv + f.to_right.hv, df.hv, 1e-12);
}

TEST(Riemann, LakeAtRestAcrossBedStepGivesNoFluctuation) {
  const double eta = 0.25;
  const double zl = -1.3, zr = -0.2;
  const auto f = roe_x(S{eta - zl, 0, 0}, zl, S{eta - zr, 0, 0}, zr, params);
  EXPECT_NEAR(f.to_left.hu, 0, 1e-15);
  EXPECT_NEAR(f.to_right.hu, 0, 1e-15);
  EXPECT_EQ(f.to_left.h, 0);
  EXPECT_EQ(f.to_right.h, 0);
}

TEST(Riemann, EmergingBottomActsAsWall) {
  // Water at rest below a dry bank: nothing moves, the bank stays dry.
  const auto f = roe_x(S{0.5, 0, 0}, -1.0, S{0, 0, 0}, 0.0, params);
  expect_state_eq(f.to_left, {0, 0, 0});
  expect_state_eq(f.to_right, {0, 0, 0});
  // Water running at the bank is reflected: no mass crosses.
  const auto g = roe_x(S{0.5, 0.4, 0}, -1.0, S{0, 0, 0}, 0.0, params);
  EXPECT_EQ(g.to_right.h, 0);
  EXPECT_EQ(g.to_left.h, -0.4);  // cancels the cell's own outflow 0.4
}

TEST(Riemann, DryBedFrontMovesMassRight) {
  const auto f = roe_x(S{1.0, 0, 0}, 0.0, S{0, 0, 0}, 0.0, params);
  EXPECT_LT(f.to_right.h, 0);  // right cell gains water: h -= dt/dx * to_right.h
  EXPECT_NEAR(f.speed, 2 * std::sqrt(9.81), 1e-12);
}

TEST(Riemann, MirroredEdgeGivesMirroredFluctuationsBitForBit) {
  const S cases[][2] = {{{2.0, 1.0, 0.3}, {1.2, -0.4, 0.5}},
                        {{1.0, 3.5, 0.0}, {0.8, 3.9, 0.1}},   // supercritical
                        {{0.1, -0.3, 0.0}, {2.0, -0.2, 0.0}},  // transonic rarefaction
                        {{10, -350, 0}, {10, 350, 0}},         // vacuum: HLL branch
                        {{1.0, 0.2, 0.1}, {0, 0, 0}}};          // dry side
  for (const auto& c : cases) {
    const double zl = -0.3, zr = -0.1;
    const auto f = roe_x(c[0], zl, c[1], zr, params);
    const auto m = roe_x(S{c[1].h, -c[1].hu, c[1].hv}, zr, S{c[0].h, -c[0].hu, c[0].hv}, zl, params);
    expect_state_eq(m.to_left, {f.to_right.h, -f.to_right.hu, f.to_right.hv});
    expect_state_eq(m.to_right, {f.to_left.h, -f.to_left.hu, f.to_left.hv});
    EXPECT_EQ(m.speed, f.speed);
  }
}

TEST(Riemann, YEdgeIsTheXEdgeWithSwappedComponents) {
  const S l{2.0, 0.3, 1.0}, r{1.2, 0.5, -0.4};
  const auto fy = roe_y(l, -0.5, r, -0.2, params);
  const auto fx = roe_x(S{l.h, l.hv, l.hu}, -0.5, S{r.h, r.hv, r.hu}, -0.2, params);
  EXPECT_EQ(fy.to_left.h, fx.to_left.h);
  EXPECT_EQ(fy.to_left.hv, fx.to_left.hu);
  EXPECT_EQ(fy.to_left.hu, fx.to_left.hv);
  EXPECT_EQ(fy.to_right.hv, fx.to_right.hu);
  EXPECT_EQ(fy.speed, fx.speed);
}

TEST(Riemann, RotatedNormalMatchesCartesianEdges) {
  const S l{2.0, 0.3, 1.0}, r{1.2, 0.5, -0.4};
  const auto fx = roe_x(l, -0.5, r, -0.2, params);
  const auto fn = roe_normal(l, -0.5, r, -0.2, 1.0, 0.0, params);
  EXPECT_NEAR(fn.to_left.hu, fx.to_left.hu, 1e-14);
  EXPECT_NEAR(fn.to_right.hv, fx.to_right.hv, 1e-14);
  // A 45-degree edge: the fluctuations rotate with the frame.
  const double s = std::sqrt(0.5);
  const auto rot = [s](const S& q) { return S{q.h, s * (q.hu - q.hv), s * (q.hu + q.hv)}; };
  const auto f45 = roe_normal(rot(l), -0.5, rot(r), -0.2, s, s, params);
  const S expect = rot(fx.to_left);
  EXPECT_NEAR(f45.to_left.h, expect.h, 1e-12);
  EXPECT_NEAR(f45.to_left.hu, expect.hu, 1e-12);
  EXPECT_NEAR(f45.to_left.hv, expect.hv, 1e-12);
}

TEST(Riemann, FloatAndDoubleAgree) {
  const PhysicsParams<float> pf{9.81f, 1e-6f, 0.0f};
  const auto fd = roe_x(S{2.0, 1.0, 0.3}, -1.0, S{1.2, -0.4, 0.5}, -0.7, params);
  const auto ff = roe_x(State<float>{2.0f, 1.0f, 0.3f}, -1.0f, State<float>{1.2f, -0.4f, 0.5f}, -0.7f, pf);
  EXPECT_NEAR(ff.to_left.hu, fd.to_left.hu, 1e-5 * std::abs(fd.to_left.hu) + 1e-6);
  EXPECT_NEAR(ff.to_right.h, fd.to_right.h, 1e-5 * std::abs(fd.to_right.h) + 1e-6);
}

} // namespace
