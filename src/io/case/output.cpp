// SPDX-License-Identifier: MIT
// [output]: the output folder, formats, gauges and checkpoints.
#include <algorithm>
#include <cmath>

#include "reader.hpp"

namespace shallows::io::case_reader {
namespace {

// The rectangle a gauge must lie in: the grid, or the mesh's bounding box
// (the output writer then finds the cell that holds it).
struct Extent {
  double x0, x1, y0, y1;
};

Extent extent_of(const Grid& g, const UnstructuredMesh* mesh) {
  if (!mesh) return {g.x0, g.x1(), g.y0, g.y1()};
  const auto [xlo, xhi] = std::minmax_element(mesh->node_x.begin(), mesh->node_x.end());
  const auto [ylo, yhi] = std::minmax_element(mesh->node_y.begin(), mesh->node_y.end());
  return {*xlo, *xhi, *ylo, *yhi};
}

// The output settings, less those of the rasters and scalars.
OutputSettings read_settings(const Reader& rd, const toml::table* o, const Extent& g, Precision run_precision) {
  OutputSettings out;
  out.precision = run_precision;
  if (!o) return out;
  rd.check_keys(*o, "output", find_section("output")->keys);
  if (auto dir = rd.string(*o, "output", "dir")) {
    if (dir->empty()) rd.fail_at("output.dir", "empty directory name");
    out.dir = *dir;
  }
  if (const toml::node* f = o->get("format")) {
    static const Keys valid{"netcdf", "vtk", "png", "geotiff"};
    std::vector<std::pair<std::string, std::string>> items;  // value, key for messages
    if (f->is_string()) {
      items.emplace_back(*f->value<std::string>(), "output.format");
    } else if (const toml::array* a = f->as_array()) {
      for (std::size_t k = 0; k < a->size(); ++k) {
        const std::string at = "output.format[" + std::to_string(k) + "]";
        items.emplace_back(rd.string(*a->get(k), at), at);
      }
    } else {
      rd.fail_type("output.format", "an array of strings (netcdf, vtk, png, geotiff)", *f);
    }
    out.formats.clear();
    for (const auto& [v, at] : items) {
      if (std::find(valid.begin(), valid.end(), v) == valid.end()) {
        std::string msg = "unknown format '" + clip(v) + "'";
        if (auto best = closest(v, valid)) msg += " (did you mean '" + std::string(*best) + "'?)";
        rd.fail_at(at, msg + "; valid: netcdf, vtk, png, geotiff");
      }
      if (v == "geotiff" && !have_gdal()) {
        rd.fail_at(at, "geotiff needs a build with GDAL (libgdal-dev); this build has none");
      }
      if (std::find(out.formats.begin(), out.formats.end(), v) == out.formats.end()) out.formats.push_back(v);
    }
  }
  if (auto s = rd.string(*o, "output", "precision")) {
    if (*s == "double")
      out.precision = Precision::double_precision;
    else if (*s == "float")
      out.precision = Precision::single_precision;
    else
      rd.fail_at("output.precision", "unknown precision '" + clip(*s) + "' (valid: float, double)");
  }
  if (auto a = rd.number(*o, "output", "arrival_threshold")) {
    if (!(*a > 0)) rd.fail_at("output.arrival_threshold", "must be > 0 (m), found " + num(*a));
    out.arrival_threshold = *a;
  }
  const auto seconds = [&](const char* key, const char* kind, double& to) {
    if (auto v = rd.number(*o, "output", key)) {
      if (!(*v > 0 && std::isfinite(*v)))
        rd.fail_at(std::string("output.") + key, std::string("must be > 0 (") + kind + " seconds), found " + num(*v));
      to = *v;
    }
  };
  seconds("checkpoint_every", "simulated", out.checkpoint_every);
  seconds("checkpoint_wall", "wall-clock", out.checkpoint_wall);
  if (const toml::node* gn = o->get("gauges")) {
    const toml::array* a = gn->as_array();
    if (!a) rd.fail_type("output.gauges", "an array of tables [{ name = \"g1\", x = .., y = .. }, ...]", *gn);
    for (std::size_t k = 0; k < a->size(); ++k) {
      const std::string at = "output.gauges[" + std::to_string(k) + "]";
      const toml::node& item = *a->get(k);
      const toml::table* t = item.as_table();
      if (!t) rd.fail_type(at, "a table { name = \"g1\", x = .., y = .. }", item);
      rd.check_keys(*t, at, {"name", "x", "y"});
      Gauge gauge;
      gauge.name = rd.string(*t, at, "name").value_or(std::string("g").append(std::to_string(k + 1)));
      if (gauge.name.empty()) rd.fail_at(at + ".name", "empty gauge name");
      if (gauge.name.find_first_of(",\"\r\n") != std::string::npos)
        rd.fail_at(at + ".name", "gauge name '" + clip(gauge.name) + "' may not contain commas, quotes or line breaks");
      const auto x = rd.number(*t, at, "x");
      const auto y = rd.number(*t, at, "y");
      if (!x || !y) rd.fail_at(at, "gauge '" + gauge.name + "' needs both x and y (m)");
      gauge.x = *x;
      gauge.y = *y;
      for (const auto& other : out.gauges)
        if (other.name == gauge.name) rd.fail_at(at + ".name", "gauge name '" + gauge.name + "' used twice");
      if (gauge.x < g.x0 || gauge.x > g.x1 || gauge.y < g.y0 || gauge.y > g.y1)
        rd.fail_at(at, "gauge '" + gauge.name + "' at (" + num(gauge.x) + ", " + num(gauge.y) +
                           ") is outside the domain [" + num(g.x0) + ", " + num(g.x1) + "] x [" +
                           num(g.y0) + ", " + num(g.y1) + "]");
      out.gauges.push_back(std::move(gauge));
    }
  }
  return out;
}

} // namespace

OutputSettings read_output(const Reader& rd, const toml::table& root, const Problem& p) {
  OutputSettings out =
      read_settings(rd, rd.table(root, "", "output"), extent_of(p.grid, p.mesh.get()), p.precision);
  if (p.mesh && std::find(out.formats.begin(), out.formats.end(), "geotiff") != out.formats.end())
    rd.fail_at("output.format", "geotiff writes Cartesian grids only; this case runs on a mesh ([mesh])");
  return out;
}

} // namespace shallows::io::case_reader
