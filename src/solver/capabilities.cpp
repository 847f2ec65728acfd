// SPDX-License-Identifier: MIT
#include "shallows/solver/capabilities.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace shallows {

namespace {

// The columns of the table, in its order.
constexpr std::array<Place, 6> kPlaces{{
    {false, false, false},  // grid, CPU
    {false, true, false},   // grid, GPU
    {false, false, true},   // grid, CPU ranks
    {false, true, true},    // grid, GPU ranks
    {true, false, false},   // mesh, CPU
    {true, true, false},    // mesh, GPU
}};

struct Row {
  Feature feature;
  const char* name;
  std::array<bool, kPlaces.size()> runs;  // in the order of kPlaces
};

// The one statement of what runs where. Meshes run in one process only (no MPI decomposition of meshes).
constexpr std::array<Row, 12> kTable{{
    {Feature::first_order, "first-order Roe scheme, wet/dry fronts, Manning friction", {1, 1, 1, 1, 1, 1}},
    {Feature::third_order, "third order (roe3)", {1, 1, 1, 1, 0, 0}},
    {Feature::rain, "rain", {1, 1, 1, 1, 1, 1}},
    {Feature::infiltration, "infiltration", {1, 1, 1, 1, 1, 1}},
    {Feature::manning_map, "Manning maps", {1, 1, 1, 1, 1, 1}},
    {Feature::sources, "point sources and sinks", {1, 1, 1, 1, 1, 1}},
    {Feature::side_series, "sides that follow a time series", {1, 1, 1, 1, 1, 1}},
    {Feature::segments, "boundary segments", {1, 1, 1, 1, 0, 0}},
    {Feature::scalars, "passive scalars", {1, 1, 1, 1, 1, 1}},
    {Feature::structures, "pumps, gates and culverts", {1, 1, 1, 1, 1, 1}},
    {Feature::lines, "weirs, walls and breaches", {1, 1, 1, 1, 1, 1}},
    {Feature::checkpoints, "checkpoints and restarts", {1, 1, 0, 0, 1, 1}},
}};

const Row& row_of(Feature f) {
  for (const Row& r : kTable)
    if (r.feature == f) return r;
  return kTable[0];  // unreachable: every feature has a row
}

std::string place_name(Place p) {
  std::string s = p.mesh ? "on a mesh" : "on a grid";
  s += p.gpu ? " on the GPU" : " on the CPU";
  if (p.ranks) s += " on several MPI ranks";
  return s;
}

// Where a feature that does not run at `place` runs instead, said from that place: the way out. (Ranks and
// meshes are where most features differ.)
std::string where_else(Feature f, Place place) {
  Place cpu = place;
  cpu.gpu = false;
  if (place.gpu && runs(f, cpu)) return "on the CPU only so far";
  Place one = place;
  one.ranks = false;
  if (place.ranks && runs(f, one)) return "in one process only so far";
  one.gpu = false;
  if (runs(f, one)) return place.ranks ? "on the CPU in one process only so far" : "on the CPU only so far";
  return "on grids only so far";
}

// The weirs, walls and breaches by name, for messages: " ('levee', 'gap')".
std::string line_names(const Problem& p) {
  std::string s;
  for (const Structure& st : p.forcing.structures)
    if (!st.has_ends()) s += (s.empty() ? " ('" : ", '") + st.name + "'";
  return s.empty() ? s : s + ")";
}

} // namespace

bool skips_dry_cells(const Problem& problem) { return !problem.forcing.active() && problem.scalars.empty(); }

bool runs(Feature feature, Place place) {
  if (place.mesh && place.ranks) return false;
  const Row& r = row_of(feature);
  for (std::size_t k = 0; k < kPlaces.size(); ++k) {
    const Place& q = kPlaces[k];
    if (q.mesh == place.mesh && q.gpu == place.gpu && q.ranks == place.ranks) return r.runs[k];
  }
  return false;
}

bool runs_on_cpu_or_gpu(Feature feature, bool mesh, bool ranks) {
  return runs(feature, Place{mesh, false, ranks}) || runs(feature, Place{mesh, true, ranks});
}

const char* feature_name(Feature feature) { return row_of(feature).name; }

std::vector<Feature> features_of(const Problem& p) {
  std::vector<Feature> out{Feature::first_order};
  const Forcing& f = p.forcing;
  if (p.scheme == Scheme::roe3) out.push_back(Feature::third_order);
  if (f.rain.active()) out.push_back(Feature::rain);
  if (f.infiltration.model != InfiltrationModel::none) out.push_back(Feature::infiltration);
  if (!f.manning.empty()) out.push_back(Feature::manning_map);
  if (!f.sources.empty()) out.push_back(Feature::sources);
  if (f.has_boundary_series() || segments_follow_series(p.segments)) out.push_back(Feature::side_series);
  if (!p.segments.empty()) out.push_back(Feature::segments);
  if (!p.scalars.empty()) out.push_back(Feature::scalars);
  bool ends = false, lines = false;
  for (const Structure& s : f.structures) {
    const bool line = !s.has_ends();
    lines = lines || line;
    ends = ends || !line;
  }
  if (ends) out.push_back(Feature::structures);
  if (lines) out.push_back(Feature::lines);
  return out;
}

std::string refusal(const Problem& problem, Place place) {
  if (place.mesh && place.ranks) return "meshes run in one process only so far (no MPI decomposition of meshes)";
  // The case reader says so first; a Problem made in code reaches this.
  if (problem.scheme == Scheme::roe3)
    for (const Structure& s : problem.forcing.structures)
      if (!s.crossings.empty())
        return "structure '" + s.name + "': weirs and walls run on grids with the first-order scheme only so far "
               "(this run is third order, roe3)";
  // The features that do not run here, grouped by where they run instead, in the table's order.
  std::vector<std::pair<std::string, std::vector<Feature>>> groups;
  for (Feature f : features_of(problem)) {
    if (runs(f, place)) continue;
    const std::string where = where_else(f, place);
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == where; });
    if (g == groups.end()) g = groups.insert(groups.end(), {where, {}});
    g->second.push_back(f);
  }
  if (groups.empty()) return {};
  std::string s;
  for (const auto& [where, features] : groups) {
    if (!s.empty()) s += ", ";
    for (std::size_t k = 0; k < features.size(); ++k) {
      if (k > 0) s += k + 1 == features.size() ? " and " : ", ";
      s += feature_name(features[k]);
      if (features[k] == Feature::lines) s += line_names(problem);
    }
    const std::string last = feature_name(features.back());
    s += features.size() == 1 && last.back() != 's' ? " runs " : " run ";
    s += where;
  }
  return s + "; this run is " + place_name(place);
}

std::string features_table() {
  std::string s = "| feature | grid, CPU | grid, GPU | grid, CPU ranks (MPI) | grid, GPU ranks (MPI) | mesh, CPU | mesh, GPU |\n";
  s += "|---|---|---|---|---|---|---|\n";
  for (const Row& r : kTable) {
    s += std::string("| ") + r.name;
    for (bool yes : r.runs) s += yes ? " | yes" : " | not yet";
    s += " |\n";
  }
  return s;
}

} // namespace shallows
