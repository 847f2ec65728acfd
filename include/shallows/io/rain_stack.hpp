// SPDX-License-Identifier: MIT
#pragma once
// Rain from a NetCDF stack of rasters with a time axis (radar rainfall):
// a variable of dimensions (time, y, x), CF's order, with the coordinate
// variables of its dimensions (x and y: cell centres, evenly spaced, either
// order; time: increasing). Rates in mm/h unless the variable's `units` say
// otherwise; times in seconds from the run's start unless the time variable's
// `units` say otherwise ("X since DATE": DATE is taken as the run's start).
// Values equal to _FillValue (or the type's default fill), to missing_value,
// or NaN become NaN; scale_factor and add_offset are applied. Every error
// throws io::InputError beginning "<file>: ".
#include <filesystem>
#include <string>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/mesh/structured/grid.hpp"

namespace shallows::io {

struct RainStack {
  std::filesystem::path path;  // as opened, for messages
  std::string variable;
  std::string units;           // the rates' units as the file names them ("mm/h" where it names none)
  double to_mps = 0;           // the file's rates times to_mps are m/s
  Grid grid;                   // the stack's cells: nx, ny, the west and south edges, dx, dy
  std::vector<double> times;   // s from the run's start, of the frames read
  std::vector<double> frames;  // m/s, times.size() * grid.cells(), frame-major, rows j = 0 south; NaN: no value
};

// Reads the frames of `variable` that the run [0, t_end] uses: from the last
// frame at or before t = 0 to the last before t_end (the first frame must be
// at t <= 0). time_variable: the time coordinate's name; empty: the
// variable's first dimension's. In a build without NetCDF: an InputError.
RainStack read_rain_stack(const std::filesystem::path& file, const std::string& variable,
                          const std::string& time_variable, double t_end);

// Whether this build reads NetCDF files.
bool have_netcdf();

} // namespace shallows::io
