// SPDX-License-Identifier: MIT
#pragma once
// Measures the property and agreement tests compare: how far a lake at rest
// has moved, the relative L1 difference of two fields, and whether two
// fields hold the same bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "shallows/solver/fields.hpp"
#include "shallows/solver/problem.hpp"

namespace shallows::test_support {

// A state f of a lake that started at rest (problem p, eta = 0 where wet).
struct LakeDeviation {
  double eta = 0;           // largest |eta - 0| over cells that started wet
  double velocity = 0;      // largest |u| + |v| over cells that started wet
  double island_depth = 0;  // largest depth over cells that started dry
  double l1_h = 0;          // mean |h - h0| over all cells (the seed's Table 1 measure)
};

inline LakeDeviation lake_deviation(const Problem& p, const Fields& f) {
  LakeDeviation d;
  for (std::size_t k = 0; k < f.h.size(); ++k) {
    d.l1_h += std::abs(f.h[k] - p.h[k]) / static_cast<double>(f.h.size());
    if (p.h[k] == 0) {
      d.island_depth = std::max(d.island_depth, f.h[k]);
      continue;
    }
    d.eta = std::max(d.eta, std::abs(f.h[k] + p.z[k]));
    d.velocity = std::max(d.velocity, (std::abs(f.hu[k]) + std::abs(f.hv[k])) / f.h[k]);
  }
  return d;
}

// Relative L1 difference sum|a - ref| / sum|ref| (absolute where ref is all zero).
inline double rel_l1(const std::vector<double>& a, const std::vector<double>& ref) {
  double diff = 0, norm = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    diff += std::abs(a[k] - ref[k]);
    norm += std::abs(ref[k]);
  }
  return norm > 0 ? diff / norm : diff;
}

// Largest |a - ref| relative to the largest |ref| (absolute where ref is all zero).
inline double max_rel_diff(const std::vector<double>& a, const std::vector<double>& ref) {
  double scale = 0, diff = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    scale = std::max(scale, std::abs(ref[k]));
    diff = std::max(diff, std::abs(a[k] - ref[k]));
  }
  return scale > 0 ? diff / scale : diff;
}

// The same bits (NaN included), not merely equal values.
inline bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

} // namespace shallows::test_support
