// SPDX-License-Identifier: MIT
// The CPU executors' step with a halo exchange in flight: the inner cells
// swept by the other threads while thread 0 runs the exchange, then the
// rest, gives the bits of the exchange done first (support/halo_overlap.hpp).
#include <gtest/gtest.h>

#include "shallows/exec/cpu_backend.hpp"
#include "support/halo_overlap.hpp"

namespace shallows {
namespace {

test_support::MakeBackend cpu(int threads) {
  return [threads](const Problem& p) {
    BackendOptions o;
    o.threads = threads;
    return make_cpu_backend(p, o);
  };
}

TEST(HaloOverlap, FirstOrderStepsBesideTheExchangeAsAfterIt) {
  for (int threads : {1, 3}) {
    const std::string w = std::to_string(threads) + " threads";
    test_support::expect_overlap_bits(cpu(threads), Scheme::roe1, Precision::double_precision, "roe1 double, " + w);
    test_support::expect_overlap_bits(cpu(threads), Scheme::roe1, Precision::single_precision, "roe1 float, " + w);
  }
}

TEST(HaloOverlap, ThirdOrderStepsBesideTheExchangeAsAfterIt) {
  test_support::expect_overlap_bits(cpu(3), Scheme::roe3, Precision::double_precision, "roe3 double, 3 threads", 1);
  test_support::expect_overlap_bits(cpu(1), Scheme::roe3, Precision::single_precision, "roe3 float, 1 thread", 1);
}

// A failing exchange ends the step with its error, after the threads have met.
TEST(HaloOverlap, AnExchangeThatThrowsEndsTheStepWithItsError) {
  const Problem p = test_support::overlap_flow(Scheme::roe1, Precision::double_precision);
  BackendOptions o;
  o.threads = 3;
  const std::unique_ptr<Backend> b = make_cpu_backend(p, o);
  ASSERT_TRUE(b->halo()->exchange_in_next_step({2, 2, 40, 30}, [] { throw std::runtime_error("halo lost"); }));
  EXPECT_THROW(
      {
        try {
          b->step(0, 1e-3);
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "halo lost");
          throw;
        }
      },
      std::runtime_error);
}

} // namespace
} // namespace shallows
