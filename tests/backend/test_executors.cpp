// SPDX-License-Identifier: MIT
// The properties every executor must have, checked on each of them with the
// same problems: the CPU grid executors (first and third order), the CPU mesh
// executor (cell and edge loops), the CUDA grid executors (the lagged and the
// plain first-order kernels, third order) and the CUDA mesh executor (its
// three designs). GPU executors skip themselves where no GPU is present.
// Agreement between executors (CPU = GPU bit for bit) is tested beside each
// GPU executor (test_cuda*.cpp, test_cuda_sweep.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "shallows/exec/cuda_backend.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/time_step.hpp"
#include "support/gpu.hpp"
#include "support/measures.hpp"
#include "support/mesh_problems.hpp"
#include "support/problems.hpp"

namespace shallows {
namespace {

const double kInf = std::numeric_limits<double>::infinity();

struct Executor {
  const char* name;
  bool gpu;
  bool mesh;
  Scheme scheme;
  const char* mesh_loop = "auto";  // meshes: cell or edge
  const char* variant = nullptr;   // CUDA grids: kernel (lagged, plain); CUDA meshes: cell layout (slots, shared)
};

const std::vector<Executor> kExecutors{
    {"cpu_grid_roe1", false, false, Scheme::roe1},
    {"cpu_grid_roe3", false, false, Scheme::roe3},
    {"cpu_mesh_cell", false, true, Scheme::roe1, "cell"},
    {"cpu_mesh_edge", false, true, Scheme::roe1, "edge"},
    {"cuda_grid_lagged", true, false, Scheme::roe1, "auto", "lagged"},
    {"cuda_grid_plain", true, false, Scheme::roe1, "auto", "plain"},
    {"cuda_grid_roe3", true, false, Scheme::roe3},
    {"cuda_mesh_slots", true, true, Scheme::roe1, "cell", "slots"},
    {"cuda_mesh_shared", true, true, Scheme::roe1, "cell", "shared"},
    {"cuda_mesh_edge", true, true, Scheme::roe1, "edge"},
};

struct Case {
  Executor executor;
  Precision precision;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.executor.name) +
         (info.param.precision == Precision::single_precision ? "_float" : "_double");
}

double tolerance(Precision p) { return p == Precision::single_precision ? 1e-5 : 1e-12; }

class Executors : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (GetParam().executor.gpu && !cuda_available()) GTEST_SKIP() << "no CUDA device (or no CUDA build)";
  }

  const Executor& executor() const { return GetParam().executor; }
  Precision precision() const { return GetParam().precision; }

  std::unique_ptr<Backend> make(const Problem& p, bool maxima = true) const {
    const Executor& e = executor();
    BackendOptions o;
    o.kind = e.gpu ? "cuda" : "cpu";
    o.threads = 2;
    o.track_maxima = maxima;
    o.arrival_threshold = 0.05;
    o.mesh_loop = e.mesh_loop;
#ifdef SHALLOWS_HAVE_CUDA
    if (e.gpu && !e.mesh && e.variant) {
      CudaOptions co;
      co.kernel = e.variant;
      return make_cuda_backend(p, o, co);
    }
#endif
    const test_support::MeshLayoutScope scope(e.mesh ? e.variant : nullptr);
    return make_backend(p, o);
  }

  // The executor's problem from point functions of the cell centre: a grid of nx x ny cells over
  // [0, 1.5] x [0, 1], or a perturbed, shuffled mixed mesh of the unit square; walls unless `bcs` names sides.
  Problem problem(const std::function<double(double, double)>& z, const std::function<double(double, double)>& eta,
                  const std::map<std::string, BoundaryCondition<double>>& bcs = {}) const {
    Problem p;
    if (executor().mesh) {
      RectangleMeshSpec spec;
      spec.nx = spec.ny = 24;
      spec.cells = RectangleCells::mixed;
      spec.perturbation = 0.3;
      spec.shuffle = true;
      spec.seed = 17;
      p = test_support::make_mesh_problem(spec, z, eta, bcs, CellOrdering::rcm);
    } else {
      p = test_support::make_problem(36, 24, 0, 1.5, 0, 1, z, eta);
      const char* sides[4] = {"west", "east", "south", "north"};
      for (int s = 0; s < 4; ++s)
        if (const auto it = bcs.find(sides[s]); it != bcs.end()) p.boundary[static_cast<std::size_t>(s)] = it->second;
    }
    p.scheme = executor().scheme;
    p.precision = precision();
    p.cfl = 0.9;
    return p;
  }

  // A dam break onto a bump that stands out of the low water, dry tolerance 1 mm: fronts, an island.
  Problem dam_break(const std::map<std::string, BoundaryCondition<double>>& bcs = {}) const {
    Problem p = problem(
        [](double x, double y) { return 0.8 * std::exp(-40 * ((x - 0.6) * (x - 0.6) + (y - 0.4) * (y - 0.4))) - 0.1 * y; },
        [](double x, double) { return x < 0.3 ? 0.6 : 0.05; }, bcs);
    p.physics.h_dry = 1e-3;
    p.physics.n_manning = 0.02;
    return p;
  }
};

const std::map<std::string, BoundaryCondition<double>> kOpenSides{
    {"west", {BoundaryKind::inflow, 0.2}}, {"east", {BoundaryKind::open, 0}}, {"north", {BoundaryKind::level, 0.1}}};

// A lake at rest over a rough bowl with two islands stays at rest to
// round-off for 500 steps, the islands dry (the C-property, seeds 000, 003).
TEST_P(Executors, LakeAtRestWithIslandsStaysAtRest) {
  Problem p = problem(
      [](double x, double y) { return test_support::island_bowl(x / 1.5, y); }, [](double, double) { return 0.0; });
  std::size_t dry = 0;
  for (double h : p.h) dry += h == 0 ? 1 : 0;
  ASSERT_GT(dry, 10u) << "the islands must stand out of the lake";
  auto b = make(p, false);
  const AdvanceResult a = b->advance(0.0, kInf, 500);
  ASSERT_EQ(a.steps, 500);
  Fields f;
  b->read_state(f);
  const test_support::LakeDeviation dev = test_support::lake_deviation(p, f);
  EXPECT_LE(dev.eta, tolerance(precision()));
  EXPECT_LE(dev.velocity, tolerance(precision()));
  EXPECT_EQ(dev.island_depth, 0.0);
}

// Behind walls the volume changes only by what the positivity fixes added
// (Backend::positivity_volume), to round-off.
TEST_P(Executors, VolumeBehindWallsChangesByThePositivityAccountAlone) {
  const Problem p = dam_break();
  auto b = make(p);
  const double v0 = b->volume();
  b->advance(0.0, kInf, 300);
  const double v1 = b->volume(), added = b->positivity_volume();
  EXPECT_GE(added, 0.0);
  EXPECT_LE(std::abs(v1 - v0 - added) / v0, tolerance(precision()));
}

// Two runs of one problem are the same bits: state, maxima, steps and time.
TEST_P(Executors, RunsAreBitIdentical) {
  const Problem p = dam_break(kOpenSides);
  const auto run = [&] {
    auto b = make(p);
    const AdvanceResult a = b->advance(0.0, 0.3, index_t(1) << 30);
    Fields f;
    b->read_state(f);
    Maxima m;
    b->read_maxima(m);
    return std::tuple{a.steps, a.t, f, m};
  };
  const auto [steps_a, t_a, f_a, m_a] = run();
  const auto [steps_b, t_b, f_b, m_b] = run();
  EXPECT_EQ(steps_a, steps_b);
  EXPECT_EQ(t_a, 0.3);
  EXPECT_EQ(t_b, 0.3);
  for (const auto& [a, b, what] : {std::tuple{&f_a.h, &f_b.h, "h"}, std::tuple{&f_a.hu, &f_b.hu, "hu"},
                                   std::tuple{&f_a.hv, &f_b.hv, "hv"}, std::tuple{&m_a.max_h, &m_b.max_h, "max_h"},
                                   std::tuple{&m_a.max_speed, &m_b.max_speed, "max_speed"},
                                   std::tuple{&m_a.arrival_time, &m_b.arrival_time, "arrival_time"}})
    EXPECT_TRUE(test_support::bitwise_equal(*a, *b)) << what;
}

// advance() to two targets in a row takes the steps that step() calls take
// when each clips its last step to land on the target, with the same bits.
TEST_P(Executors, AdvanceLandsOnTargetsAsStepByStep) {
  const Problem p = dam_break(kOpenSides);
  auto batched = make(p), stepped = make(p);
  double t = 0;
  index_t steps = 0;
  for (double target : {0.125, 0.25}) {
    while (t < target) {
      const double remaining = target - t;
      const double dt = stepped->step(t, remaining);
      t = dt >= remaining ? target : t + dt;
      ++steps;
    }
  }
  const AdvanceResult a1 = batched->advance(0.0, 0.125, index_t(1) << 30);
  const AdvanceResult a2 = batched->advance(a1.t, 0.25, index_t(1) << 30);
  EXPECT_EQ(a1.t, 0.125);
  EXPECT_EQ(a2.t, 0.25);
  EXPECT_EQ(a1.steps + a2.steps, steps);
  Fields fb, fs;
  batched->read_state(fb);
  stepped->read_state(fs);
  EXPECT_TRUE(test_support::bitwise_equal(fb.h, fs.h));
  EXPECT_TRUE(test_support::bitwise_equal(fb.hu, fs.hu));
  EXPECT_TRUE(test_support::bitwise_equal(fb.hv, fs.hv));
  Maxima mb, ms;
  batched->read_maxima(mb);
  stepped->read_maxima(ms);
  EXPECT_TRUE(test_support::bitwise_equal(mb.max_h, ms.max_h));
  EXPECT_TRUE(test_support::bitwise_equal(mb.arrival_time, ms.arrival_time));
}

// A snapshot holds the state of its time while the run steps on before it is taken.
TEST_P(Executors, SnapshotsHoldTheStatesOfTheirTimes) {
  const Problem p = dam_break(kOpenSides);
  auto a = make(p, false), b = make(p, false);
  Fields ref0, ref1;
  b->read_state(ref0);
  b->advance(0.0, 0.05, index_t(1) << 30);
  b->read_state(ref1);
  ASSERT_FALSE(test_support::bitwise_equal(ref0.h, ref1.h)) << "the test needs changing states";
  Snapshot s0 = a->snapshot();
  a->advance(0.0, 0.05, index_t(1) << 30);
  Snapshot s1 = a->snapshot();
  a->advance(0.05, 0.1, index_t(1) << 30);
  const Fields f0 = s0.take(), f1 = s1.take();
  EXPECT_TRUE(test_support::bitwise_equal(f0.h, ref0.h));
  EXPECT_TRUE(test_support::bitwise_equal(f0.hu, ref0.hu));
  EXPECT_TRUE(test_support::bitwise_equal(f1.h, ref1.h));
  EXPECT_TRUE(test_support::bitwise_equal(f1.hv, ref1.hv));
  EXPECT_FALSE(s0.valid());
}

// A state that is no longer finite stops the run with an error naming the time, through step() and advance().
TEST_P(Executors, NonFiniteStateThrows) {
  Problem p = dam_break();
  std::size_t wet = 0;
  while (p.h[wet] == 0) ++wet;
  p.h[wet] = std::numeric_limits<double>::quiet_NaN();
  auto b = make(p);
  try {
    b->advance(0.0, 1.0, index_t(1) << 30);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no longer finite at t = 0"), std::string::npos) << e.what();
  }
  auto c = make(p);
  EXPECT_THROW(c->step(0.0, 1.0), std::runtime_error);
}

// A domain dry everywhere has no wave speed: a step lasts the dry bound (time_step.hpp).
TEST_P(Executors, DryDomainStepsTheDryBound) {
  Problem p = dam_break();
  p.h.assign(p.h.size(), 0.0);
  auto b = make(p);
  EXPECT_EQ(b->step(0.0, kInf), dry_time_step(p));
}

std::vector<Case> every_case() {
  std::vector<Case> out;
  for (const Executor& e : kExecutors)
    for (Precision p : {Precision::double_precision, Precision::single_precision}) out.push_back({e, p});
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, Executors, ::testing::ValuesIn(every_case()), case_name);

} // namespace
} // namespace shallows
