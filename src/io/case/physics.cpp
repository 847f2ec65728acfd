// SPDX-License-Identifier: MIT
// [numerics] and [physics], and the bound physics.max_speed sets on the flows
// a case gives.
#include <cmath>

#include "reader.hpp"

namespace shallows::io::case_reader {

void read_numerics(const Reader& rd, const toml::table& root, Problem& p) {
  if (const toml::table* nu = rd.table(root, "", "numerics")) {
    rd.check_keys(*nu, "numerics", find_section("numerics")->keys);
    if (auto s = rd.string(*nu, "numerics", "scheme")) {
      if (*s == "roe1")
        p.scheme = Scheme::roe1;
      else if (*s == "roe3")
        p.scheme = Scheme::roe3;
      else
        rd.fail_at("numerics.scheme", "unknown scheme '" + clip(*s) + "' (valid: roe1, roe3)");
    }
    if (auto v = rd.number(*nu, "numerics", "cfl")) {
      if (!(*v > 0 && *v <= 1)) rd.fail_at("numerics.cfl", "must be in (0, 1], found " + num(*v));
      p.cfl = *v;
    }
    if (auto s = rd.string(*nu, "numerics", "precision")) {
      if (*s == "double")
        p.precision = Precision::double_precision;
      else if (*s == "float")
        p.precision = Precision::single_precision;
      else
        rd.fail_at("numerics.precision", "unknown precision '" + clip(*s) + "' (valid: double, float)");
    }
  }
}

void read_physics(const Reader& rd, const toml::table& root, const fs::path& base_dir, const CellCentres& at,
                  Problem& p, Reading& r) {
  if (const toml::table* ph = rd.table(root, "", "physics")) {
    rd.check_keys(*ph, "physics", find_section("physics")->keys);
    if (auto v = rd.number(*ph, "physics", "g")) {
      if (!(*v > 0)) rd.fail_at("physics.g", "must be > 0 (m/s^2), found " + num(*v));
      p.physics.g = *v;
    }
    if (const auto f = field_spec(rd, *ph, "physics", "manning", base_dir)) {
      if (f->kind == FieldSpec::Kind::constant) {
        if (!(f->value >= 0)) rd.fail_at("physics.manning", "must be >= 0 (s/m^(1/3)), found " + num(f->value));
        p.physics.n_manning = f->value;
      } else {
        r.manning_map = forcing_field(rd, *f, at, p.z, 1.0, "s/m^(1/3)");
      }
    }
    if (auto v = rd.number(*ph, "physics", "dry_tolerance")) {
      if (!(*v >= 0)) rd.fail_at("physics.dry_tolerance", "must be >= 0 (m), found " + num(*v));
      p.physics.h_dry = *v;
    }
    if (auto v = rd.number(*ph, "physics", "max_speed")) {
      if (!(*v > 0)) rd.fail_at("physics.max_speed", "must be > 0 (m/s), found " + num(*v));
      r.max_speed = *v;
    }
  }
}

// Initial and boundary flows beyond max_speed (physics.max_speed, default
// 100 m/s: faster than any flood, dam break or tsunami current) are input
// errors, not flows to compute: an initial speed |(hu, hv)| / h in a wet
// cell (h > dry_tolerance), and an inflow discharge above max_speed^3 / g,
// the discharge of critical flow (Froude number 1) at max_speed.
void check_speeds(const Reader& rd, const Problem& p, const std::string& first_key, double max_speed,
                  const CellCentres& at, const UnstructuredMesh* mesh) {
  const std::string bound = " exceeds physics.max_speed = " + num(max_speed) +
                            " m/s (raise physics.max_speed if the flow is meant to be that fast)";
  for (std::size_t k = 0; k < p.h.size(); ++k) {
    if (!(p.h[k] > p.physics.h_dry)) continue;
    const double speed = std::hypot(p.hu[k], p.hv[k]) / p.h[k];
    if (speed <= max_speed) continue;
    // Name the component that carries the speed: u or v (hu or hv).
    const std::string key = "initial." + (std::abs(p.hu[k]) >= std::abs(p.hv[k])
                                              ? first_key
                                              : std::string(first_key == "u" ? "v" : "hv"));
    const std::string cell =
        mesh ? "cell " + std::to_string(k)
             : "cell (i, j) = (" + std::to_string(static_cast<index_t>(k) % p.grid.nx) + ", " +
                   std::to_string(static_cast<index_t>(k) / p.grid.nx) + ")";
    rd.fail_at(key, "initial speed " + num(speed) + " m/s at " + cell + ", centre (x, y) = (" + num(at.x(k)) +
                        ", " + num(at.y(k)) + ")," + bound);
  }
  const double max_discharge = critical_discharge(max_speed, p.physics.g);
  // A constant discharge, or each value of a side's series (when: " at t = ... s").
  const auto check_discharge = [&](double q, const std::string& name, const std::string& when) {
    if (std::abs(q) <= max_discharge) return;
    rd.fail_at("boundary." + name + ".discharge",
               "discharge " + num(q) + " m^2/s" + when + " exceeds max_speed^3 / g = " + num(max_discharge) +
                   " m^2/s, the discharge of critical flow at physics.max_speed = " + num(max_speed) +
                   " m/s (raise physics.max_speed if the flow is meant to be that fast)");
  };
  const auto check_inflow = [&](const BoundaryCondition<double>& bc, const TimeSeries* series, const std::string& name) {
    if (bc.kind != BoundaryKind::inflow) return;
    if (!series || series->empty()) return check_discharge(bc.value, name, "");
    for (std::size_t k = 0; k < series->v.size(); ++k)
      check_discharge(series->v[k], name, " at t = " + num(series->t[k]) + " s");
  };
  if (mesh) {
    for (std::size_t g = 0; g < p.mesh_boundary.size(); ++g)
      check_inflow(p.mesh_boundary[g], g < p.forcing.groups.size() ? &p.forcing.groups[g] : nullptr,
                   mesh->boundary_names[g]);
  } else {
    const char* sides[4] = {"west", "east", "south", "north"};
    for (std::size_t s = 0; s < 4; ++s) check_inflow(p.boundary[s], &p.forcing.boundary[s], sides[s]);
  }
}

} // namespace shallows::io::case_reader
