// SPDX-License-Identifier: MIT
#include "shallows/solver/forcing.hpp"

#include <stdexcept>
#include <string>

namespace shallows {

namespace {

void check_per_cell(const std::vector<double>& v, std::size_t cells, const char* what) {
  if (v.size() > 1 && v.size() != cells) {
    throw std::invalid_argument(std::string("forcing: ") + what + " has " + std::to_string(v.size()) +
                                " values; expected 1 or one per cell (" + std::to_string(cells) + ")");
  }
}

void check_series(const TimeSeries& s, const std::string& what) {
  if (s.t.size() != s.v.size()) {
    throw std::invalid_argument("forcing: " + what + " has " + std::to_string(s.t.size()) + " times but " +
                                std::to_string(s.v.size()) + " values");
  }
}

}  // namespace

void check_forcing_sizes(const Forcing& f, std::size_t cells) {
  check_series(f.rain.rate, "rain.rate");
  check_per_cell(f.rain.scale, cells, "rain.scale");
  if (f.rain.frames.size() != f.rain.frame_times.size() * cells) {
    throw std::invalid_argument("forcing: rain.frames has " + std::to_string(f.rain.frames.size()) +
                                " values; expected " + std::to_string(f.rain.frame_times.size()) + " frames of " +
                                std::to_string(cells) + " cells");
  }
  for (std::size_t k = 1; k < f.rain.frame_times.size(); ++k) {
    if (!(f.rain.frame_times[k] > f.rain.frame_times[k - 1])) {
      throw std::invalid_argument("forcing: rain.frame_times must increase, found " +
                                  std::to_string(f.rain.frame_times[k]) + " s after " +
                                  std::to_string(f.rain.frame_times[k - 1]) + " s");
    }
  }
  check_per_cell(f.manning, cells, "manning");
  check_per_cell(f.infiltration.p0, cells, "infiltration.p0");
  check_per_cell(f.infiltration.p1, cells, "infiltration.p1");
  check_per_cell(f.infiltration.p2, cells, "infiltration.p2");
  for (const VolumeSource& s : f.sources) check_series(s.discharge, "the discharge of source '" + s.name + "'");
}

}  // namespace shallows
