// SPDX-License-Identifier: MIT
// Properties of runs on several MPI ranks, launched by mpirun (tests/CMakeLists.txt
// runs it on 2, 3 and 4 ranks): a lake at rest with islands cut by the rank
// boundaries stays at rest, mass behind walls is conserved, and the gathered
// state is bit-identical to the one-rank executor run on rank 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "shallows/exec/cpu_backend.hpp"
#include "shallows/exec/mpi/context.hpp"
#include "shallows/io/case.hpp"
#include "shallows/solver/simulation.hpp"
#include "support/problems.hpp"

namespace shallows {
namespace {

// The lake of S003-T1 with its islands and a third one in the middle of the
// domain, so that islands lie across the rank boundaries of 2x1, 3x1 and 2x2.
Problem lake_with_islands(Scheme scheme) {
  Problem p = test_support::lake_at_rest(true, Precision::double_precision, 60);
  for (index_t j = 0; j < p.grid.ny; ++j) {
    for (index_t i = 0; i < p.grid.nx; ++i) {
      const auto k = static_cast<std::size_t>(j * p.grid.nx + i);
      if (std::hypot(p.grid.x_center(i) - 0.5, p.grid.y_center(j) - 0.5) < 0.1) {
        p.z[k] = 0.05;
        p.h[k] = 0;
      }
    }
  }
  p.scheme = scheme;
  return p;
}

// Steps n on all ranks and returns the gathered state (on rank 0), after
// checking it against the one-rank executor on rank 0, bit for bit.
Fields run_and_compare(const Problem& p, int halo_steps, index_t n) {
  BackendOptions o;
  o.threads = 1;
  o.halo_steps = halo_steps;
  Simulation sim(p, o);
  sim.advance_steps(n);
  const Fields f = sim.state();
  if (mpi::rank() != 0) return f;
  const std::unique_ptr<Backend> one = make_cpu_backend(p, o);
  double t = 0;
  for (index_t k = 0; k < n; ++k) t += one->step(t, p.t_end - t);
  EXPECT_DOUBLE_EQ(t, sim.time());
  Fields ref;
  one->read_state(ref);
  EXPECT_EQ(f.h.size(), ref.h.size());
  for (std::size_t c = 0; c < ref.h.size(); ++c) {
    if (f.h[c] != ref.h[c] || f.hu[c] != ref.hu[c] || f.hv[c] != ref.hv[c]) {
      ADD_FAILURE() << "cell " << c << " differs from one rank (halo_steps " << halo_steps << ")";
      break;
    }
  }
  return f;
}

void expect_at_rest(const Problem& p, const Fields& f) {
  if (mpi::rank() != 0) return;
  double worst_eta = 0, worst_q = 0;
  for (std::size_t c = 0; c < f.h.size(); ++c) {
    if (f.h[c] <= 0) continue;
    worst_eta = std::max(worst_eta, std::abs(f.h[c] + p.z[c]));
    worst_q = std::max({worst_q, std::abs(f.hu[c]), std::abs(f.hv[c])});
  }
  EXPECT_LE(worst_eta, 1e-12);
  EXPECT_LE(worst_q, 1e-12);
}

TEST(Mpi, lake_at_rest_with_islands_across_rank_boundaries_stays_at_rest_roe1) {
  const Problem p = lake_with_islands(Scheme::roe1);
  for (int k : {1, 4}) expect_at_rest(p, run_and_compare(p, k, 1000));
}

TEST(Mpi, lake_at_rest_with_islands_across_rank_boundaries_stays_at_rest_roe3) {
  const Problem p = lake_with_islands(Scheme::roe3);
  expect_at_rest(p, run_and_compare(p, 2, 100));
}

TEST(Mpi, mass_is_conserved_behind_walls) {
  // S000-T2 with walls all round: a dam break over a bump that leaves dry land.
  Problem p = io::load_case(std::string(SHALLOWS_SOURCE_DIR) + "/cases/s000-t2/case.toml", {}).problem;
  for (auto& bc : p.boundary) bc = {BoundaryKind::wall, 0.0};
  BackendOptions o;
  o.threads = 1;
  o.halo_steps = 3;
  Simulation sim(p, o);
  const double before = sim.volume();
  sim.advance_to(p.t_end);
  const double after = sim.volume();
  EXPECT_LE(std::abs(after - before) / before, 1e-12);
  run_and_compare(p, 3, 200);
}

} // namespace
} // namespace shallows

int main(int argc, char** argv) {
  const shallows::mpi::Session session(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 reports; every rank runs every test (the runs are collective).
  if (shallows::mpi::rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  if (!shallows::mpi::active()) {
    std::fprintf(stderr, "mpi_invariants: not launched by mpirun (one rank): nothing distributed was tested\n");
    return 1;
  }
  return failed;
}
