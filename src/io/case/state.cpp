// SPDX-License-Identifier: MIT
// The bed ([bathymetry]) and the initial state ([initial]).
#include <algorithm>
#include <cmath>

#include "reader.hpp"

namespace shallows::io::case_reader {
namespace {

// Bed elevation from the mesh file: the mean of each cell's node elevations.
std::vector<double> node_bed(const UnstructuredMesh& m) {
  std::vector<double> z(static_cast<std::size_t>(m.cells()));
  for (std::size_t c = 0; c < z.size(); ++c) {
    const int sides = m.cell_sides(static_cast<index_t>(c));
    double sum = 0;
    for (int k = 0; k < sides; ++k) sum += m.node_z[static_cast<std::size_t>(m.cell_nodes[4 * c + k])];
    z[c] = sum / sides;
  }
  return z;
}

} // namespace

void read_bathymetry(const Reader& rd, Domain& d, const CellCentres& at, Problem& p) {
  const auto n = at.size();
  if (d.z_from_mesh) {
    p.z = node_bed(*d.mesh);
    check_finite(rd, d.z->key, p.z, std::vector<double>(n, 0.0), at, &*d.z);
  } else if (d.z) {
    p.z = evaluate(rd, *d.z, at, std::move(d.z_raster));
    d.z_raster.reset();
    if (d.z->kind != FieldSpec::Kind::raster && d.z->kind != FieldSpec::Kind::array) {
      const std::vector<double> all_active(n, 0.0);
      check_finite(rd, d.z->key, p.z, all_active, at, &*d.z);
    } else {
      // NaN = NODATA = inactive, in a raster as in values per cell; infinities are errors.
      for (std::size_t k = 0; k < n; ++k)
        if (std::isinf(p.z[k])) check_finite(rd, d.z->key, p.z, std::vector<double>(n, 0.0), at, &*d.z);
      if (std::all_of(p.z.begin(), p.z.end(), [](double v) { return std::isnan(v); }))
        rd.fail_at("bathymetry.z", "every cell is NODATA: no active cell");
    }
  } else {
    p.z.assign(n, 0.0);
  }
}

bool read_initial(const Reader& rd, const toml::table& root, const fs::path& base_dir, const CellCentres& at,
                  Problem& p) {
  const auto n = at.size();
  const toml::table* init = rd.table(root, "", "initial");
  if (!init) rd.fail("initial", "missing section [initial] (needs eta or h)");
  rd.check_keys(*init, "initial", find_section("initial")->keys);
  std::optional<FieldSpec> spec[6];
  const char* names[6] = {"eta", "h", "hu", "hv", "u", "v"};
  for (int k = 0; k < 6; ++k) spec[k] = field_spec(rd, *init, "initial", names[k], base_dir);
  auto& eta = spec[0];
  auto& h = spec[1];
  if (eta && h) rd.fail("initial.h", "initial: give either eta or h, not both");
  if (!eta && !h) rd.fail("initial", "initial: missing eta (free-surface elevation) or h (depth)");
  const bool discharge_pair = spec[2] || spec[3];
  const bool velocity_pair = spec[4] || spec[5];
  if (discharge_pair && velocity_pair)
    rd.fail(spec[2] ? "initial.hu" : "initial.hv",
            "initial: give either hu/hv (discharges) or u/v (velocities), not both");

  const FieldSpec& base = eta ? *eta : *h;
  p.h = evaluate(rd, base, at);
  check_finite(rd, base.key, p.h, p.z, at, &base);
  for (std::size_t k = 0; k < n; ++k) {
    if (std::isnan(p.z[k])) {
      p.h[k] = 0;
    } else if (eta) {
      p.h[k] = std::max(p.h[k] - p.z[k], 0.0);
    } else if (p.h[k] < 0) {
      rd.fail("initial.h", "initial.h is negative (" + num(p.h[k]) + ") " + at_cell(at.x(k), at.y(k)));
    }
  }

  const auto momentum = [&](int a) {
    std::vector<double> m(n, 0.0);
    if (!spec[a]) return m;
    m = evaluate(rd, *spec[a], at);
    check_finite(rd, spec[a]->key, m, p.z, at, &*spec[a]);
    return m;
  };
  if (velocity_pair) {
    p.hu = momentum(4);
    p.hv = momentum(5);
    for (std::size_t k = 0; k < n; ++k) {
      p.hu[k] *= p.h[k];
      p.hv[k] *= p.h[k];
    }
  } else {
    p.hu = momentum(2);
    p.hv = momentum(3);
  }
  return velocity_pair;
}

} // namespace shallows::io::case_reader
