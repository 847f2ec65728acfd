// SPDX-License-Identifier: MIT
#pragma once
// Host copies of a backend's state and run maxima, interior cells only,
// row-major (j * nx + i), in double whatever the run's precision.
#include <cstddef>
#include <vector>

namespace shallows {

struct Fields {
  std::vector<double> h, hu, hv;
  // Passive scalars, Problem::scalars order: the amount h c per unit area
  // (the conserved state; concentration() gives c).
  std::vector<std::vector<double>> hc;
};

// The listed cells of `all`, in the list's order (h[k] is all.h[cells[k]]);
// throws std::out_of_range for a cell beyond the fields.
inline Fields cells_of(const Fields& all, const std::vector<std::size_t>& cells) {
  const auto pick = [&](const std::vector<double>& from) {
    std::vector<double> v;
    v.reserve(cells.size());
    for (std::size_t k : cells) v.push_back(from.at(k));
    return v;
  };
  Fields out{pick(all.h), pick(all.hu), pick(all.hv), {}};
  for (const std::vector<double>& hc : all.hc) out.hc.push_back(pick(hc));
  return out;
}

struct Maxima {
  std::vector<double> max_h;         // largest depth seen (m)
  std::vector<double> max_speed;     // largest |u| seen (m/s)
  std::vector<double> arrival_time;  // first time h exceeded the threshold (s); NaN if never
};

// The water of a run at an output time (m^3): stored, and moved since the
// start by the positivity fixes (NaN where no account is kept, several MPI
// ranks), by the forcing and across the sides (NaN where not kept).
struct VolumeAccount {
  double volume = 0;
  double positivity = 0;
  double rain = 0;
  double infiltration = 0;
  double sources = 0;
  double boundary_in = 0;   // through the sides, where kept (else NaN)
  double boundary_out = 0;
};

} // namespace shallows
