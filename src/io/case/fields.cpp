// SPDX-License-Identifier: MIT
// Per-cell fields (a number, an expression, a raster) and CSV time series,
// as a case gives them.
#include <algorithm>
#include <cmath>
#include <utility>

#include "reader.hpp"
#include "shallows/mesh/unstructured/ordering.hpp"

#if defined(SHALLOWS_HAVE_GDAL)
#include <ogr_srs_api.h>
#endif

namespace shallows::io::case_reader {
namespace {

// Whether two WKT strings name the same coordinate system (GDAL compares
// them; without GDAL no raster carries one).
bool same_crs(const std::string& a, const std::string& b) {
  if (a == b) return true;
#if defined(SHALLOWS_HAVE_GDAL)
  OGRSpatialReferenceH sa = OSRNewSpatialReference(a.c_str()), sb = OSRNewSpatialReference(b.c_str());
  const bool same = sa && sb && OSRIsSame(sa, sb);
  OSRDestroySpatialReference(sa);
  OSRDestroySpatialReference(sb);
  return same;
#else
  return false;
#endif
}

// A raster onto the grid: as it is where it has the grid's cells; else
// resampled, where it covers the grid at another resolution.
std::vector<double> on_grid(const Reader& rd, const FieldSpec& f, Raster&& r, const CellCentres& at) {
  const Grid& g = *at.grid;
  const RasterReference& ref = *at.rasters;
  const Grid rg = r.grid();
  const auto differs = [](double a, double b, double scale) { return std::abs(a - b) > 1e-9 * scale; };
  if (at.grid_from_raster && (rg.nx != ref.grid.nx || rg.ny != ref.grid.ny || differs(rg.dx, ref.grid.dx, rg.dx) ||
                              differs(rg.x0, ref.grid.x0, rg.dx) || differs(rg.y0, ref.grid.y0, rg.dx)))
    rd.fail_at(f.key, r.path.string() + " and " + ref.file.string() +
                          " have different extents or resolutions (with no [domain] every raster must match the "
                          "grid of the first one)");
  try {
    return io::raster_on_grid(std::move(r), g, f.resample);
  } catch (const InputError& e) {
    rd.fail_at(f.key, e.what());
  }
}

// A raster at mesh centroids.
std::vector<double> on_mesh(const Reader& rd, const FieldSpec& f, const Raster& r, const UnstructuredMesh& m) {
  try {
    return sample_raster(r, m.cell_x, m.cell_y);
  } catch (const InputError& e) {
    rd.fail_at(f.key, e.what());
  }
}

std::string allowed_range(double upper) { return std::isinf(upper) ? ">= 0" : "in [0, " + num(upper) + "]"; }

} // namespace

Resample read_resample(const Reader& rd, const toml::table& t, const std::string& key) {
  const auto r = rd.string(t, key, "resample");
  if (!r || *r == "average") return Resample::average;
  if (*r == "bilinear") return Resample::bilinear;
  if (*r == "nearest") return Resample::nearest;
  rd.fail_at(key + ".resample", "unknown method '" + clip(*r) + "' (valid: average, bilinear, nearest)");
}

std::optional<FieldSpec> field_spec(const Reader& rd, const toml::table& t, std::string_view prefix,
                                    std::string_view key, const fs::path& base_dir) {
  const toml::node* n = t.get(key);
  if (!n) return std::nullopt;
  FieldSpec f;
  f.key = dotted(prefix, key);
  if (const std::vector<double>* values = rd.array(f.key)) {
    f.kind = FieldSpec::Kind::array;
    f.values = values;
  } else if (n->is_number()) {
    f.kind = FieldSpec::Kind::constant;
    f.value = rd.number(*n, f.key);
  } else if (n->is_string()) {
    f.kind = FieldSpec::Kind::expression;
    f.expression = *n->value<std::string>();
    if (trim(f.expression).empty()) rd.fail_at(f.key, "empty expression");
  } else if (n->is_table()) {
    const toml::table& ft = *n->as_table();
    rd.check_keys(ft, f.key, {"file", "resample"});
    const auto file = rd.string(ft, f.key, "file");
    if (!file) rd.fail_at(f.key, "table needs 'file' (e.g. { file = \"dem.asc\" })");
    if (file->empty()) rd.fail_at(f.key + ".file", "empty file name");
    f.resample = read_resample(rd, ft, f.key);
    f.kind = FieldSpec::Kind::raster;
    const fs::path p(*file);
    f.file = p.is_absolute() ? p : base_dir / p;
  } else {
    rd.fail_type(f.key, "an expression string, a number or { file = \"...\" }", *n);
  }
  return f;
}

Raster read_field_raster(const Reader& rd, const FieldSpec& f, RasterReference& ref) {
  Raster r;
  try {
    r = read_raster(f.file);
  } catch (const InputError& e) {
    rd.fail_at(f.key, e.what());
  }
  if (!ref.set) {
    ref = {true, r.path, r.crs_wkt, r.grid()};
  } else if (!r.crs_wkt.empty() && !ref.crs_wkt.empty() && !same_crs(r.crs_wkt, ref.crs_wkt)) {
    rd.fail_at(f.key, r.path.string() + " and " + ref.file.string() + " have different coordinate systems");
  }
  return r;
}

std::vector<double> evaluate(const Reader& rd, const FieldSpec& f, const CellCentres& at,
                             std::optional<Raster>&& raster) {
  switch (f.kind) {
    case FieldSpec::Kind::constant:
      return std::vector<double>(at.size(), f.value);
    case FieldSpec::Kind::expression:
      return eval_expression(rd, f, at);
    case FieldSpec::Kind::array: {
      if (f.values->size() != at.size()) {
        const std::string cells =
            at.mesh ? std::to_string(at.size()) + " cells"
                    : std::to_string(at.grid->ny) + " x " + std::to_string(at.grid->nx) + " cells (ny x nx)";
        rd.fail_at(f.key, "an array of " + std::to_string(f.values->size()) + " values, but the " +
                              (at.mesh ? "mesh" : "grid") + " has " + cells);
      }
      // On a mesh the values come in the file's element order; the cells are renumbered (mesh.ordering).
      return at.mesh ? from_file_order(*at.mesh, *f.values) : *f.values;
    }
    case FieldSpec::Kind::raster:
    default: {
      Raster r = raster ? std::move(*raster) : read_field_raster(rd, f, *at.rasters);
      if (at.mesh) return on_mesh(rd, f, r, *at.mesh);
      return on_grid(rd, f, std::move(r), at);
    }
  }
}

void check_finite(const Reader& rd, const std::string& key, const std::vector<double>& v,
                  const std::vector<double>& z, const CellCentres& at, const FieldSpec* spec) {
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (std::isnan(z[k]) || std::isfinite(v[k])) continue;
    std::string what = key + " is " + num(v[k]) + " " + at_cell(at.x(k), at.y(k));
    if (at.mesh) what += " (element " + std::to_string(at.mesh->cell_tag[k]) + ")";
    if (spec && spec->kind == FieldSpec::Kind::raster && std::isnan(v[k])) what += " (NODATA in an active cell)";
    rd.fail(key, what);
  }
}

std::vector<double> forcing_field(const Reader& rd, const FieldSpec& f, const CellCentres& at,
                                  const std::vector<double>& z, double scale, const std::string& unit,
                                  double upper) {
  std::vector<double> v = evaluate(rd, f, at);
  check_finite(rd, f.key, v, z, at, &f);
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (std::isnan(z[k])) {
      v[k] = 0;
      continue;
    }
    if (!(v[k] >= 0 && v[k] <= upper))
      rd.fail(f.key, f.key + " is " + num(v[k]) + " " + at_cell(at.x(k), at.y(k)) + ": must be " +
                         allowed_range(upper) + " (" + unit + ")");
    v[k] *= scale;
  }
  return v;
}

std::vector<double> forcing_parameter(const Reader& rd, const FieldSpec& f, const CellCentres& at,
                                      const std::vector<double>& z, double scale, const std::string& unit,
                                      double upper) {
  if (f.kind != FieldSpec::Kind::constant) return forcing_field(rd, f, at, z, scale, unit, upper);
  if (!(f.value >= 0 && f.value <= upper))
    rd.fail_at(f.key, "must be " + allowed_range(upper) + " (" + unit + "), found " + num(f.value));
  return {f.value * scale};
}

TimeSeries series_file(const Reader& rd, const std::string& key, const toml::node& n, const fs::path& base_dir,
                       double scale, const std::string& what, double t_end,
                       const std::optional<std::string>& negative) {
  const std::string file = rd.string(n, key);
  if (file.empty()) rd.fail_at(key, "empty file name");
  const fs::path path = fs::path(file).is_absolute() ? fs::path(file) : base_dir / file;
  TimeSeries s;
  try {
    s = read_time_series(path, scale, what);
  } catch (const InputError& e) {
    rd.fail_at(key, e.what());
  }
  if (negative) {
    for (std::size_t k = 0; k < s.v.size(); ++k)
      if (s.v[k] < 0)
        rd.fail_at(key, path.string() + ": " + what + " is negative at t = " + num(s.t[k]) + " s (" + *negative + ")");
  }
  if (s.t.size() > 1 && s.t.back() < t_end)
    rd.fail_at(key, "the run lasts until " + num(t_end) + " s but " + path.string() + " ends at " +
                        num(s.t.back()) + " s");
  return s;
}

void scale_discharge(const Reader& rd, const toml::table& t, const std::string& at, TimeSeries& discharge) {
  const std::optional<double> f = rd.number(t, at, "scale");
  if (!f) return;
  if (!(*f >= 0)) rd.fail_at(at + ".scale", "must be >= 0, found " + num(*f));
  for (double& v : discharge.v) v *= *f;
}

} // namespace shallows::io::case_reader
