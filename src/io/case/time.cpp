// SPDX-License-Identifier: MIT
// [time]: the run's end and its output times.
#include "reader.hpp"

namespace shallows::io::case_reader {
namespace {

std::vector<double> read_output_times(const Reader& rd, const toml::node& n, double t_end) {
  const std::string key = "time.output_times";
  const toml::array* a = n.as_array();
  if (!a) rd.fail_type(key, "an array of numbers", n);
  std::vector<double> times;
  for (std::size_t k = 0; k < a->size(); ++k) {
    const std::string at = key + "[" + std::to_string(k) + "]";
    const double t = rd.number(*a->get(k), at);
    if (!(t > 0) || t > t_end)
      rd.fail_at(at, "must be in (0, time.end = " + num(t_end) + "], found " + num(t));
    if (!times.empty() && !(t > times.back()))
      rd.fail_at(at, "times must be increasing, found " + num(t) + " after " + num(times.back()));
    times.push_back(t);
  }
  if (times.empty() || times.back() < t_end * (1 - 1e-12))
    times.push_back(t_end);
  else
    times.back() = t_end;
  return times;
}

} // namespace

void read_time(const Reader& rd, const toml::table& root, Problem& p) {
  const toml::table* tt = rd.table(root, "", "time");
  if (!tt) rd.fail("time", "missing section [time] (needs end)");
  rd.check_keys(*tt, "time", find_section("time")->keys);
  const auto end = rd.number(*tt, "time", "end");
  if (!end) rd.fail("time.end", "time.end: missing (end time of the run, s)");
  if (!(*end > 0)) rd.fail_at("time.end", "must be > 0 (s), found " + num(*end));
  p.t_end = *end;
  const auto check_end = [&](const TimeSeries& ts, const BoundaryCondition<double>& bc, const std::string& name) {
    const std::string key = "boundary." + name + (bc.kind == BoundaryKind::level ? ".eta" : ".discharge");
    if (ts.t.size() > 1 && ts.t.back() < p.t_end)
      rd.fail_at(key, "the run lasts until " + num(p.t_end) + " s but the series ends at " + num(ts.t.back()) + " s");
  };
  const char* sides[4] = {"west", "east", "south", "north"};
  for (std::size_t s = 0; s < 4; ++s) check_end(p.forcing.boundary[s], p.boundary[s], sides[s]);
  for (std::size_t g = 0; g < p.forcing.groups.size() && p.mesh; ++g)
    check_end(p.forcing.groups[g], p.mesh_boundary[g], p.mesh->boundary_names[g]);
  const auto every = rd.number(*tt, "time", "output_every");
  const toml::node* times = tt->get("output_times");
  if (every && times) rd.fail("time.output_times", "time: give either output_every or output_times, not both");
  if (every) {
    if (!(*every > 0)) rd.fail_at("time.output_every", "must be > 0 (s), found " + num(*every));
    if (p.t_end / *every > 1e6)
      rd.fail_at("time.output_every", "too small: " + num(p.t_end / *every) + " outputs (at most 1e6)");
    p.output_times = output_times_every(*every, p.t_end);
  } else if (times) {
    p.output_times = read_output_times(rd, *times, p.t_end);
  } else {
    p.output_times = {p.t_end};
  }
}

} // namespace shallows::io::case_reader
