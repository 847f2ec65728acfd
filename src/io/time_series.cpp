// SPDX-License-Identifier: MIT
#include "shallows/io/time_series.hpp"

#include "text_tokens.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace shallows::io {
using detail::format_number;

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& source, int line, const std::string& what) {
  std::string msg = source;
  if (line > 0) msg += ":" + std::to_string(line);
  throw InputError(msg + ": " + what);
}

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\v\f");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\v\f") - b + 1);
}

// A double from a whole token (nan and inf included: the caller says why they are refused).
bool parse_number(std::string_view tok, double& out) { return detail::parse_token(tok, out); }

using detail::quoted;

std::vector<std::string_view> split_commas(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t p = 0;
  while (true) {
    const std::size_t q = line.find(',', p);
    fields.push_back(trim(line.substr(p, q == std::string_view::npos ? std::string_view::npos : q - p)));
    if (q == std::string_view::npos) return fields;
    p = q + 1;
  }
}

} // namespace

TimeSeries parse_time_series(std::string_view text, const std::string& source, double value_scale,
                             const std::string& what) {
  // Spreadsheets write a UTF-8 byte order mark.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  TimeSeries s;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t e = text.find('\n', pos);
    if (e == std::string_view::npos) e = text.size();
    std::string_view line = text.substr(pos, e - pos);
    pos = e + 1;
    ++line_no;
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;

    const std::vector<std::string_view> fields = split_commas(line);
    double t = 0, v = 0;
    const bool t_ok = parse_number(fields[0], t);
    const bool v_ok = fields.size() > 1 && parse_number(fields[1], v);
    // A header names the columns: before the first row, a line that does not begin with a number.
    if (s.t.empty() && !t_ok && std::string_view("0123456789+-.").find(line.front()) == std::string_view::npos)
      continue;
    if (fields.size() != 2)
      fail(source, line_no, "expected two columns time,value separated by a comma, found " + quoted(line));
    if (!t_ok) fail(source, line_no, "time " + quoted(fields[0]) + " is not a number");
    if (!v_ok) fail(source, line_no, what + " " + quoted(fields[1]) + " is not a number");
    if (!std::isfinite(t)) fail(source, line_no, "time must be finite, found " + quoted(fields[0]));
    if (!std::isfinite(v)) fail(source, line_no, what + " must be finite, found " + quoted(fields[1]));
    if (!s.t.empty() && !(t > s.t.back()))
      fail(source, line_no,
           "times must increase strictly, found " + format_number(t) + " s after " + format_number(s.t.back()) + " s");
    s.t.push_back(t);
    s.v.push_back(v * value_scale);
  }
  if (s.t.empty()) fail(source, 0, "no rows (expected lines time,value with time in s and " + what + ")");
  return s;
}

TimeSeries read_time_series(const fs::path& file, double value_scale, const std::string& what) {
  std::error_code ec;
  if (fs::is_directory(file, ec)) fail(file.string(), 0, "cannot read time series: is a directory");
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(file.string(), 0, std::string("cannot open time series file (") + std::strerror(errno) + ")");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) fail(file.string(), 0, "read error");
  return parse_time_series(ss.str(), file.string(), value_scale, what);
}

} // namespace shallows::io
