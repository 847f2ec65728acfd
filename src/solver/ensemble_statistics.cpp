// SPDX-License-Identifier: MIT
#include "shallows/solver/ensemble_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace shallows {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// The inverted-CDF percentile of (value, weight) pairs sorted by value: the
// first value whose cumulative weight reaches p / 100 of total. Comparing
// cumulative * 100 >= p * total keeps equal weights exact (p = 50 of 4
// members: the second, as 2 * 100 >= 50 * 4).
double percentile_of(const std::vector<std::pair<double, double>>& sorted, double total, double p) {
  double cumulative = 0;
  for (const auto& [v, w] : sorted) {
    cumulative += w;
    if (cumulative * 100 >= p * total) return v;
  }
  return sorted.back().first;
}

} // namespace

EnsembleStatistics ensemble_statistics(const std::vector<const Maxima*>& members, const std::vector<double>& weights,
                                       const std::vector<double>& thresholds, const std::vector<double>& percentiles) {
  if (members.empty()) throw std::invalid_argument("ensemble_statistics: no member");
  if (weights.size() != members.size()) throw std::invalid_argument("ensemble_statistics: one weight per member");
  EnsembleStatistics s;
  const std::size_t n = members.front()->max_h.size();
  for (const Maxima* m : members)
    if (m->max_h.size() != n || m->max_speed.size() != n || m->arrival_time.size() != n)
      throw std::invalid_argument("ensemble_statistics: members of " + std::to_string(n) + " and " +
                                  std::to_string(m->max_h.size()) + " cells");
  s.cells = n;
  s.thresholds = thresholds;
  s.percentiles = percentiles;
  const std::size_t nt = thresholds.size(), np = percentiles.size();
  s.exceedance.assign(nt * n, nan);
  for (auto* v : {&s.depth_mean, &s.depth_min, &s.depth_max, &s.speed_mean, &s.speed_min, &s.speed_max,
                  &s.arrival_earliest, &s.arrival_median})
    v->assign(n, nan);
  s.depth_percentile.assign(np * n, nan);
  s.speed_percentile.assign(np * n, nan);
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);

#pragma omp parallel
  {
    std::vector<std::pair<double, double>> sorted;
    sorted.reserve(members.size());
#pragma omp for schedule(static)
    for (std::ptrdiff_t ci = 0; ci < static_cast<std::ptrdiff_t>(n); ++ci) {
      const auto c = static_cast<std::size_t>(ci);
      bool active = true;
      for (const Maxima* m : members) active = active && !std::isnan(m->max_h[c]);
      if (!active) continue;
      for (std::size_t t = 0; t < nt; ++t) {
        double w = 0;
        for (std::size_t k = 0; k < members.size(); ++k)
          if (members[k]->max_h[c] > thresholds[t]) w += weights[k];
        s.exceedance[t * n + c] = w / total;
      }
      const auto describe = [&](const std::vector<double> Maxima::*field, std::vector<double>& mean,
                                std::vector<double>& lo, std::vector<double>& hi, std::vector<double>& pct) {
        sorted.clear();
        double sum = 0;
        for (std::size_t k = 0; k < members.size(); ++k) {
          const double v = (members[k]->*field)[c];
          sorted.emplace_back(v, weights[k]);
          sum += weights[k] * v;
        }
        std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        mean[c] = sum / total;
        lo[c] = sorted.front().first;
        hi[c] = sorted.back().first;
        for (std::size_t p = 0; p < np; ++p) pct[p * n + c] = percentile_of(sorted, total, percentiles[p]);
      };
      describe(&Maxima::max_h, s.depth_mean, s.depth_min, s.depth_max, s.depth_percentile);
      describe(&Maxima::max_speed, s.speed_mean, s.speed_min, s.speed_max, s.speed_percentile);
      // Never arrived: +inf while sorting, NaN when it is the answer.
      sorted.clear();
      for (std::size_t k = 0; k < members.size(); ++k) {
        const double a = members[k]->arrival_time[c];
        sorted.emplace_back(std::isnan(a) ? std::numeric_limits<double>::infinity() : a, weights[k]);
      }
      std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      const auto finite_or_nan = [](double v) { return std::isinf(v) ? nan : v; };
      s.arrival_earliest[c] = finite_or_nan(sorted.front().first);
      s.arrival_median[c] = finite_or_nan(percentile_of(sorted, total, 50));
    }
  }
  return s;
}

} // namespace shallows
