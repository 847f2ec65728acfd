// SPDX-License-Identifier: MIT
// Output snapshots (Backend::snapshot, Snapshot::take) on the CPU executors:
// a snapshot holds the state of the moment it was made, whatever the run did
// since; the Snapshot type itself (once only, release of what it holds); a
// run whose time loop fails returns with the error instead of hanging on its
// writer thread.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/solver/run.hpp"
#include "shallows/solver/simulation.hpp"
#include "support/problems.hpp"

namespace {

using namespace shallows;

// S000-T1 on a coarse grid: a dam break, so the state changes every step.
Problem dam_break(Precision precision, Scheme scheme) {
  const double pi = std::acos(-1.0);
  Problem p = test_support::make_problem(
      100, 10, 0, 10, 0, 1, [pi](double x, double) { return std::cos(2 * pi * x) / 2 - 1; },
      [](double x, double) { return x < 5 ? 2.0 : 0.0; });
  p.precision = precision;
  p.scheme = scheme;
  p.t_end = 5;
  return p;
}

BackendOptions cpu_options() {
  BackendOptions o;
  o.kind = "cpu";
  o.threads = 2;
  o.track_maxima = false;
  return o;
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

void expect_identical(const Fields& a, const Fields& b, const std::string& what) {
  EXPECT_TRUE(bitwise_equal(a.h, b.h)) << what << ": h differs";
  EXPECT_TRUE(bitwise_equal(a.hu, b.hu)) << what << ": hu differs";
  EXPECT_TRUE(bitwise_equal(a.hv, b.hv)) << what << ": hv differs";
}

struct Variant {
  Precision precision;
  Scheme scheme;
  std::string name;
};

const std::vector<Variant> kVariants{{Precision::double_precision, Scheme::roe1, "roe1 double"},
                                     {Precision::single_precision, Scheme::roe1, "roe1 float"},
                                     {Precision::double_precision, Scheme::roe3, "roe3 double"}};

TEST(Snapshot, TakeEqualsReadState) {
  for (const Variant& v : kVariants) {
    const Problem p = dam_break(v.precision, v.scheme);
    auto b = make_backend(p, cpu_options());
    b->advance(0.0, 0.3, 1 << 30);
    Fields ref;
    b->read_state(ref);
    Snapshot s = b->snapshot();
    ASSERT_TRUE(s.valid()) << v.name;
    const Fields f = s.take();
    ASSERT_EQ(f.h.size(), static_cast<std::size_t>(p.grid.cells())) << v.name;
    expect_identical(f, ref, v.name);
    EXPECT_FALSE(s.valid()) << v.name;
  }
}

// read_cells gives the listed cells of read_state, in the list's order,
// repeats included; a cell beyond the grid is an error, not garbage.
TEST(Snapshot, ReadCellsPicksFromTheState) {
  for (const Variant& v : kVariants) {
    const Problem p = dam_break(v.precision, v.scheme);
    auto b = make_backend(p, cpu_options());
    b->advance(0.0, 0.3, 1 << 30);
    Fields all;
    b->read_state(all);
    const std::vector<std::size_t> cells{999, 0, 517, 517, 42};
    const Fields f = b->read_cells(cells);
    ASSERT_EQ(f.h.size(), cells.size()) << v.name;
    for (std::size_t k = 0; k < cells.size(); ++k) {
      EXPECT_EQ(f.h[k], all.h[cells[k]]) << v.name << " cell " << cells[k];
      EXPECT_EQ(f.hu[k], all.hu[cells[k]]) << v.name << " cell " << cells[k];
      EXPECT_EQ(f.hv[k], all.hv[cells[k]]) << v.name << " cell " << cells[k];
    }
    EXPECT_NE(f.hu[2], 0.0) << v.name << ": the cell should be moving";
    EXPECT_THROW(b->read_cells({1000}), std::out_of_range) << v.name;
  }
}

// Snapshots made at several times and taken only at the end hold the states
// of their times: compared with a second, identical run read with state().
TEST(Snapshot, SnapshotsHoldTheStatesOfTheirTimes) {
  const std::vector<double> times{0.0, 0.1, 0.25, 0.5};
  for (const Variant& v : kVariants) {
    const Problem p = dam_break(v.precision, v.scheme);
    Simulation sim(p, cpu_options());
    Simulation ref(p, cpu_options());
    std::vector<Snapshot> snaps;
    std::vector<Fields> expected;
    for (double t : times) {
      sim.advance_to(t);
      ref.advance_to(t);
      snaps.push_back(sim.snapshot());
      expected.push_back(ref.state());
    }
    sim.advance_to(0.75);  // the run goes on before anything is taken
    for (std::size_t k = 0; k < times.size(); ++k) {
      const Fields f = snaps[k].take();
      expect_identical(f, expected[k], v.name + " at t = " + std::to_string(times[k]));
      if (k > 0) {
        EXPECT_FALSE(bitwise_equal(expected[k].h, expected[k - 1].h)) << v.name << ": the test needs changing states";
      }
    }
  }
}

TEST(Snapshot, TakenOnAnotherThread) {
  const Problem p = dam_break(Precision::double_precision, Scheme::roe1);
  Simulation sim(p, cpu_options());
  sim.advance_to(0.2);
  const Fields ref = sim.state();
  Snapshot s = sim.snapshot();
  sim.advance_to(0.4);
  Fields f;
  std::thread t([&] { f = s.take(); });
  t.join();
  expect_identical(f, ref, "taken on a thread");
}

TEST(Snapshot, TakeOnceOnly) {
  Snapshot empty;
  EXPECT_FALSE(empty.valid());
  EXPECT_THROW(empty.take(), std::logic_error);

  Snapshot ready(Fields{{1.0}, {2.0}, {3.0}, {}});
  Snapshot moved = std::move(ready);
  EXPECT_FALSE(ready.valid());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_TRUE(moved.valid());
  EXPECT_EQ(moved.take().hu, std::vector<double>{2.0});
  EXPECT_THROW(moved.take(), std::logic_error);
}

// A pending part that counts its takes and destructions.
class CountingPending final : public Snapshot::Pending {
 public:
  CountingPending(int& takes, int& destroyed, bool fail) : takes_(takes), destroyed_(destroyed), fail_(fail) {}
  ~CountingPending() override { ++destroyed_; }
  Fields take() override {
    ++takes_;
    if (fail_) throw std::runtime_error("copy failed");
    return Fields{{4.0}, {5.0}, {6.0}, {}};
  }

 private:
  int& takes_;
  int& destroyed_;
  bool fail_;
};

TEST(Snapshot, PendingIsReleasedTakenOrNot) {
  int takes = 0, destroyed = 0;
  {
    Snapshot s(std::make_unique<CountingPending>(takes, destroyed, false));
    EXPECT_TRUE(s.valid());
    EXPECT_EQ(s.take().hv, std::vector<double>{6.0});
    EXPECT_EQ(destroyed, 1) << "the pending part must be released by take()";
    EXPECT_FALSE(s.valid());
  }
  EXPECT_EQ(takes, 1);
  {
    Snapshot s(std::make_unique<CountingPending>(takes, destroyed, false));
  }
  EXPECT_EQ(takes, 1);
  EXPECT_EQ(destroyed, 2) << "an untaken snapshot must release its pending part";
  {
    Snapshot s(std::make_unique<CountingPending>(takes, destroyed, true));
    EXPECT_THROW(s.take(), std::runtime_error);
    EXPECT_EQ(destroyed, 3) << "a failed take must release the pending part";
    EXPECT_FALSE(s.valid());
  }
  {
    Snapshot a(std::make_unique<CountingPending>(takes, destroyed, false));
    Snapshot b(std::make_unique<CountingPending>(takes, destroyed, false));
    a = std::move(b);
    EXPECT_EQ(destroyed, 4) << "assignment must release the overwritten pending part";
  }
  EXPECT_EQ(destroyed, 5);
}

// The time loop throws (infinite depth) after the first frame was queued:
// run_case must return with the error, its writer thread joined.
TEST(Snapshot, FailingRunDoesNotHangTheWriter) {
  io::Case c;
  c.name = "nan";
  c.source = "<test>";
  c.problem = dam_break(Precision::double_precision, Scheme::roe1);
  c.problem.h[505] = std::numeric_limits<double>::infinity();
  c.problem.t_end = 1.0;
  c.problem.output_times = output_times_every(0.25, 1.0);
  const auto dir = std::filesystem::temp_directory_path() / ("shallows_snapshot_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  c.output.dir = dir;
  c.output.formats = {"vtk"};
  RunOptions o;
  o.backend = cpu_options();
  o.backend.track_maxima = true;
  o.progress = false;
  o.quiet = true;
  std::filesystem::create_directories(dir);
  EXPECT_THROW(run_case(c, o), std::runtime_error);
  std::filesystem::remove_all(dir);
}

} // namespace
