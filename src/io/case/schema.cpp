// SPDX-License-Identifier: MIT
// The case file's schema: its sections and their keys (docs/case-file.md),
// and the nearest valid key for "did you mean".
#include <algorithm>

#include "reader.hpp"

namespace shallows::io::case_reader {
namespace {

const std::vector<Section>& sections() {
  static const std::vector<Section> s{
      {"domain", {"nx", "ny", "x", "y"}},
      {"mesh", {"file", "ordering", "seed"}},
      {"bathymetry", {"z"}},
      {"initial", {"eta", "h", "hu", "hv", "u", "v"}},
      {"boundary", {"west", "east", "south", "north", "segment"}},
      {"physics", {"g", "manning", "dry_tolerance", "max_speed"}},
      {"numerics", {"scheme", "cfl", "precision"}},
      {"time", {"end", "output_every", "output_times"}},
      {"output", {"dir", "format", "gauges", "arrival_threshold", "precision", "checkpoint_every", "checkpoint_wall"}},
      {"rain", {"rate", "scale", "concentration"}},
      {"infiltration", {"model", "conductivity", "suction", "deficit", "initial_loss", "loss_rate"}},
      {"parallel", {"ranks_x", "ranks_y", "halo_steps"}},
  };
  return s;
}

} // namespace

const Keys top_level_keys{"name", "domain", "mesh", "bathymetry", "initial", "boundary", "physics",
                          "numerics", "time", "output", "rain", "infiltration", "source", "structure", "scalar",
                          "parallel", "ensemble"};

const Section* find_section(std::string_view name) {
  for (const auto& s : sections())
    if (s.name == name) return &s;
  return nullptr;
}

const Section* find_entry_keys(std::string_view array) {
  static const std::vector<Section> s{
      {"source", {"name", "x", "y", "discharge", "scale", "concentration"}},
      {"boundary.segment", {"side", "from", "to", "type", "hydrograph", "discharge", "scale", "eta", "concentration"}},
  };
  for (const auto& e : s)
    if (e.name == array) return &e;
  return nullptr;
}

namespace {

std::size_t levenshtein(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::size_t common_prefix(std::string_view a, std::string_view b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

} // namespace

// Closest valid key by edit distance (ties: longer common prefix, then
// schema order); none when it shares nothing with the unknown key.
std::optional<std::string_view> closest(std::string_view key, const Keys& valid) {
  std::optional<std::string_view> best;
  std::size_t best_d = 0, best_p = 0;
  for (auto v : valid) {
    const std::size_t d = levenshtein(key, v);
    const std::size_t p = common_prefix(key, v);
    if (!best || d < best_d || (d == best_d && p > best_p)) {
      best = v;
      best_d = d;
      best_p = p;
    }
  }
  if (best && best_d >= std::max(key.size(), best->size())) return std::nullopt;
  return best;
}

std::string join(const Keys& keys) {
  std::string s;
  for (auto k : keys) {
    if (!s.empty()) s += ", ";
    s += k;
  }
  return s;
}

} // namespace shallows::io::case_reader
