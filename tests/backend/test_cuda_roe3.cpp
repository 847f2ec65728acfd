// SPDX-License-Identifier: MIT
// CUDA executor of the third-order scheme (roe3): agreement with the CPU
// executor (S003-T3, and an odd-sized grid with masked cells and every
// boundary kind), batched advance against single steps, output snapshots,
// C-property with and without dry islands in both precisions, mass
// conservation behind walls, a rank's path (rate reducer, halo boxes), a
// small run for compute-sanitizer. Every test
// skips where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "shallows/solver/backend.hpp"
#include "shallows/solver/seed_problems.hpp"
#include "shallows/solver/simulation.hpp"
#include "support/gpu.hpp"
#include "support/measures.hpp"
#include "support/problems.hpp"
#include "support/smooth_flows.hpp"

namespace cuda_roe3_tests {

using namespace shallows;

const std::vector<Precision> kPrecisions{Precision::double_precision, Precision::single_precision};

const char* precision_name(Precision p) { return p == Precision::single_precision ? "float" : "double"; }

BackendOptions options(const std::string& kind) {
  BackendOptions o;
  o.kind = kind;
  o.threads = 2;
  o.track_maxima = false;
  return o;
}

// S003-T3 (solver/seed_problems.hpp), run past its end time by the tests that step it.
Problem s003_t3(Precision precision, index_t n = 64, bool walls_everywhere = false) {
  Problem p = seeds::s003_t3(n, Scheme::roe3, precision, walls_everywhere);
  p.t_end = 1e30;
  return p;
}

using test_support::rel_l1;

// Runs p to time t on the CPU and the GPU and checks they agree: same steps
// and time, relative L1 of h, hu, hv (and of the maxima where tracked)
// within 1e-12 (double) or 1e-5 (float), and the wave has moved.
void expect_cpu_gpu_agree(const Problem& p, double t, bool track_maxima) {
  const char* prec = precision_name(p.precision);
  BackendOptions o = options("cpu");
  o.track_maxima = track_maxima;
  Simulation cpu(p, o);
  o.kind = "cuda";
  Simulation gpu(p, o);
  cpu.advance_to(t);
  gpu.advance_to(t);
  EXPECT_EQ(gpu.steps(), cpu.steps()) << prec;
  EXPECT_EQ(gpu.time(), cpu.time()) << prec;
  const Fields fc = cpu.state(), fg = gpu.state();
  const double tol = p.precision == Precision::single_precision ? 1e-5 : 1e-12;
  const double dh = rel_l1(fg.h, fc.h), dhu = rel_l1(fg.hu, fc.hu), dhv = rel_l1(fg.hv, fc.hv);
  std::printf("  %s: %lld steps, rel L1 h %.2e hu %.2e hv %.2e\n", prec, static_cast<long long>(gpu.steps()), dh,
              dhu, dhv);
  EXPECT_LE(dh, tol) << prec;
  EXPECT_LE(dhu, tol) << prec;
  EXPECT_LE(dhv, tol) << prec;
  if (track_maxima) {
    const Maxima mc = cpu.maxima(), mg = gpu.maxima();
    EXPECT_LE(rel_l1(mg.max_h, mc.max_h), tol) << prec;
    EXPECT_LE(rel_l1(mg.max_speed, mc.max_speed), tol) << prec;
  }
  // The wave has moved: the comparison is not of two initial states.
  EXPECT_GT(rel_l1(fg.h, p.h), 1e-4) << prec;
}

TEST(CudaRoe3, BackendIsTheRoe3Executor) {
  SHALLOWS_REQUIRE_GPU();
  auto b = make_backend(s003_t3(Precision::double_precision, 16), options("cuda"));
  EXPECT_EQ(b->name(), "cuda-roe3");
}

TEST(CudaRoe3, AgreesWithCpuOnS003T3) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) expect_cpu_gpu_agree(s003_t3(prec), 0.05, false);
}

// A grid whose sizes are no multiple of the GPU's strips (30 columns) or
// chunks, with an inactive (NaN bed) block in the wave's path, a level
// condition on the west, inflow on the south, open east, wall north: every
// edge kind and every strip/chunk border of the GPU kernels is crossed.
TEST(CudaRoe3, AgreesWithCpuOnMaskedOddGrid) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    Problem p = test_support::make_problem(
        97, 71, 0, 2, 0, 1.5,
        [](double x, double y) { return -0.6 + 0.1 * std::sin(3 * x) * std::cos(2 * y); },
        [](double x, double y) { return (x - 0.8) * (x - 0.8) + (y - 0.7) * (y - 0.7) <= 0.04 ? 0.3 : 0.0; });
    for (index_t j = 30; j < 40; ++j) {
      for (index_t i = 60; i < 66; ++i) p.z[static_cast<std::size_t>(j * p.grid.nx + i)] = std::nan("");
    }
    p.bc(Side::west) = {BoundaryKind::level, 0.05};
    p.bc(Side::east) = {BoundaryKind::open, 0};
    p.bc(Side::south) = {BoundaryKind::inflow, 0.02};
    p.bc(Side::north) = {BoundaryKind::wall, 0};
    p.scheme = Scheme::roe3;
    p.cfl = 0.9;
    p.precision = prec;
    p.t_end = 1e30;
    expect_cpu_gpu_agree(p, 0.1, true);
  }
}

// Batched advance (time control on the device) against single steps.
TEST(CudaRoe3, BatchedAdvanceEqualsSingleSteps) {
  SHALLOWS_REQUIRE_GPU();
  const Problem p = s003_t3(Precision::double_precision, 48);
  auto batched = make_backend(p, options("cuda"));
  auto stepped = make_backend(p, options("cuda"));
  const AdvanceResult r = batched->advance(0.0, 0.03, 1000000);
  double t = 0;
  index_t steps = 0;
  while (t < 0.03) {
    const double remaining = 0.03 - t;
    const double dt = stepped->step(t, remaining);
    t = dt >= remaining ? 0.03 : t + dt;
    ++steps;
  }
  EXPECT_EQ(r.t, 0.03);
  EXPECT_EQ(r.steps, steps);
  Fields fb, fs;
  batched->read_state(fb);
  stepped->read_state(fs);
  EXPECT_EQ(fb.h, fs.h);
  EXPECT_EQ(fb.hu, fs.hu);
  EXPECT_EQ(fb.hv, fs.hv);
}

// The path of a distributed run's rank (Problem::owned set): each step's
// rate goes through the reducer between two graphs, and halo boxes pack and
// unpack the state. Owning the whole grid, with the reducer passing the rate
// on, it steps as one process does, bit for bit; a box packed from one
// executor and unpacked into another carries its cells.
TEST(CudaRoe3, RankPathStepsAsOneProcess) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = s003_t3(prec, 48);
    Problem ranked = p;
    ranked.owned = CellBox{0, 0, p.grid.nx, p.grid.ny};
    auto one = make_backend(p, options("cuda"));
    auto rank = make_backend(ranked, options("cuda"));
    int reductions = 0;
    rank->set_rate_reducer([&](double rate) {
      ++reductions;
      return rate;
    });
    double t = 0;
    for (int n = 0; n < 40; ++n) {
      const double dt = one->step(t, 1e30);
      EXPECT_EQ(rank->step(t, 1e30), dt) << precision_name(prec) << " step " << n;
      t += dt;
    }
    EXPECT_EQ(reductions, 40) << precision_name(prec);
    Fields a, b;
    one->read_state(a);
    rank->read_state(b);
    EXPECT_EQ(a.h, b.h) << precision_name(prec);
    EXPECT_EQ(a.hu, b.hu) << precision_name(prec);
    EXPECT_EQ(a.hv, b.hv) << precision_name(prec);

    // A box of the moved state into a fresh executor (still the initial
    // state), through host memory and through GPU memory (CUDA-aware MPI's).
    const CellBox box{5, 7, 30, 19};
    EXPECT_EQ(rank->halo()->box_bytes(box),
              3 * static_cast<std::size_t>(box.cells()) * (prec == Precision::single_precision ? 4 : 8));
    for (bool device : {false, true}) {
      auto fresh = make_backend(ranked, options("cuda"));
      test_support::expect_box_travels(*rank, b, *fresh, p.grid, box, device, precision_name(prec));
    }
  }
}

// An output snapshot holds the state of its time while the run steps on.
TEST(CudaRoe3, SnapshotHoldsTheStateOfItsTime) {
  SHALLOWS_REQUIRE_GPU();
  const Problem p = s003_t3(Precision::single_precision, 40);
  auto b = make_backend(p, options("cuda"));
  b->advance(0.0, 0.01, 1 << 30);
  Fields at_01;
  b->read_state(at_01);
  Snapshot s1 = b->snapshot();
  b->advance(0.01, 0.02, 1 << 30);
  Snapshot s2 = b->snapshot();
  Fields at_02;
  b->read_state(at_02);
  b->advance(0.02, 0.03, 1 << 30);
  const Fields f1 = s1.take(), f2 = s2.take();
  EXPECT_EQ(f1.h, at_01.h);
  EXPECT_EQ(f1.hu, at_01.hu);
  EXPECT_EQ(f2.h, at_02.h);
  EXPECT_EQ(f2.hv, at_02.hv);
  EXPECT_NE(f1.h, f2.h);
}

TEST(CudaRoe3, MassIsConservedWithWalls) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = s003_t3(prec, 64, true);
    Simulation cpu(p, options("cpu"));
    Simulation gpu(p, options("cuda"));
    const double v0 = gpu.volume();
    EXPECT_EQ(v0, cpu.volume()) << "the initial volume is summed in the CPU's order";
    gpu.advance_steps(300);
    cpu.advance_steps(300);
    const double v1 = gpu.volume();
    std::printf("  %s: volume %.17g -> %.17g (rel %.2e), CPU %.17g\n", precision_name(prec), v0, v1,
                std::abs(v1 - v0) / v0, cpu.volume());
    const bool single = prec == Precision::single_precision;
    EXPECT_LE(std::abs(v1 - v0) / v0, single ? 1e-5 : 1e-12) << precision_name(prec);
    EXPECT_LE(std::abs(v1 - cpu.volume()) / v0, single ? 1e-7 : 1e-14) << precision_name(prec);
  }
}

} // namespace

namespace cuda_roe3_tests {

// Small run for compute-sanitizer (tools/gpu-check.sh sanitize): odd sizes,
// partial strips and chunks, a masked block, maxima on.
TEST(CudaSanitizer, SmallRoe3Run) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    Problem p = s003_t3(prec, 37);
    for (index_t i = 10; i < 14; ++i) p.z[static_cast<std::size_t>(20 * p.grid.nx + i)] = std::nan("");
    BackendOptions o = options("cuda");
    o.track_maxima = true;
    auto b = make_backend(p, o);
    b->step(0.0, 1.0);
    b->advance(0.0, 0.02, 1 << 30);
    Fields f;
    Maxima m;
    b->read_state(f);
    b->read_maxima(m);
    EXPECT_GT(b->volume(), 0.0);
  }
}

// Two members of the smooth-flow family (tests/convergence/test_order3_family.cpp)
// on the GPU: the steady flow of issue 13 and the moving vortex, four grids
// dx = 0.5 ... 0.0625 m, double; order >= 2.7 between the two finest.
TEST(CudaRoe3, SmoothFlowFamilyIsThirdOrder) {
  SHALLOWS_REQUIRE_GPU();
  const double spacings[] = {0.5, 0.25, 0.125, 0.0625};
  const test_support::BumpFlow b{0.5, 1.0, 0.1};
  const test_support::MovingVortex v;
  double bump_prev = 0, bump_order = 0, vortex_prev = 0, vortex_order = 0;
  for (double dx : spacings) {
    const Problem p = b.problem(dx, 2);
    const double e = test_support::steady_error(b, p.grid, test_support::steady_state(b, p, "cuda")).h;
    bump_order = bump_prev > 0 ? std::log2(bump_prev / e) : 0;
    bump_prev = e;
    const Problem pv = v.problem(dx);
    Simulation sim(pv, options("cuda"));
    sim.advance_to(1.0);
    const double ev = test_support::l1_distance(sim.state(), v.exact(pv.grid, 1.0));
    vortex_order = vortex_prev > 0 ? std::log2(vortex_prev / ev) : 0;
    vortex_prev = ev;
    std::printf("  dx %-7.4f bump L1(h) %.3e order %.2f | vortex L1 %.3e order %.2f\n", dx, e, bump_order, ev,
                vortex_order);
  }
  EXPECT_GE(bump_order, 2.7);
  EXPECT_GE(vortex_order, 2.7);
}

} // namespace
