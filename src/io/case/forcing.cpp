// SPDX-License-Identifier: MIT
// The forcing: rain ([rain]: a rate, a hyetograph, a field or a NetCDF stack
// of frames), infiltration ([infiltration]) and volume sources ([[source]]).
#include <algorithm>
#include <cmath>

#include "reader.hpp"
#include "shallows/io/rain_stack.hpp"
#include "shallows/mesh/unstructured/locate.hpp"

namespace shallows::io::case_reader {
namespace {

constexpr double m_per_mm = 1e-3;
constexpr double mps_per_mmph = 1.0 / 3.6e6;  // mm/h -> m/s

std::string describe_grid(const Grid& g) {
  return std::to_string(g.nx) + " x " + std::to_string(g.ny) + " cells of " + num(g.dx) + " x " + num(g.dy) +
         " m over [" + num(g.x0) + ", " + num(g.x1()) + "] x [" + num(g.y0) + ", " + num(g.y1()) + "]";
}

// rain.rate = { file = "radar.nc", variable = "rr" }: a NetCDF stack of rate
// rasters over time (io/rain_stack.hpp) onto the grid, frame by frame: as it
// is where it has the grid's cells, resampled where it has another
// resolution and covers the domain. Every active cell needs a rate >= 0 in
// every frame the run uses; inactive cells get 0.
void read_rain_frames(const Reader& rd, const toml::table& t, const fs::path& base_dir, const CellCentres& at,
                      Problem& p) {
  const std::string key = "rain.rate";
  rd.check_keys(t, key, {"file", "variable", "time", "resample"});
  const auto file = rd.string(t, key, "file");
  if (!file) rd.fail_at(key, "a NetCDF stack needs 'file' (e.g. { file = \"radar.nc\", variable = \"rr\" })");
  if (file->empty()) rd.fail_at(key + ".file", "empty file name");
  const auto variable = rd.string(t, key, "variable");
  if (!variable) rd.fail_at(key, "a NetCDF stack needs 'variable' (the name of its rain-rate variable)");
  if (variable->empty()) rd.fail_at(key + ".variable", "empty variable name");
  const std::string time = rd.string(t, key, "time").value_or("");
  if (t.contains("time") && time.empty()) rd.fail_at(key + ".time", "empty variable name");
  const Resample method = read_resample(rd, t, key);
  const fs::path path = fs::path(*file).is_absolute() ? fs::path(*file) : base_dir / *file;
  RainStack s;
  try {
    s = read_rain_stack(path, *variable, time, p.t_end);
  } catch (const InputError& e) {
    rd.fail_at(key, e.what());
  }

  const Grid& g = p.grid;
  const Grid& sg = s.grid;
  const auto near = [](double a, double b, double scale) { return std::abs(a - b) <= 1e-6 * scale; };
  const bool same_resolution = !at.mesh && near(sg.dx, g.dx, g.dx) && near(sg.dy, g.dy, g.dy);
  const bool same_grid = same_resolution && sg.nx == g.nx && sg.ny == g.ny && near(sg.x0, g.x0, g.dx) &&
                         near(sg.y0, g.y0, g.dy);
  const std::string grids = at.mesh ? std::string()
                                    : "the stack's grid (" + describe_grid(sg) + ") and the run's (" + describe_grid(g) + ")";
  if (same_resolution && !same_grid)
    rd.fail_at(key, path.string() + ": " + grids +
                        " differ: at the grid's resolution a stack must have the grid's cells (at another it is "
                        "resampled)");
  if (!same_grid && !at.mesh) {
    if (!near(sg.dx, sg.dy, sg.dx))
      rd.fail_at(key, path.string() + ": " + grids + " differ, and a stack is resampled onto the grid only where "
                                                     "its cells are square");
    const double tol = 1e-9 * sg.dx;
    if (g.x0 < sg.x0 - tol || g.x1() > sg.x1() + tol || g.y0 < sg.y0 - tol || g.y1() > sg.y1() + tol)
      rd.fail_at(key, path.string() + ": " + grids + " differ, and the stack does not cover the domain");
  }

  const auto frame_count = s.times.size();
  const auto cells = at.size();
  Rain& rain = p.forcing.rain;
  rain.frame_times = s.times;
  if (same_grid) {
    rain.frames = std::move(s.frames);
  } else {
    rain.frames.resize(frame_count * cells);
    Raster r;
    r.path = path;
    r.ncols = sg.nx;
    r.nrows = sg.ny;
    r.x0 = sg.x0;
    r.y0 = sg.y0;
    r.cellsize = sg.dx;
    const std::size_t stack_cells = static_cast<std::size_t>(sg.cells());
    for (std::size_t k = 0; k < frame_count; ++k) {
      const auto from = s.frames.begin() + static_cast<std::ptrdiff_t>(k * stack_cells);
      r.values.assign(from, from + static_cast<std::ptrdiff_t>(stack_cells));
      // On a mesh, at the centroids, as every raster there.
      std::vector<double> v;
      try {
        v = at.mesh ? sample_raster(r, at.mesh->cell_x, at.mesh->cell_y) : resample_raster(r, g, method);
      } catch (const InputError& e) {
        rd.fail_at(key, e.what());
      }
      std::copy(v.begin(), v.end(), rain.frames.begin() + static_cast<std::ptrdiff_t>(k * cells));
    }
  }
  for (std::size_t k = 0; k < frame_count; ++k) {
    double* frame = rain.frames.data() + k * cells;
    for (std::size_t c = 0; c < cells; ++c) {
      if (std::isnan(p.z[c])) {
        frame[c] = 0;
        continue;
      }
      if (std::isfinite(frame[c]) && frame[c] >= 0) continue;
      const std::string where = at_cell(at.x(c), at.y(c)) + " in the frame at t = " + num(s.times[k]) + " s";
      if (std::isnan(frame[c]))
        rd.fail_at(key, path.string() + ": '" + *variable + "' has no value (a fill value or NaN) " + where +
                            " (an active cell)");
      rd.fail_at(key, path.string() + ": '" + *variable + "' is " + num(frame[c] / s.to_mps) + " " + s.units + " " +
                          where + (std::isinf(frame[c]) ? ": rain rates must be finite" : ": rain rates must be >= 0"));
    }
  }
}

// [rain] rate (mm/h): a number, a CSV hyetograph { series = ... }, a field
// constant in time (an expression or a raster of rates), or a NetCDF stack of
// rasters over time { file = ..., variable = ... }.
void read_rain(const Reader& rd, const toml::table& r, const fs::path& base_dir, const CellCentres& at,
               Problem& p) {
  rd.check_keys(r, "rain", find_section("rain")->keys);
  const toml::node* n = r.get("rate");
  if (!n)
    rd.fail_at("rain.rate", "missing (mm/h: a number, an expression, { file = \"rain.tif\" }, "
                            "{ series = \"hyetograph.csv\" } or { file = \"radar.nc\", variable = \"rr\" })");
  Rain& rain = p.forcing.rain;
  if (const toml::table* t = n->as_table(); t && (t->contains("variable") || t->contains("time"))) {
    if (t->contains("series"))
      rd.fail_at("rain.rate", "give either series (a CSV hyetograph) or variable (a NetCDF stack), not both");
    read_rain_frames(rd, *t, base_dir, at, p);
    return;
  }
  if (const toml::table* t = n->as_table(); t && t->contains("series")) {
    if (t->contains("file"))
      rd.fail_at("rain.rate", "give either series (a CSV hyetograph) or file (a raster of rates), not both");
    rd.check_keys(*t, "rain.rate", {"series"});
    rain.rate = series_file(rd, "rain.rate.series", *t->get("series"), base_dir, mps_per_mmph, "rain rate (mm/h)",
                            p.t_end, "rain rates must be >= 0");
    return;
  }
  if (const toml::table* t = n->as_table(); t && !t->contains("file"))
    rd.fail_at("rain.rate", "table needs 'series' (a CSV hyetograph) or 'file' (a raster of rates)");
  const FieldSpec f = *field_spec(rd, r, "rain", "rate", base_dir);
  if (f.kind == FieldSpec::Kind::constant) {
    rain.rate = TimeSeries::constant(forcing_parameter(rd, f, at, p.z, mps_per_mmph, "mm/h")[0]);
  } else {
    rain.scale = forcing_field(rd, f, at, p.z, mps_per_mmph, "mm/h");
    rain.rate = TimeSeries::constant(1.0);
  }
}

// rain.scale: a factor on every rate of [rain] (a design storm scaled up or
// down, an ensemble's member), applied where the rates are kept.
void scale_rain(const Reader& rd, const toml::table& r, Rain& rain) {
  const std::optional<double> f = rd.number(r, "rain", "scale");
  if (!f) return;
  if (*f < 0) rd.fail_at("rain.scale", "must be >= 0, found " + num(*f));
  std::vector<double>& rates = rain.has_frames() ? rain.frames : rain.scale.empty() ? rain.rate.v : rain.scale;
  for (double& v : rates) v *= *f;
}

// [infiltration]: a model and its parameters, each a number (uniform) or a field.
void read_infiltration(const Reader& rd, const toml::table& t, const fs::path& base_dir, const CellCentres& at,
                       Problem& p) {
  rd.check_keys(t, "infiltration", find_section("infiltration")->keys);
  const auto model = rd.string(t, "infiltration", "model");
  if (!model) rd.fail_at("infiltration.model", "missing (green_ampt, initial_constant or none)");
  struct Parameter {
    std::string_view key;
    std::string meaning;
    double scale;
    std::string unit;
    double upper;
    std::vector<double>* to;
  };
  constexpr double any = std::numeric_limits<double>::infinity();
  Infiltration& inf = p.forcing.infiltration;
  const std::vector<Parameter> green_ampt{
      {"conductivity", "the saturated hydraulic conductivity Ks", mps_per_mmph, "mm/h", any, &inf.p0},
      {"suction", "the wetting-front suction head psi", 1.0, "m", any, &inf.p1},
      {"deficit", "the soil moisture deficit (porosity minus initial moisture content)", 1.0, "dimensionless", 1.0,
       &inf.p2}};
  const std::vector<Parameter> initial_constant{
      {"initial_loss", "the initial loss", m_per_mm, "mm", any, &inf.p0},
      {"loss_rate", "the constant loss rate", mps_per_mmph, "mm/h", any, &inf.p1}};
  const std::vector<Parameter>* params = nullptr;
  if (*model == "green_ampt") {
    inf.model = InfiltrationModel::green_ampt;
    params = &green_ampt;
  } else if (*model == "initial_constant") {
    inf.model = InfiltrationModel::initial_constant;
    params = &initial_constant;
    inf.p2 = {0.0};  // unused by the model, but there for executors that read every parameter
  } else if (*model != "none") {
    static const Keys valid{"green_ampt", "initial_constant", "none"};
    std::string msg = "unknown model '" + clip(*model) + "'";
    if (auto best = closest(*model, valid)) msg += " (did you mean '" + std::string(*best) + "'?)";
    rd.fail_at("infiltration.model", msg + "; valid: green_ampt, initial_constant, none");
  }
  // A parameter of another model is a mistake, not something to ignore.
  for (const auto* other : {&green_ampt, &initial_constant}) {
    if (other == params) continue;
    for (const Parameter& q : *other)
      if (t.contains(q.key))
        rd.fail_at(dotted("infiltration", q.key), "only used by model \"" +
                                                       std::string(other == &green_ampt ? "green_ampt"
                                                                                        : "initial_constant") +
                                                       "\", not \"" + *model + "\"");
  }
  if (!params) return;
  for (const Parameter& q : *params) {
    const auto f = field_spec(rd, t, "infiltration", q.key, base_dir);
    if (!f)
      rd.fail_at(dotted("infiltration", q.key),
                 "missing: model \"" + *model + "\" needs " + q.meaning + " (" + q.unit + ")");
    *q.to = forcing_parameter(rd, *f, at, p.z, q.scale, q.unit, q.upper);
  }
}

// The grid cell that holds (x, y) (the east and north edges belong to the
// last cells, as for gauges); -1 outside the grid.
index_t cell_at(const Grid& g, double x, double y) {
  if (!(x >= g.x0 && x <= g.x1() && y >= g.y0 && y <= g.y1())) return -1;
  const auto cell = [](double v, double v0, double d, index_t n) {
    return std::clamp<index_t>(static_cast<index_t>(std::floor((v - v0) / d)), 0, n - 1);
  };
  return cell(y, g.y0, g.dy, g.ny) * g.nx + cell(x, g.x0, g.dx, g.nx);
}

std::string cell_ij(const Grid& g, index_t c) {
  return "(i, j) = (" + std::to_string(c % g.nx) + ", " + std::to_string(c / g.nx) + ")";
}

// The concentrations of the water of the next Forcing::sources entry (a
// [[source]] or a [[boundary.segment]] at key `at`), one per scalar.
void add_source_concentrations(const Reader& rd, const toml::table& t, const std::string& at, Problem& p) {
  const std::vector<double> c = read_concentrations(rd, t, at, p.scalars);
  for (std::size_t k = 0; k < c.size(); ++k) p.scalars[k].sources.push_back(c[k]);
}

// [[source]]: points that bring water in (or take it out: a negative
// discharge) in the cell that holds them (a grid cell, or the mesh cell).
void read_sources(const Reader& rd, const toml::node& n, const fs::path& base_dir, const CellCentres& where,
                  double max_speed, Problem& p) {
  const toml::array* a = n.as_array();
  if (!a) rd.fail_type("source", "an array of tables [[source]] with x, y and discharge", n);
  std::vector<std::string> names;
  for (std::size_t k = 0; k < a->size(); ++k) {
    const std::string at = "source[" + std::to_string(k) + "]";
    const toml::table* t = a->get(k)->as_table();
    if (!t) rd.fail_type(at, "a table { name = \"...\", x = .., y = .., discharge = .. }", *a->get(k));
    rd.check_keys(*t, at, find_entry_keys("source")->keys);
    VolumeSource s;
    if (const auto name = rd.string(*t, at, "name")) {
      if (name->empty()) rd.fail_at(at + ".name", "empty source name");
      if (std::find(names.begin(), names.end(), *name) != names.end())
        rd.fail_at(at + ".name", "source name '" + clip(*name) + "' used twice");
      names.push_back(*name);
      s.name = "source '" + *name + "'";
    } else {
      s.name = "source " + std::to_string(k + 1);
    }
    const auto x = rd.number(*t, at, "x");
    const auto y = rd.number(*t, at, "y");
    if (!x || !y) rd.fail_at(at, s.name + " needs both x and y (m)");
    const index_t c = active_cell_at(rd, at, s.name + " at (" + num(*x) + ", " + num(*y) + ")", *x, *y, where, p);
    s.cells = {c};
    const toml::node* q = t->get("discharge");
    if (!q) rd.fail_at(at, s.name + " needs its discharge (m^3/s, a number or a CSV file \"q.csv\")");
    if (q->is_number()) {
      s.discharge = TimeSeries::constant(rd.number(*q, at + ".discharge"));
    } else if (q->is_string()) {
      s.discharge = series_file(rd, at + ".discharge", *q, base_dir, 1.0, "discharge (m^3/s)", p.t_end, std::nullopt);
    } else {
      rd.fail_type(at + ".discharge", "a number (m^3/s) or a CSV file name", *q);
    }
    scale_discharge(rd, *t, at, s.discharge);
    check_source_discharge(rd, at + ".discharge", s, p, where.mesh, max_speed);
    add_source_concentrations(rd, *t, at, p);
    p.forcing.sources.push_back(std::move(s));
  }
}

} // namespace

index_t active_cell_at(const Reader& rd, const std::string& key, const std::string& point, double x, double y,
                       const CellCentres& where, const Problem& p) {
  index_t c = -1;
  if (const UnstructuredMesh* m = where.mesh) {
    c = cells_holding(*m, {x}, {y})[0];
    if (c < 0) {
      const Box b = mesh_box(*m);
      rd.fail_at(key, point + " is outside the mesh " + m->source + " (in no cell; bounding box [" + num(b.x0) +
                          ", " + num(b.x1) + "] x [" + num(b.y0) + ", " + num(b.y1) + "])");
    }
    if (std::isnan(p.z[static_cast<std::size_t>(c)]))
      rd.fail_at(key, point + " lies in the inactive element " +
                          std::to_string(m->cell_tag[static_cast<std::size_t>(c)]) + " (bathymetry.z is NODATA there)");
    return c;
  }
  const Grid& g = p.grid;
  c = cell_at(g, x, y);
  if (c < 0)
    rd.fail_at(key, point + " is outside the domain [" + num(g.x0) + ", " + num(g.x1()) + "] x [" + num(g.y0) + ", " +
                        num(g.y1()) + "]");
  if (std::isnan(p.z[static_cast<std::size_t>(c)]))
    rd.fail_at(key, point + " lies in the inactive cell " + cell_ij(g, c) + " (bathymetry.z is NODATA there)");
  return c;
}

void check_source_discharge(const Reader& rd, const std::string& key, const VolumeSource& s, const Problem& p,
                            const UnstructuredMesh* mesh, double max_speed) {
  double perimeter = 0;
  for (index_t c : s.cells) perimeter += mesh ? mesh->cell_perimeter(c) : 2 * (p.grid.dx + p.grid.dy);
  const double bound = critical_discharge(max_speed, p.physics.g) * perimeter;
  for (std::size_t k = 0; k < s.discharge.v.size(); ++k) {
    const double q = s.discharge.v[k];
    if (std::abs(q) <= bound) continue;
    const std::string when = s.discharge.t.size() > 1 ? " at t = " + num(s.discharge.t[k]) + " s" : "";
    rd.fail_at(key, s.name + ": discharge " + num(q) + " m^3/s" + when + " exceeds " + num(bound) +
                        " m^3/s, what critical flow at physics.max_speed = " + num(max_speed) +
                        " m/s carries through the perimeter of its cells (" + num(perimeter) +
                        " m; raise physics.max_speed if the flow is meant to be that fast)");
  }
}

void read_forcing(const Reader& rd, const toml::table& root, const fs::path& base_dir, const CellCentres& at,
                  Problem& p, Reading& r) {
  if (const toml::table* rain = rd.table(root, "", "rain")) {
    read_rain(rd, *rain, base_dir, at, p);
    scale_rain(rd, *rain, p.forcing.rain);
    const std::vector<double> c = read_concentrations(rd, *rain, "rain", p.scalars);
    for (std::size_t k = 0; k < c.size(); ++k) p.scalars[k].rain = c[k];
  }
  if (const toml::table* i = rd.table(root, "", "infiltration")) read_infiltration(rd, *i, base_dir, at, p);
  if (const toml::node* s = root.get("source")) read_sources(rd, *s, base_dir, at, r.max_speed, p);
  if (const toml::node* s = root.get("structure")) read_structures(rd, *s, base_dir, at, p);
  if (at.mesh) return;  // segments: refused with the mesh's boundaries
  if (const toml::table* b = rd.table(root, "", "boundary"))
    if (const toml::node* s = b->get("segment")) read_segments(rd, *s, base_dir, p, r);
}

} // namespace shallows::io::case_reader
