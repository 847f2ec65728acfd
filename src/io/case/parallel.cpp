// SPDX-License-Identifier: MIT
// [parallel]: the MPI process grid and halo of a grid run.
#include "reader.hpp"

namespace shallows::io::case_reader {

// [parallel]: each value an integer >= 1, bounded as the command line's --ranks-x, --ranks-y, --halo-steps.
ParallelSettings read_parallel(const Reader& rd, const toml::table& root, bool on_mesh) {
  const toml::table* pt = rd.table(root, "", "parallel");
  if (!pt) return {};
  if (on_mesh && !runs_on_cpu_or_gpu(Feature::first_order, true, true))
    rd.fail_at("parallel", "the MPI process grid and halo ([parallel]) apply to Cartesian grids only; this case runs "
                           "on a mesh ([mesh]), which runs on one rank");
  const toml::table& t = *pt;
  rd.check_keys(t, "parallel", find_section("parallel")->keys);
  const auto count = [&](std::string_view key, std::int64_t most) {
    const auto v = rd.integer(t, "parallel", key);
    if (!v) return 0;
    if (*v <= 0) rd.fail_at(dotted("parallel", key), "must be > 0, found " + std::to_string(*v));
    if (*v > most) {
      rd.fail_at(dotted("parallel", key),
                 "too large: " + std::to_string(*v) + " (at most " + std::to_string(most) + ")");
    }
    return static_cast<int>(*v);
  };
  ParallelSettings s;
  s.ranks_x = count("ranks_x", std::int64_t(1) << 16);
  s.ranks_y = count("ranks_y", std::int64_t(1) << 16);
  s.halo_steps = count("halo_steps", 64);
  return s;
}

} // namespace shallows::io::case_reader
