// SPDX-License-Identifier: MIT
// CUDA executor: properties on the GPU and agreement with the CPU executor.
// Every GPU test skips, visibly, where no CUDA device is present (CI); they
// run on a GPU machine through tools/gpu-check.sh. Problems are built here
// by hand, independent of the case-file loader.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "shallows/exec/cuda_backend.hpp"
#include "shallows/solver/seed_problems.hpp"
#include "shallows/solver/simulation.hpp"
#include "support/gpu.hpp"
#include "support/halo_overlap.hpp"
#include "support/measures.hpp"
#include "support/problems.hpp"

#ifndef SHALLOWS_HAVE_CUDA
TEST(CudaBackend, NotBuilt) { GTEST_SKIP() << "this build has no CUDA backend: GPU tests skipped"; }
#else

namespace {

using namespace shallows;

const double kInf = std::numeric_limits<double>::infinity();
const std::vector<std::string> kKernels{"lagged", "plain"};
const std::vector<Precision> kPrecisions{Precision::double_precision, Precision::single_precision};

const char* precision_name(Precision p) { return p == Precision::single_precision ? "float" : "double"; }

using test_support::make_problem;

// The seed problems (solver/seed_problems.hpp) at the sizes and end times of these tests.
Problem s000_t1(Precision precision, int level = 0) { return seeds::s000_t1(level, 5, precision); }
using seeds::s000_t2;
Problem s004_t2(Precision precision, index_t n = 128) {
  Problem p = seeds::s004("s004-t2", n, precision);
  p.t_end = 0.5;
  return p;
}

// Dam break around an inactive block (NaN bed) and a ragged NaN border,
// water released into a dry valley.
Problem masked_dam_break(Precision precision) {
  auto z = [](double x, double y) {
    if (x > 0.8 && x < 1.0 && y > 0.2 && y < 0.7) return std::numeric_limits<double>::quiet_NaN();
    if (y > 0.95 && std::fmod(x * 10, 1.0) < 0.4) return std::numeric_limits<double>::quiet_NaN();
    return 0.1 * x;
  };
  Problem p = make_problem(80, 40, 0, 2, 0, 1, z, [](double x, double) { return x < 0.5 ? 0.6 : 0.0; });
  p.precision = precision;
  p.cfl = 0.9;
  p.t_end = 0.4;
  return p;
}

// A basin whose sides carry the four boundary kinds, rotated by `rotation`
// so that every side sees every kind; a wet/dry bump in the middle.
Problem all_boundaries(Precision precision, int rotation) {
  Problem p = make_problem(
      64, 48, 0, 4, 0, 3, [](double x, double y) { return 0.4 * std::exp(-((x - 2) * (x - 2) + (y - 1.5) * (y - 1.5))); },
      [](double x, double) { return x < 1 ? 0.5 : 0.3; });
  const BoundaryCondition<double> kinds[4] = {
      {BoundaryKind::wall, 0}, {BoundaryKind::open, 0}, {BoundaryKind::inflow, 0.2}, {BoundaryKind::level, 0.45}};
  for (int s = 0; s < 4; ++s) p.boundary[static_cast<std::size_t>(s)] = kinds[(s + rotation) % 4];
  p.precision = precision;
  p.cfl = 0.9;
  p.t_end = 0.5;
  return p;
}

// Dry cells with a residue: depth under h_dry and a velocity, so they are
// computed once (advance_cell zeroes the velocity) and skipped afterwards.
Problem dry_with_residue(Precision precision) {
  Problem p = s004_t2(precision, 160);
  for (std::size_t k = 0; k < p.h.size(); ++k) {
    if (p.h[k] == 0.0) {
      p.h[k] = 5e-4;
      p.hu[k] = 1e-3;
      p.hv[k] = -2e-3;
    }
  }
  return p;
}

struct RunResult {
  Fields f;
  index_t steps = 0;
  double t = 0;
};

BackendOptions plain_options(const std::string& kind) {
  BackendOptions o;
  o.kind = kind;
  o.track_maxima = false;
  return o;
}

// Through Simulation (Backend::step once per step), as the command line runs.
RunResult run_simulation(const Problem& p, const std::string& kind, double t_end) {
  Simulation sim(p, plain_options(kind));
  sim.advance_to(t_end);
  return {sim.state(), sim.steps(), sim.time()};
}

// Through the CUDA executor's batched advance.
RunResult run_gpu(const Problem& p, const CudaOptions& co, double t_end, index_t max_steps = 1 << 30) {
  auto b = make_cuda_backend(p, plain_options("cuda"), co);
  const CudaAdvance a = b->advance(0.0, t_end, max_steps);
  RunResult r;
  b->read_state(r.f);
  r.steps = a.steps;
  r.t = a.t;
  return r;
}

CudaOptions kernel_options(const std::string& kernel, bool dry_skip = true, bool compact = true) {
  CudaOptions co;
  co.kernel = kernel;
  co.dry_skip = dry_skip;
  co.compact = compact;
  return co;
}

using test_support::bitwise_equal;
using test_support::rel_l1;

double tolerance(Precision p) { return p == Precision::single_precision ? 1e-5 : 1e-12; }

void expect_agree(const RunResult& gpu, const RunResult& cpu, Precision precision, const std::string& what) {
  ASSERT_EQ(gpu.f.h.size(), cpu.f.h.size()) << what;
  EXPECT_EQ(gpu.steps, cpu.steps) << what;
  EXPECT_EQ(gpu.t, cpu.t) << what;
  const double tol = tolerance(precision);
  EXPECT_LE(rel_l1(gpu.f.h, cpu.f.h), tol) << what << ": h";
  EXPECT_LE(rel_l1(gpu.f.hu, cpu.f.hu), tol) << what << ": hu";
  EXPECT_LE(rel_l1(gpu.f.hv, cpu.f.hv), tol) << what << ": hv";
  for (double h : gpu.f.h) {
    ASSERT_TRUE(std::isfinite(h) && h >= 0) << what << ": depth " << h;
  }
}

void expect_identical(const RunResult& a, const RunResult& b, const std::string& what) {
  EXPECT_EQ(a.steps, b.steps) << what;
  EXPECT_EQ(a.t, b.t) << what;
  EXPECT_TRUE(bitwise_equal(a.f.h, b.f.h)) << what << ": h differs";
  EXPECT_TRUE(bitwise_equal(a.f.hu, b.f.hu)) << what << ": hu differs";
  EXPECT_TRUE(bitwise_equal(a.f.hv, b.f.hv)) << what << ": hv differs";
}

void expect_same_fields(const Fields& a, const Fields& b, const std::string& what) {
  EXPECT_TRUE(bitwise_equal(a.h, b.h)) << what << ": h differs";
  EXPECT_TRUE(bitwise_equal(a.hu, b.hu)) << what << ": hu differs";
  EXPECT_TRUE(bitwise_equal(a.hv, b.hv)) << what << ": hv differs";
}

// ------------------------------------------------------------------ tests

TEST(CudaBackend, DeviceCountNeverThrows) {
  int n = -1;
  EXPECT_NO_THROW(n = cuda_device_count());
  EXPECT_GE(n, 0);
  if (n == 0) GTEST_SKIP() << "no CUDA device: nothing more to check";
}

TEST(CudaBackend, MassIsConservedWithWalls) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    Problem p = masked_dam_break(prec);
    Simulation cpu(p, plain_options("cpu"));
    Simulation gpu(p, plain_options("cuda"));
    const double v0 = gpu.volume();
    EXPECT_EQ(v0, cpu.volume()) << "the initial volume is summed in the CPU's order";
    gpu.advance_steps(600);
    cpu.advance_steps(600);
    const double v1 = gpu.volume();
    EXPECT_LE(std::abs(v1 - v0) / v0, prec == Precision::single_precision ? 1e-5 : 1e-12) << precision_name(prec);
    EXPECT_LE(std::abs(v1 - cpu.volume()) / v0, 1e-14) << precision_name(prec) << ": GPU and CPU volumes";
  }
}

TEST(CudaBackend, AgreesWithCpuOnS000T1) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = s000_t1(prec);
    const RunResult cpu = run_simulation(p, "cpu", p.t_end);
    expect_agree(run_simulation(p, "cuda", p.t_end), cpu, prec, std::string("S000-T1 step API ") + precision_name(prec));
    for (const std::string& kernel : kKernels) {
      expect_agree(run_gpu(p, kernel_options(kernel), p.t_end), cpu, prec,
                   "S000-T1 " + kernel + " " + precision_name(prec));
    }
  }
}

TEST(CudaBackend, AgreesWithCpuOnS000T2) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = s000_t2(prec);
    const RunResult cpu = run_simulation(p, "cpu", p.t_end);
    expect_agree(run_simulation(p, "cuda", p.t_end), cpu, prec, std::string("S000-T2 step API ") + precision_name(prec));
    for (const std::string& kernel : kKernels) {
      expect_agree(run_gpu(p, kernel_options(kernel), p.t_end), cpu, prec,
                   "S000-T2 " + kernel + " " + precision_name(prec));
    }
  }
}

TEST(CudaBackend, AgreesWithCpuOnS004T2WithDrySkipping) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = s004_t2(prec);
    const RunResult cpu = run_simulation(p, "cpu", p.t_end);
    for (const std::string& kernel : kKernels) {
      expect_agree(run_gpu(p, kernel_options(kernel, true), p.t_end), cpu, prec,
                   "S004-T2 " + kernel + " " + precision_name(prec));
    }
  }
}

TEST(CudaBackend, MaskedCellsAgreeWithCpu) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = masked_dam_break(prec);
    const RunResult cpu = run_simulation(p, "cpu", p.t_end);
    for (const std::string& kernel : kKernels) {
      const RunResult gpu = run_gpu(p, kernel_options(kernel), p.t_end);
      expect_agree(gpu, cpu, prec, "masked " + kernel + " " + precision_name(prec));
      for (std::size_t k = 0; k < p.z.size(); ++k) {
        if (std::isnan(p.z[k])) {
          ASSERT_EQ(gpu.f.h[k], 0.0) << "inactive cell " << k << " got water";
        }
      }
    }
  }
}

TEST(CudaBackend, EveryBoundaryKindAgreesWithCpu) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    for (int rotation = 0; rotation < 4; ++rotation) {
      const Problem p = all_boundaries(prec, rotation);
      const RunResult cpu = run_simulation(p, "cpu", p.t_end);
      for (const std::string& kernel : kKernels) {
        expect_agree(run_gpu(p, kernel_options(kernel), p.t_end), cpu, prec,
                     "boundaries rotation " + std::to_string(rotation) + " " + kernel + " " + precision_name(prec));
      }
    }
  }
}

// A rank's halo box (Problem::owned set), packed into host memory and into
// GPU memory (the buffers a CUDA-aware MPI reads and writes), unpacked into
// an executor still at the initial state: the box's cells arrive bit for
// bit and no other cell changes, by either path.
TEST(CudaBackend, HaloBoxesTravelThroughHostAndGpuMemory) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    Problem p = s000_t1(prec);
    p.owned = CellBox{0, 0, p.grid.nx, p.grid.ny};
    for (const std::string& kernel : kKernels) {
      const std::string label = kernel + " " + precision_name(prec);
      auto moved = make_cuda_backend(p, plain_options("cuda"), kernel_options(kernel));
      double t = 0;
      for (int n = 0; n < 20; ++n) t += moved->step(t, kInf);
      Fields b;
      moved->read_state(b);
      for (bool device : {false, true}) {
        auto fresh = make_cuda_backend(p, plain_options("cuda"), kernel_options(kernel));
        test_support::expect_box_travels(*moved, b, *fresh, p.grid, CellBox{20, 2, 70, 9}, device, label);
      }
    }
  }
}

// The lagged kernel's step with a halo exchange in flight: the inner chunks
// on a stream of their own beside it, the others after, with and without dry
// skipping and the chunk list (support/halo_overlap.hpp).
TEST(CudaBackend, LaggedStepBesideTheExchangeAsAfterIt) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    for (const auto& [skip, compact] : {std::pair{true, true}, std::pair{true, false}, std::pair{false, false}}) {
      const std::string label = std::string("lagged ") + precision_name(prec) + (skip ? ", dry skipping" : "") +
                                (compact ? ", chunk list" : "");
      const test_support::MakeBackend gpu = [skip, compact](const Problem& p) -> std::unique_ptr<Backend> {
        return make_cuda_backend(p, plain_options("cuda"), kernel_options("lagged", skip, compact));
      };
      test_support::expect_overlap_bits(gpu, Scheme::roe1, prec, label, 2, 320, 256);
    }
  }
}

TEST(CudaBackend, KernelsGiveIdenticalResults) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    for (const Problem& p : {s004_t2(prec), s000_t2(prec)}) {
      const RunResult ref = run_gpu(p, kernel_options("plain"), p.t_end);
      for (const std::string& kernel : kKernels) {
        expect_identical(run_gpu(p, kernel_options(kernel), p.t_end), ref,
                         kernel + " vs plain " + precision_name(prec));
      }
    }
  }
}

TEST(CudaBackend, DrySkippingGivesIdenticalResults) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    for (const Problem& p : {s004_t2(prec, 192), dry_with_residue(prec)}) {
      {
        const char* kernel = "lagged";  // plain does not skip
       for (bool compact : {true, false}) {
        SCOPED_TRACE(std::string(kernel) + (compact ? " with the chunk list" : " with every warp launched"));
        BackendOptions o = plain_options("cuda");
        auto skip = make_cuda_backend(p, o, kernel_options(kernel, true, compact));
        auto full = make_cuda_backend(p, o, kernel_options(kernel, false));
        // Step by step through part of the run, then batched: both paths.
        for (int k = 0; k < 20; ++k) {
          ASSERT_EQ(skip->step(0.0, 1e30), full->step(0.0, 1e30));
        }
        const CudaAdvance as = skip->advance(0.0, p.t_end, 1 << 30);
        const CudaAdvance af = full->advance(0.0, p.t_end, 1 << 30);
        RunResult rs, rf;
        skip->read_state(rs.f);
        full->read_state(rf.f);
        rs.steps = as.steps;
        rs.t = as.t;
        rf.steps = af.steps;
        rf.t = af.t;
        expect_identical(rs, rf, std::string("dry skipping ") + kernel + " " + precision_name(prec));
        const CudaStats ss = skip->stats(), sf = full->stats();
        EXPECT_LT(ss.chunks_computed, sf.chunks_computed) << kernel << ": no chunk was ever skipped";
        EXPECT_GT(ss.chunks_computed, 0) << kernel;
       }
      }
    }
  }
}

// Output snapshots are copied to the host on a stream of their own while
// the run goes on. Each must hold the state of its time, bit for bit: run
// `a` makes snapshots and steps on before taking them, run `b` (identical)
// is read with read_state at the same times. 512x512 cells, so that steps
// run while a snapshot's copy to the host is under way.
TEST(CudaBackend, SnapshotsHoldTheStatesOfTheirTimes) {
  SHALLOWS_REQUIRE_GPU();
  const std::vector<double> times{0.0, 0.05, 0.1, 0.15, 0.2, 0.25};
  for (Precision prec : kPrecisions) {
    const Problem p = s004_t2(prec, 512);
    for (const char* kernel : {"lagged", "plain"}) {
      SCOPED_TRACE(std::string(kernel) + " " + precision_name(prec));
      auto a = make_cuda_backend(p, plain_options("cuda"), kernel_options(kernel));
      auto b = make_cuda_backend(p, plain_options("cuda"), kernel_options(kernel));
      std::vector<Fields> ref(times.size());
      for (std::size_t k = 0; k < times.size(); ++k) {
        if (k > 0) b->advance(times[k - 1], times[k], 1 << 30);
        b->read_state(ref[k]);
        if (k > 0) {
          ASSERT_FALSE(bitwise_equal(ref[k].h, ref[k - 1].h)) << "the test needs changing states";
        }
      }

      // Snapshot k taken after the advance to t(k+1): at most two outstanding.
      Snapshot pending;
      std::size_t pending_k = 0;
      for (std::size_t k = 0; k < times.size(); ++k) {
        if (k > 0) a->advance(times[k - 1], times[k], 1 << 30);
        Snapshot s = a->snapshot();
        if (pending.valid()) {
          const Fields f = pending.take();
          expect_same_fields(f, ref[pending_k], "snapshot at t = " + std::to_string(times[pending_k]));
        }
        pending = std::move(s);
        pending_k = k;
      }
      const Fields last = pending.take();
      expect_same_fields(last, ref.back(), "last snapshot");

      // Three snapshots outstanding before any take(): the third snapshot()
      // must wait until another thread has taken the first (two host slots),
      // and overwrite neither slot still held.
      auto c = make_cuda_backend(p, plain_options("cuda"), kernel_options(kernel));
      Snapshot s0 = c->snapshot();
      c->advance(times[0], times[1], 1 << 30);
      Snapshot s1 = c->snapshot();
      c->advance(times[1], times[2], 1 << 30);
      std::atomic<bool> taking{false};
      Fields f0;
      std::thread taker([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        taking = true;
        f0 = s0.take();
      });
      Snapshot s2 = c->snapshot();
      EXPECT_TRUE(taking.load()) << "a third snapshot did not wait for a free host slot";
      c->advance(times[2], times[3], 1 << 30);  // and the run goes on
      taker.join();
      const Fields f2 = s2.take();
      const Fields f1 = s1.take();
      expect_same_fields(f0, ref[0], "first of three");
      expect_same_fields(f1, ref[1], "second of three");
      expect_same_fields(f2, ref[2], "third of three");

      // A snapshot dropped untaken gives its slot back.
      for (int k = 0; k < 4; ++k) c->snapshot();
      Fields f3;
      c->read_state(f3);
      expect_same_fields(c->snapshot().take(), f3, "after dropped snapshots");
    }
  }
}

// take() right after snapshot(), and two snapshots one step apart, on a grid
// whose copy to the host takes a while (2048x2048): take() must wait for the
// copy, and the next snapshot for the staging buffer. The flow runs
// into the south wall, so that the first rows (the first bytes copied and
// read) change from one snapshot to the next.
TEST(CudaBackend, SnapshotTakenAtOnceWaitsForItsCopy) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    Problem p = make_problem(2048, 2048, 0, 20, 0, 20, [](double, double) { return 0.0; },
                             [](double x, double) { return 1.0 + 0.1 * std::sin(x); });
    for (double& hv : p.hv) hv = -0.5;
    p.precision = prec;
    auto b = make_cuda_backend(p, plain_options("cuda"), kernel_options("lagged"));
    Fields previous;
    for (int k = 0; k < 3; ++k) {
      b->advance(0.01 * k, 0.01 * (k + 1), 1 << 30);
      Fields ref;
      b->read_state(ref);
      if (k > 0) {
        ASSERT_FALSE(std::equal(ref.h.begin(), ref.h.begin() + 2048, previous.h.begin()))
            << "the test needs a first row that changes";
      }
      expect_same_fields(b->snapshot().take(), ref, std::string("at once, ") + precision_name(prec));
      previous = std::move(ref);
    }
    // Two snapshots one step apart: the second must not overwrite the
    // staging buffer while the first is still being copied from it. (On an
    // H100 this passed even with that wait removed: the copies seem to be
    // serialised by the copy engine. The test stays for other hardware.)
    {
      // Both host slots allocated first (cudaHostAlloc takes long enough to
      // hide a missing wait).
      const Snapshot w0 = b->snapshot(), w1 = b->snapshot();
    }
    Fields ref1, ref2;
    b->read_state(ref1);
    Snapshot s1 = b->snapshot();
    b->step(0.03, 1.0);
    Snapshot s2 = b->snapshot();
    b->read_state(ref2);
    ASSERT_FALSE(bitwise_equal(ref1.h, ref2.h));
    expect_same_fields(s1.take(), ref1, std::string("one step apart, first, ") + precision_name(prec));
    expect_same_fields(s2.take(), ref2, std::string("one step apart, second, ") + precision_name(prec));
  }
}

// The same through Simulation, as `shallows run` uses it, with the snapshots
// taken on another thread (the writer thread of run_case).
TEST(CudaBackend, SimulationSnapshotsTakenOnAnotherThread) {
  SHALLOWS_REQUIRE_GPU();
  const Problem p = s000_t1(Precision::single_precision, 2);
  BackendOptions o = plain_options("cuda");
  o.track_maxima = true;
  Simulation sim(p, o), ref(p, o);
  std::vector<Snapshot> snaps;
  std::vector<Fields> expected;
  for (double t : {0.5, 1.0}) {
    sim.advance_to(t);
    ref.advance_to(t);
    snaps.push_back(sim.snapshot());
    expected.push_back(ref.state());
  }
  std::vector<Fields> got(snaps.size());
  std::thread writer([&] {
    for (std::size_t k = 0; k < snaps.size(); ++k) got[k] = snaps[k].take();
  });
  sim.advance_to(1.5);
  writer.join();
  for (std::size_t k = 0; k < got.size(); ++k) {
    expect_same_fields(got[k], expected[k], "snapshot " + std::to_string(k));
  }
  EXPECT_FALSE(bitwise_equal(expected[0].h, expected[1].h));
}

TEST(CudaBackend, MaximaAgreeWithCpu) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = s004_t2(prec, 96);
    BackendOptions o;
    o.track_maxima = true;
    o.arrival_threshold = 0.05;
    o.kind = "cpu";
    Simulation cpu(p, o);
    o.kind = "cuda";
    Simulation gpu(p, o);
    cpu.advance_to(0.3);
    gpu.advance_to(0.3);
    ASSERT_EQ(cpu.steps(), gpu.steps());
    // The default (lagged) kernel grows the maxima inside the step, with dry chunks skipped.
    const Maxima mc = cpu.maxima(), mg = gpu.maxima();
    ASSERT_EQ(mg.max_h.size(), mc.max_h.size());
    EXPECT_TRUE(bitwise_equal(mg.max_h, mc.max_h)) << precision_name(prec) << ": max_h";
    EXPECT_TRUE(bitwise_equal(mg.max_speed, mc.max_speed)) << precision_name(prec) << ": max_speed";
    EXPECT_TRUE(bitwise_equal(mg.arrival_time, mc.arrival_time)) << precision_name(prec) << ": arrival_time";
    EXPECT_TRUE(std::any_of(mc.arrival_time.begin(), mc.arrival_time.end(), [](double a) { return a > 0; }));
    // Back onto the device and out again (a restart): the same values.
    auto again = make_cuda_backend(p, o, CudaOptions{});
    again->load_maxima(mg);
    Maxima back;
    again->read_maxima(back);
    EXPECT_TRUE(bitwise_equal(back.max_h, mg.max_h) && bitwise_equal(back.max_speed, mg.max_speed) &&
                bitwise_equal(back.arrival_time, mg.arrival_time))
        << precision_name(prec) << ": maxima loaded and read back";
  }
}

// Gauges alone: read_cells copies the listed cells of the current state,
// the bits read_state gives, whichever buffer holds it.
TEST(CudaBackend, ReadCellsAreTheStatesCells) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = s004_t2(prec, 96);
    auto gpu = make_cuda_backend(p, plain_options("cuda"), CudaOptions{});
    const std::vector<std::vector<std::size_t>> lists{{0, 96 * 96 - 1, 4700, 4700, 95}, {4801, 12}};
    double t = 0;
    for (int steps : {0, 1, 4, 7}) {
      if (steps > 0) t = gpu->advance(t, p.t_end, steps).t;
      Fields all;
      gpu->read_state(all);
      for (const auto& cells : lists) {
        const Fields f = gpu->read_cells(cells);
        ASSERT_EQ(f.h.size(), cells.size());
        for (std::size_t k = 0; k < cells.size(); ++k) {
          const std::string what = std::string(precision_name(prec)) + " after " + std::to_string(steps) +
                                   " steps, cell " + std::to_string(cells[k]);
          EXPECT_TRUE(bitwise_equal({f.h[k]}, {all.h[cells[k]]})) << what;
          EXPECT_TRUE(bitwise_equal({f.hu[k]}, {all.hu[cells[k]]})) << what;
          EXPECT_TRUE(bitwise_equal({f.hv[k]}, {all.hv[cells[k]]})) << what;
        }
      }
    }
    EXPECT_THROW(gpu->read_cells({96 * 96}), std::out_of_range);
  }
}

// The lagged kernel grows the maxima every other step, with both of that
// step's states, and catches up before they are read: maxima read after any
// number of steps (one at a time, in batches, a batch stopped by its target
// with steps left over) are the CPU's bits, arrival times included.
TEST(CudaBackend, MaximaReadAfterAnyStepAgreeWithCpu) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    const Problem p = s004_t2(prec, 64);
    BackendOptions o;
    o.track_maxima = true;
    o.arrival_threshold = 0.05;
    o.kind = "cpu";
    auto cpu = make_backend(p, o);
    o.kind = "cuda";
    auto gpu = make_cuda_backend(p, o, CudaOptions{});
    double tc = 0, tg = 0;
    index_t taken = 0;
    Maxima before;
    int grown_reads = 0;
    const auto compare = [&](const std::string& when) {
      const std::string what = std::string(precision_name(prec)) + " after " + std::to_string(taken) + " steps (" +
                               when + ")";
      ASSERT_EQ(tg, tc) << what;
      Maxima mc, mg;
      cpu->read_maxima(mc);
      gpu->read_maxima(mg);
      EXPECT_TRUE(bitwise_equal(mg.max_h, mc.max_h)) << what << ": max_h";
      EXPECT_TRUE(bitwise_equal(mg.max_speed, mc.max_speed)) << what << ": max_speed";
      EXPECT_TRUE(bitwise_equal(mg.arrival_time, mc.arrival_time)) << what << ": arrival_time";
      if (!before.max_h.empty() && !bitwise_equal(before.max_h, mc.max_h)) ++grown_reads;
      before = mc;
    };
    // Single steps, odd and even counts between reads.
    for (int n : {1, 1, 2, 3, 1}) {
      for (int k = 0; k < n; ++k) {
        tc += cpu->step(tc, 1.0);
        tg += gpu->step(tg, 1.0);
        ++taken;
      }
      compare("single steps");
    }
    // Batches of odd and even sizes.
    for (index_t n : {1, 2, 5, 4, 7}) {
      const AdvanceResult rc = cpu->advance(tc, p.t_end, n);
      const CudaAdvance rg = gpu->advance(tg, p.t_end, n);
      ASSERT_EQ(rg.steps, rc.steps);
      tc = rc.t;
      tg = rg.t;
      taken += rc.steps;
      compare("a batch");
    }
    // To a target reached inside a batch (the launches after it do nothing).
    for (double target : {tc + 0.013, tc + 0.05}) {
      const AdvanceResult rc = cpu->advance(tc, target, 1 << 20);
      const CudaAdvance rg = gpu->advance(tg, target, 1 << 20);
      ASSERT_EQ(rg.steps, rc.steps);
      tc = rc.t;
      tg = rg.t;
      taken += rc.steps;
      compare("to a target");
    }
    // Targets and step limits in a row with no read between, as a run's
    // outputs between maxima reads: a batch's last launches take no step,
    // and the state of its last step must still be grown before the next
    // advance steps on from it.
    for (int r = 0; r < 8; ++r) {
      const double target = r % 2 == 0 ? tc + 0.0021 * (r + 1) : p.t_end;
      const index_t limit = r % 2 == 0 ? index_t(1) << 20 : index_t(r);
      const AdvanceResult rc = cpu->advance(tc, target, limit);
      const CudaAdvance rg = gpu->advance(tg, target, limit);
      ASSERT_EQ(rg.steps, rc.steps);
      tc = rc.t;
      tg = rg.t;
      taken += rc.steps;
    }
    compare("targets and step limits in a row");
    EXPECT_GE(grown_reads, 8) << "the maxima should grow between most reads";
    EXPECT_TRUE(std::any_of(before.arrival_time.begin(), before.arrival_time.end(), [](double a) { return a > 0; }));
  }
}

// Manning friction (a cube root per wet cell and step), every boundary kind,
// inactive cells and dry fronts: the GPU gives the CPU's bits in the fields
// and in every maximum, the NaN of cells never reached included, so output
// files are the same bytes (math::cbrt and flow_speed use IEEE basic
// operations only; libm's and CUDA's cbrt and hypot differ in the last bit).
TEST(CudaBackend, FrictionAndMaximaAreBitIdenticalToCpu) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    for (int rotation = 0; rotation < 2; ++rotation) {
      Problem p = rotation == 0 ? all_boundaries(prec, 1) : masked_dam_break(prec);
      p.physics.n_manning = 0.03;
      for (const std::string& kernel : kKernels) {
        const std::string what = std::string(precision_name(prec)) + " " + kernel + (rotation ? " masked" : " boundaries");
        BackendOptions o;
        o.track_maxima = true;
        o.arrival_threshold = 0.05;
        o.kind = "cpu";
        Simulation cpu(p, o);
        cpu.advance_to(p.t_end);
        auto gpu = make_cuda_backend(p, [&] { BackendOptions g = o; g.kind = "cuda"; return g; }(),
                                     kernel_options(kernel));
        const CudaAdvance a = gpu->advance(0.0, p.t_end, index_t(1) << 30);
        EXPECT_EQ(a.steps, cpu.steps()) << what;
        EXPECT_EQ(a.t, cpu.time()) << what;
        Fields f;
        gpu->read_state(f);
        expect_same_fields(f, cpu.state(), what);
        Maxima mg;
        gpu->read_maxima(mg);
        const Maxima mc = cpu.maxima();
        EXPECT_TRUE(bitwise_equal(mg.max_h, mc.max_h)) << what << ": max_h differs";
        EXPECT_TRUE(bitwise_equal(mg.max_speed, mc.max_speed)) << what << ": max_speed differs";
        EXPECT_TRUE(bitwise_equal(mg.arrival_time, mc.arrival_time)) << what << ": arrival_time differs";
        EXPECT_TRUE(std::any_of(mc.arrival_time.begin(), mc.arrival_time.end(), [](double v) { return std::isnan(v); }))
            << what << ": some cell should never be reached";
      }
    }
  }
}

TEST(CudaBackend, OutOfMemorySaysHowMuchWasNeeded) {
  SHALLOWS_REQUIRE_GPU();
  // A grid far beyond any GPU: the executor must refuse before it touches
  // the (here empty) fields.
  Problem p;
  p.grid.nx = 2000000;
  p.grid.ny = 2000000;
  try {
    make_cuda_backend(p, plain_options("cuda"), CudaOptions{});
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("needs"), std::string::npos) << msg;
    EXPECT_NE(msg.find("MiB"), std::string::npos) << msg;
  }
}

TEST(CudaBackend, UnknownKernelIsRejected) {
  SHALLOWS_REQUIRE_GPU();
  EXPECT_THROW(make_cuda_backend(s000_t1(Precision::double_precision), plain_options("cuda"), kernel_options("warp9")),
               std::runtime_error);
}

// Small enough for compute-sanitizer (tools/gpu-check.sh runs it under
// memcheck and racecheck): every kernel, both precisions, skipping on.
TEST(CudaSanitizer, SmallRunOfEveryKernel) {
  SHALLOWS_REQUIRE_GPU();
  for (Precision prec : kPrecisions) {
    // Odd sizes: partial strips and chunks; a dry slope next to a level side.
    Problem p = make_problem(37, 21, 0, 4, 0, 3, [](double x, double) { return x > 3 ? 1.0 : 0.02 * x; },
                     [](double x, double) { return x < 1 ? 0.5 : 0.0; });
    p.bc(Side::east) = {BoundaryKind::level, 0.3};
    p.precision = prec;
    for (const std::string& kernel : kKernels) {
      BackendOptions o = plain_options("cuda");
      o.track_maxima = true;
      auto b = make_cuda_backend(p, o, kernel_options(kernel));
      b->step(0.0, 1.0);
      b->advance(0.0, 0.2, 1 << 30);
      Fields f;
      Maxima m;
      b->read_state(f);
      b->read_maxima(m);
      EXPECT_GT(b->volume(), 0.0);
      // A snapshot's copies (D2D on the compute stream, D2H on the copy
      // stream) while the run steps on.
      Snapshot snap = b->snapshot();
      b->step(0.2, 1.0);
      const Fields fs = snap.take();
      EXPECT_EQ(fs.h, f.h);
    }
  }
}

} // namespace
#endif  // SHALLOWS_HAVE_CUDA
