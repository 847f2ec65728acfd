// SPDX-License-Identifier: MIT
// Passive scalars ([[scalar]]), and the concentrations of the water that
// boundaries, rain and sources bring. Read before the boundaries and the
// forcing, whose concentrations name them.
#include <algorithm>

#include "reader.hpp"

namespace shallows::io::case_reader {
namespace {

// Names a scalar may not take: the other variables of output.nc and of the
// VTK files (gauges.csv puts the gauge's name before each of its columns).
const Keys taken_names{"time", "x", "y", "crs", "h", "hu", "hv", "u", "v", "eta", "z", "velocity", "max_h",
                       "max_speed", "arrival_time", "arrival_threshold", "volume", "positivity_volume",
                       "rain_volume", "infiltration_volume", "source_volume", "boundary_inflow_volume",
                       "boundary_outflow_volume"};

// A name NetCDF, VTK and CSV headers all take as it is: a letter, then letters, digits and underscores.
bool variable_name(const std::string& s) {
  const auto alpha = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); };
  const auto digit = [](char ch) { return ch >= '0' && ch <= '9'; };
  return !s.empty() && alpha(s[0]) &&
         std::all_of(s.begin(), s.end(), [&](char ch) { return alpha(ch) || digit(ch) || ch == '_'; });
}

} // namespace

std::vector<ScalarOutput> read_scalars(const Reader& rd, const toml::table& root, const fs::path& base_dir,
                                       const CellCentres& at, Problem& p) {
  const toml::node* n = root.get("scalar");
  if (!n) return {};
  const toml::array* a = n->as_array();
  if (!a) rd.fail_type("scalar", "an array of tables [[scalar]] with name and initial", *n);
  std::vector<ScalarOutput> outputs;
  if (a->empty()) return outputs;
  for (std::size_t k = 0; k < a->size(); ++k) {
    const std::string key = "scalar[" + std::to_string(k) + "]";
    const toml::table* t = a->get(k)->as_table();
    if (!t) rd.fail_type(key, "a table { name = \"salt\", initial = ..., units = ... }", *a->get(k));
    rd.check_keys(*t, key, {"name", "initial", "units"});
    const auto name = rd.string(*t, key, "name");
    if (!name) rd.fail_at(key + ".name", "missing (the name of the scalar's output variable, e.g. \"salt\")");
    if (!variable_name(*name))
      rd.fail_at(key + ".name", "'" + clip(*name) + "' is not a valid variable name (a letter, then letters, digits "
                                                    "or underscores)");
    if (std::find(taken_names.begin(), taken_names.end(), *name) != taken_names.end())
      rd.fail_at(key + ".name", "'" + *name + "' is the name of another output variable (taken: " +
                                    join(taken_names) + ")");
    for (const PassiveScalar& other : p.scalars) {
      if (other.name == *name) rd.fail_at(key + ".name", "scalar name '" + *name + "' used twice");
      if (other.name + "_mass" == *name || *name + "_mass" == other.name)
        rd.fail_at(key + ".name", "scalars '" + other.name + "' and '" + *name + "' clash in output.nc, where '" +
                                      (other.name.size() < name->size() ? other.name : *name) +
                                      "_mass' is the mass of the first");
    }
    ScalarOutput out{*name, rd.string(*t, key, "units").value_or("1")};
    if (out.units.empty()) rd.fail_at(key + ".units", "empty units (\"1\" for a dimensionless concentration)");
    PassiveScalar s;
    s.name = *name;
    const auto f = field_spec(rd, *t, key, "initial", base_dir);
    s.c = f ? forcing_parameter(rd, *f, at, p.z, 1.0, "a concentration, " + out.units, kMaxConcentration)
            : std::vector<double>{0.0};
    p.scalars.push_back(std::move(s));
    outputs.push_back(std::move(out));
  }
  return outputs;
}

std::vector<double> read_concentrations(const Reader& rd, const toml::table& t, const std::string& at,
                                        const std::vector<PassiveScalar>& scalars) {
  std::vector<double> c(scalars.size(), 0.0);
  const toml::node* n = t.get("concentration");
  if (!n) return c;
  const std::string key = at + ".concentration";
  const toml::table* ct = n->as_table();
  if (!ct) rd.fail_type(key, "a table of concentrations by scalar name (e.g. { salt = 35.0 })", *n);
  Keys names;
  for (const PassiveScalar& s : scalars) names.push_back(s.name);
  for (auto&& [k, v] : *ct) {
    const std::string full = key + "." + std::string(k.str());
    const auto it = std::find(names.begin(), names.end(), k.str());
    if (it == names.end()) {
      std::string msg = "no [[scalar]] is named '" + clip(k.str()) + "'";
      if (auto best = closest(k.str(), names))
        msg += " (did you mean '" + std::string(*best) + "'?)";
      else
        msg += names.empty() ? " (the case declares none)" : " (declared: " + join(names) + ")";
      rd.fail_at(full, msg);
    }
    const double value = rd.number(v, full);
    if (!(value >= 0 && value <= kMaxConcentration))
      rd.fail_at(full, "must be in [0, " + num(kMaxConcentration) + "] (a concentration), found " + num(value));
    c[static_cast<std::size_t>(it - names.begin())] = value;
  }
  return c;
}

} // namespace shallows::io::case_reader
