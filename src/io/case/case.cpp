// SPDX-License-Identifier: MIT
// parse_case: the sections of a case file read in order, each by its own
// reader (reader.hpp), then build_problem. The order matters: a bathymetry
// raster may give the grid; the scheme decides whether fields are cell
// averages; scalars come before the boundaries and forcing that name them;
// [time] before the series that must last the run.
#include "shallows/io/case.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "reader.hpp"

namespace shallows::io {

using namespace case_reader;

namespace {

std::string default_name(const std::string& source) {
  if (source.empty() || source.front() == '<') return "default";
  const std::string stem = fs::path(source).stem().string();
  return stem.empty() ? "default" : stem;
}

toml::table parse_toml(std::string_view text, const std::string& source_name) {
  try {
    return toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw InputError(source_name + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
                     ": TOML syntax error: " + std::string(e.description()));
  }
}

} // namespace

Case parse_case(std::string_view toml_text, const std::string& source_name, const fs::path& base_dir,
                const std::vector<std::string>& overrides, const FieldArrays& arrays) {
  toml::table root = parse_toml(toml_text, source_name);
  std::set<std::string> overridden = apply_overrides(root, overrides);
  // Each array's key holds a placeholder in the tree, so that its section is
  // there and its key known; the field reader then takes the values instead.
  std::vector<std::string> placeholders;
  for (const auto& kv : arrays)
    placeholders.push_back(kv.first + "=\"" + std::string(array_placeholder) + "\"");
  try {
    apply_overrides(root, placeholders);
  } catch (const InputError& e) {
    const std::string what = e.what();
    throw InputError("array" + what.substr(what.find(':')));  // the key's check, named as an array's
  }
  const Reader rd(source_name, std::move(overridden), &arrays);
  rd.check_keys(root, "", top_level_keys);

  Case c;
  c.source = source_name;
  c.text = std::string(toml_text);
  c.name = rd.string(root, "", "name").value_or(default_name(source_name));
  if (c.name.empty()) rd.fail_at("name", "empty name");
  Problem& p = c.problem;

  RasterReference rasters;
  Domain domain = read_domain(rd, root, base_dir, rasters, p, c.notes);
  read_numerics(rd, root, p);
  // Third order on a grid: expressions give cell averages (see CellCentres).
  const CellCentres at{domain.mesh ? nullptr : &p.grid, domain.mesh.get(), p.scheme == Scheme::roe3, &rasters,
                       domain.grid_from_raster};
  read_bathymetry(rd, domain, at, p);
  const bool velocities = read_initial(rd, root, base_dir, at, p);
  std::vector<ScalarOutput> scalars = read_scalars(rd, root, base_dir, at, p);
  read_boundaries(rd, root, base_dir, domain.mesh, p);
  Reading reading;
  read_physics(rd, root, base_dir, at, p, reading);
  check_speeds(rd, p, velocities ? "u" : "hu", reading.max_speed, at, domain.mesh.get());
  read_time(rd, root, p);
  if (p.mesh && p.scheme == Scheme::roe3 && !runs_on_cpu_or_gpu(Feature::third_order, true, false))
    rd.fail_at("numerics.scheme", "unstructured meshes run the first-order scheme only (\"roe1\")");
  read_forcing(rd, root, base_dir, at, p, reading);
  c.parallel = read_parallel(rd, root, p.mesh != nullptr);
  c.output = read_output(rd, root, p);
  c.output.crs_wkt = rasters.crs_wkt;
  c.output.scalars = std::move(scalars);

  build_problem(rd, std::move(reading), p);
  note_dry_inflows(p, c.notes);
  for (const std::string& key : rd.arrays_not_taken())
    rd.fail_at(key, "takes no values per cell (fields that do: bathymetry.z, initial.h, eta, hu, hv, u, v, "
                    "physics.manning, rain.rate, infiltration's parameters, a scalar's initial)");
  return c;
}

Case load_case(const fs::path& file, const std::vector<std::string>& overrides, const FieldArrays& arrays) {
  const std::string source = file.string();
  std::error_code ec;
  if (fs::is_directory(file, ec)) throw InputError(source + ": cannot read case file: is a directory");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(source + ": cannot open case file (" + std::strerror(errno) + ")");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(source + ": read error");
  fs::path base = file.parent_path();
  if (base.empty()) base = ".";
  return parse_case(ss.str(), source, base, overrides, arrays);
}

} // namespace shallows::io
