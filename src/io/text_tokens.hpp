// SPDX-License-Identifier: MIT
#pragma once
// Private to src/io: the tokens of the text formats read by hand (ESRI ASCII
// rasters, CSV time series), and numbers written as text.
#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <system_error>

namespace shallows::io::detail {

// A number from the whole token (a leading '+' allowed; a double may come out
// nan or inf: the caller says why it refuses them).
template <class T>
bool parse_token(std::string_view tok, T& out) {
  if (!tok.empty() && tok.front() == '+') tok.remove_prefix(1);
  if (tok.empty()) return false;
  const char* end = tok.data() + tok.size();
  const auto [ptr, ec] = std::from_chars(tok.data(), end, out);
  return ec == std::errc() && ptr == end;
}

// A token for a message, quoted and cut at 40 characters.
inline std::string quoted(std::string_view tok) {
  constexpr std::size_t max_len = 40;
  std::string s(tok.substr(0, max_len));
  if (tok.size() > max_len) s += "...";
  return "'" + s + "'";
}

// "%.10g"-style formatting without locale surprises; NaN -> "nan".
inline std::string format_number(double v, int digits = 10) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, digits);
  return std::string(buf, r.ptr);
}

}  // namespace shallows::io::detail
