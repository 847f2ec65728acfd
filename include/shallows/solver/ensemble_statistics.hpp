// SPDX-License-Identifier: MIT
#pragma once
// Statistics of an ensemble's maxima, cell by cell (docs/ensembles.md). The
// cells are whatever the members' Maxima hold (a grid's cells row-major, a
// mesh's cells in its order): the service is the same for both.
#include <cstddef>
#include <vector>

#include "shallows/solver/fields.hpp"

namespace shallows {

// Per cell c (of n), per threshold t and percentile p:
//   exceedance[t * n + c]  sum of the weights of the members whose max depth exceeds thresholds[t] (>), over the
//                          sum of all weights;
//   depth_* / speed_*      weighted mean, min, max of max_h / max_speed; percentile p: the smallest member value
//                          whose cumulative weight (members sorted by value) reaches p / 100 of the total
//                          ("inverted CDF": no interpolation, always a member's value; p = 0 gives the min);
//   arrival_earliest       the earliest arrival time of any member (NaN: none arrived);
//   arrival_median         the 50th percentile of arrival times as above, a member that never arrived counting as
//                          later than any that did (NaN where that member is the median).
// A cell where some member's max depth is NaN (inactive) is NaN in every statistic.
struct EnsembleStatistics {
  std::size_t cells = 0;
  std::vector<double> thresholds, percentiles;
  std::vector<double> exceedance;
  std::vector<double> depth_mean, depth_min, depth_max, depth_percentile;
  std::vector<double> speed_mean, speed_min, speed_max, speed_percentile;
  std::vector<double> arrival_earliest, arrival_median;
};

// members: the maxima of every member that ran (same cell count), weights one per member (> 0).
EnsembleStatistics ensemble_statistics(const std::vector<const Maxima*>& members, const std::vector<double>& weights,
                                       const std::vector<double>& thresholds, const std::vector<double>& percentiles);

} // namespace shallows
