// SPDX-License-Identifier: MIT
// The reader's messages: every error names its source (the file, or --set)
// and the key at fault.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "reader.hpp"

namespace shallows::io::case_reader {

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string clip(std::string_view s, std::size_t n) {
  if (s.size() <= n) return std::string(s);
  return std::string(s.substr(0, n)) + "...";
}

std::string describe(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "string \"" + clip(*n.value<std::string>()) + "\"";
    case toml::node_type::integer: return "integer " + std::to_string(*n.value<std::int64_t>());
    case toml::node_type::floating_point: return "float " + num(*n.value<double>());
    case toml::node_type::boolean: return std::string("boolean ") + (*n.value<bool>() ? "true" : "false");
    case toml::node_type::array: return "array";
    case toml::node_type::table: return "table";
    case toml::node_type::date: return "date";
    case toml::node_type::time: return "time";
    case toml::node_type::date_time: return "date-time";
    default: return "nothing";
  }
}

std::string dotted(std::string_view prefix, std::string_view key) {
  if (prefix.empty()) return std::string(key);
  return std::string(prefix) + "." + std::string(key);
}

std::string at_cell(double x, double y) { return "at cell centre (x, y) = (" + num(x) + ", " + num(y) + ")"; }

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::string Reader::src(std::string_view key) const {
  if (is_array_key(key)) return "array";
  for (const auto& p : overridden_) {
    if (key == p) return "--set";
    if (key.size() > p.size() && key.substr(0, p.size()) == p && (key[p.size()] == '.' || key[p.size()] == '['))
      return "--set";
  }
  return source_;
}

void Reader::fail(std::string_view key, const std::string& msg) const { throw InputError(src(key) + ": " + msg); }

void Reader::fail_at(std::string_view key, const std::string& msg) const {
  fail(key, std::string(key) + ": " + msg);
}

void Reader::fail_type(std::string_view key, std::string_view expected, const toml::node& found) const {
  // An array's key holds a placeholder in the TOML tree: a key that is no field says what it takes instead.
  if (is_array_key(key)) fail_at(key, "takes " + std::string(expected) + ", not values per cell");
  fail_at(key, "expected " + std::string(expected) + ", found " + describe(found));
}

void Reader::check_keys(const toml::table& t, std::string_view prefix, const Keys& valid) const {
  for (auto&& [k, v] : t) {
    const std::string_view key = k.str();
    if (std::find(valid.begin(), valid.end(), key) != valid.end()) continue;
    const std::string full = dotted(prefix, key);
    const bool section = prefix.empty() && v.is_table();
    std::string msg = std::string("unknown ") + (section ? "section" : "key") + " '" + full + "'";
    if (auto best = closest(key, valid))
      msg += " (did you mean '" + dotted(prefix, *best) + "'?)";
    else
      msg += " (valid: " + join(valid) + ")";
    fail(full, msg);
  }
}

const toml::table* Reader::table(const toml::table& t, std::string_view prefix, std::string_view key) const {
  const toml::node* n = t.get(key);
  if (!n) return nullptr;
  if (!n->is_table()) fail_type(dotted(prefix, key), "a table", *n);
  return n->as_table();
}

std::optional<double> Reader::number(const toml::table& t, std::string_view prefix, std::string_view key) const {
  const toml::node* n = t.get(key);
  if (!n) return std::nullopt;
  return number(*n, dotted(prefix, key));
}

double Reader::number(const toml::node& n, const std::string& key) const {
  if (!n.is_number()) fail_type(key, "a number", n);
  const double v = *n.value<double>();
  if (!std::isfinite(v)) fail_at(key, "must be a finite number, found " + num(v));
  return v;
}

std::optional<std::int64_t> Reader::integer(const toml::table& t, std::string_view prefix,
                                            std::string_view key) const {
  const toml::node* n = t.get(key);
  if (!n) return std::nullopt;
  if (!n->is_integer()) fail_type(dotted(prefix, key), "an integer", *n);
  return *n->value<std::int64_t>();
}

std::optional<std::string> Reader::string(const toml::table& t, std::string_view prefix,
                                          std::string_view key) const {
  const toml::node* n = t.get(key);
  if (!n) return std::nullopt;
  return string(*n, dotted(prefix, key));
}

std::string Reader::string(const toml::node& n, const std::string& key) const {
  if (!n.is_string()) fail_type(key, "a string", n);
  return *n.value<std::string>();
}

const std::vector<double>* Reader::array(std::string_view key) const {
  if (!arrays_) return nullptr;
  const auto it = arrays_->find(std::string(key));
  if (it == arrays_->end()) return nullptr;
  arrays_taken_.insert(it->first);
  return &it->second;
}

std::vector<std::string> Reader::arrays_not_taken() const {
  std::vector<std::string> out;
  if (!arrays_) return out;
  for (const auto& kv : *arrays_)
    if (!arrays_taken_.count(kv.first)) out.push_back(kv.first);
  return out;
}

} // namespace shallows::io::case_reader
