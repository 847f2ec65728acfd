// SPDX-License-Identifier: MIT
// Ensemble statistics per cell against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "shallows/solver/ensemble_statistics.hpp"

using shallows::Maxima;
using shallows::ensemble_statistics;

namespace {

const double nan = std::nan("");

// Four members on three cells: cell 0 wet in every member, cell 1 wet in two, cell 2 inactive in one.
std::vector<Maxima> four_members() {
  return {
      {{0.2, 0.0, 1.0}, {1.0, 0.0, 0.1}, {100, nan, 5}},
      {{0.6, 0.3, 1.0}, {2.0, 0.5, 0.1}, {50, 300, 5}},
      {{1.5, 0.0, nan}, {4.0, 0.0, nan}, {10, nan, nan}},
      {{0.9, 0.7, 1.0}, {3.0, 1.0, 0.1}, {20, 200, 5}},
  };
}

std::vector<const Maxima*> pointers(const std::vector<Maxima>& m) {
  std::vector<const Maxima*> p;
  for (const Maxima& x : m) p.push_back(&x);
  return p;
}

} // namespace

TEST(EnsembleStatistics, EqualWeightsGiveTheHandComputedValues) {
  const auto m = four_members();
  const auto s = ensemble_statistics(pointers(m), {1, 1, 1, 1}, {0.1, 0.5, 1.0}, {0, 25, 50, 90, 100});
  const std::size_t n = 3;
  // Cell 0: depths 0.2 0.6 1.5 0.9.
  EXPECT_EQ(s.exceedance[0 * n + 0], 1.0);
  EXPECT_EQ(s.exceedance[1 * n + 0], 0.75);
  EXPECT_EQ(s.exceedance[2 * n + 0], 0.25);
  EXPECT_DOUBLE_EQ(s.depth_mean[0], 0.8);
  EXPECT_EQ(s.depth_min[0], 0.2);
  EXPECT_EQ(s.depth_max[0], 1.5);
  // Sorted 0.2 0.6 0.9 1.5: p0 -> 0.2, p25 -> 0.2 (1 of 4), p50 -> 0.6, p90 -> 1.5, p100 -> 1.5.
  const double pct[] = {0.2, 0.2, 0.6, 1.5, 1.5};
  for (std::size_t p = 0; p < 5; ++p) EXPECT_EQ(s.depth_percentile[p * n + 0], pct[p]) << p;
  EXPECT_DOUBLE_EQ(s.speed_mean[0], 2.5);
  EXPECT_EQ(s.speed_percentile[2 * n + 0], 2.0);
  // Arrivals 100 50 10 20: earliest 10, median (sorted 10 20 50 100) 20.
  EXPECT_EQ(s.arrival_earliest[0], 10);
  EXPECT_EQ(s.arrival_median[0], 20);
  // Cell 1: depths 0 0.3 0 0.7; a threshold is exceeded strictly (0.5: one member); arrivals never, 300, never,
  // 200: earliest 200, median the second of 200 300 inf inf: 300.
  EXPECT_EQ(s.exceedance[0 * n + 1], 0.5);
  EXPECT_EQ(s.exceedance[1 * n + 1], 0.25);
  EXPECT_EQ(s.exceedance[2 * n + 1], 0.0);
  EXPECT_EQ(s.arrival_earliest[1], 200);
  EXPECT_EQ(s.arrival_median[1], 300);
  // Cell 2: inactive in a member -> NaN throughout.
  EXPECT_TRUE(std::isnan(s.exceedance[2]));
  EXPECT_TRUE(std::isnan(s.depth_mean[2]));
  EXPECT_TRUE(std::isnan(s.depth_percentile[2 * n + 2]));
  EXPECT_TRUE(std::isnan(s.arrival_median[2]));
}

TEST(EnsembleStatistics, WeightsShareTheExceedanceAndMoveThePercentiles) {
  const auto m = four_members();
  // Weights 1 1 6 2 (total 10); cell 0 depths 0.2 0.6 1.5 0.9.
  const auto s = ensemble_statistics(pointers(m), {1, 1, 6, 2}, {0.5, 1.0}, {50});
  EXPECT_DOUBLE_EQ(s.exceedance[0], 0.9);  // all but the first: 1 + 6 + 2
  EXPECT_DOUBLE_EQ(s.exceedance[3], 0.6);  // 1.5 alone
  EXPECT_DOUBLE_EQ(s.depth_mean[0], (0.2 + 0.6 + 6 * 1.5 + 2 * 0.9) / 10);
  // Sorted by depth 0.2 (1), 0.6 (1), 0.9 (2), 1.5 (6): cumulative 1 2 4 10; half of 10 reached at 1.5.
  EXPECT_EQ(s.depth_percentile[0], 1.5);
  // Arrivals sorted 10 (6), 20 (2), 50 (1), 100 (1): half reached at 10.
  EXPECT_EQ(s.arrival_median[0], 10);
}

TEST(EnsembleStatistics, OneMemberIsItsOwnStatistics) {
  const auto m = four_members();
  const auto s = ensemble_statistics({&m[1]}, {1}, {0.5}, {10, 90});
  for (std::size_t c = 0; c < 3; ++c) {
    EXPECT_EQ(s.depth_mean[c], m[1].max_h[c]);
    EXPECT_EQ(s.depth_percentile[c], m[1].max_h[c]);
    EXPECT_EQ(s.speed_percentile[3 + c], m[1].max_speed[c]);
    EXPECT_EQ(s.exceedance[c], m[1].max_h[c] > 0.5 ? 1.0 : 0.0);
  }
  EXPECT_EQ(s.arrival_median[1], 300);
}
