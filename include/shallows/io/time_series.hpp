// SPDX-License-Identifier: MIT
#pragma once
// Time series from CSV files (a hyetograph, an inflow hydrograph), one row
// per line:
//
//     time,value          <- optional header line(s): no number in them
//     # a comment         <- '#' starts a comment anywhere; blank lines are skipped
//     0, 2.5
//     600, 10
//
// time in seconds, finite and strictly increasing; value finite, in the unit
// the caller documents, multiplied by value_scale (mm/h -> m/s: 1 / 3.6e6).
// At least one row. Every error throws io::InputError with "<file>:<line>: ..."
// (or "<file>: ..." where no line applies).
#include <filesystem>
#include <string>
#include <string_view>

#include "shallows/io/case.hpp"
#include "shallows/solver/forcing.hpp"

namespace shallows::io {

// what: the values for messages, with their unit ("discharge (m^3/s)").
TimeSeries read_time_series(const std::filesystem::path& file, double value_scale, const std::string& what);

// The same from text; source names the file in messages.
TimeSeries parse_time_series(std::string_view text, const std::string& source, double value_scale,
                             const std::string& what);

} // namespace shallows::io
