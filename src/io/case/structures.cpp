// SPDX-License-Identifier: MIT
// [[structure]]: hydraulic structures between two cells (docs/structures.md):
// pumps and gates (a discharge, a number or a CSV series, optionally started
// and stopped by the inlet level) and culverts (circular or box barrels);
// weirs and walls along a line, whose crossings (the pairs of cells whose
// centres the line separates) become walls for the scheme; breaches of
// weirs. Every error names the structure and its key.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>

#include "reader.hpp"

namespace shallows::io::case_reader {
namespace {

const Keys kPumpKeys{"name", "type", "inlet", "outlet", "discharge", "on", "off"};
const Keys kCulvertKeys{"name",   "type",   "inlet",  "outlet",  "shape",         "diameter",  "width",
                        "height", "length", "invert", "manning", "entrance_loss", "exit_loss", "one_way"};
const Keys kWeirKeys{"name", "type", "points", "crest", "coefficient"};
const Keys kWallKeys{"name", "type", "points"};
const Keys kBreachKeys{"name", "type", "line", "at", "start", "trigger", "bottom", "width"};
const Keys kTriggerKeys{"level", "duration"};
const Keys kGrowthKeys{"initial", "final", "model", "f1", "f2", "critical_velocity"};

const Keys& keys_of(StructureKind k) {
  switch (k) {
    case StructureKind::culvert: return kCulvertKeys;
    case StructureKind::weir: return kWeirKeys;
    case StructureKind::wall: return kWallKeys;
    case StructureKind::breach: return kBreachKeys;
    default: return kPumpKeys;
  }
}

// The structure's entry as messages name it.
struct Entry {
  const Reader& rd;
  const toml::table& t;
  std::string at;    // structure[k]
  std::string name;  // structure 'culvert'

  std::string key(std::string_view k) const { return dotted(at, k); }
  [[noreturn]] void fail(std::string_view k, const std::string& msg) const { rd.fail_at(key(k), name + ": " + msg); }

  double required(std::string_view k, const std::string& meaning) const {
    const auto v = rd.number(t, at, k);
    if (!v) fail(k, "missing: " + meaning);
    return *v;
  }
  double positive(std::string_view k, const std::string& meaning) const {
    const double v = required(k, meaning);
    if (!(v > 0)) fail(k, "must be > 0 (" + meaning + "), found " + num(v));
    return v;
  }
  double non_negative(std::string_view k, double dflt, const std::string& meaning) const {
    const double v = rd.number(t, at, k).value_or(dflt);
    if (!(v >= 0)) fail(k, "must be >= 0 (" + meaning + "), found " + num(v));
    return v;
  }
  // A pair of numbers [a, b] at key k.
  std::array<double, 2> pair(std::string_view k, const std::string& meaning) const {
    const toml::node* n = t.get(k);
    if (!n) fail(k, "missing: " + meaning);
    const toml::array* a = n->as_array();
    if (!a || a->size() != 2) rd.fail_type(key(k), "an array of two numbers (" + meaning + ")", *n);
    return {rd.number(*a->get(0), key(k) + "[0]"), rd.number(*a->get(1), key(k) + "[1]")};
  }
};

// The active cell holding an end (inlet or outlet) of structure e.
index_t end_cell(const Entry& e, std::string_view k, const CellCentres& where, const Problem& p) {
  const auto xy = e.pair(k, "its point [x, y] (m)");
  return active_cell_at(e.rd, e.key(k), e.name + ": " + std::string(k) + " at (" + num(xy[0]) + ", " + num(xy[1]) + ")",
                        xy[0], xy[1], where, p);
}

void read_pump(const Entry& e, const fs::path& base_dir, Structure& s, const Problem& p) {
  e.rd.check_keys(e.t, e.at, kPumpKeys);
  const toml::node* q = e.t.get("discharge");
  if (!q) e.fail("discharge", "missing: the discharge from the inlet to the outlet (m^3/s, a number or a CSV file)");
  if (q->is_number()) {
    const double v = e.rd.number(*q, e.key("discharge"));
    if (!(v >= 0)) e.fail("discharge", "must be >= 0 (it flows from the inlet to the outlet), found " + num(v));
    s.discharge = TimeSeries::constant(v);
  } else if (q->is_string()) {
    s.discharge = series_file(e.rd, e.key("discharge"), *q, base_dir, 1.0, "discharge (m^3/s)", p.t_end,
                              std::string("it flows from the inlet to the outlet"));
  } else {
    e.rd.fail_type(e.key("discharge"), "a number (m^3/s) or a CSV file name", *q);
  }
  const auto on = e.rd.number(e.t, e.at, "on");
  const auto off = e.rd.number(e.t, e.at, "off");
  if (off && !on) e.fail("off", "a level that stops it needs one that starts it ('on')");
  if (on) {
    s.spec.controlled = true;
    s.spec.on = *on;
    s.spec.off = off.value_or(*on);
    if (s.spec.off > s.spec.on)
      e.fail("off", "the level that stops it (" + num(s.spec.off) + " m) is above the one that starts it (" +
                        num(s.spec.on) + " m)");
  }
}

void read_culvert(const Entry& e, Structure& s, const Problem& p) {
  e.rd.check_keys(e.t, e.at, kCulvertKeys);
  StructureSpec& c = s.spec;
  const std::string shape = e.rd.string(e.t, e.at, "shape").value_or("");
  if (!e.t.contains("shape")) e.fail("shape", "missing: \"circular\" (with diameter) or \"box\" (with width, height)");
  if (shape == "circular") {
    c.shape = CulvertShape::circular;
    for (const char* k : {"width", "height"})
      if (e.t.contains(k)) e.fail(k, "a circular culvert takes its diameter only");
    c.height = c.width = e.positive("diameter", "the barrel's diameter (m)");
  } else if (shape == "box") {
    c.shape = CulvertShape::box;
    if (e.t.contains("diameter")) e.fail("diameter", "a box culvert takes its width and height");
    c.width = e.positive("width", "the box's width (m)");
    c.height = e.positive("height", "the box's height (m)");
  } else {
    e.fail("shape", "unknown shape '" + clip(shape) + "' (valid: circular, box)");
  }
  c.length = e.positive("length", "the barrel's length (m)");
  c.n_manning = e.required("manning", "the barrel's Manning coefficient (s/m^(1/3))");
  if (!(c.n_manning >= 0)) e.fail("manning", "must be >= 0, found " + num(c.n_manning));
  c.entrance_loss = e.non_negative("entrance_loss", 0.5, "the entrance loss coefficient");
  c.exit_loss = e.non_negative("exit_loss", 1.0, "the exit loss coefficient");
  if (const toml::node* n = e.t.get("one_way")) {
    if (!n->is_boolean()) e.rd.fail_type(e.key("one_way"), "true or false", *n);
    c.one_way = *n->value<bool>();
  }
  const auto invert = e.pair("invert", "the invert levels [inlet, outlet] (m)");
  c.invert_in = invert[0];
  c.invert_out = invert[1];
  const double z_in = p.z[static_cast<std::size_t>(s.inlet)], z_out = p.z[static_cast<std::size_t>(s.outlet)];
  if (c.invert_in < z_in)
    e.fail("invert", "the inlet's invert " + num(c.invert_in) + " m is below the bed of the cell holding the inlet (" +
                         num(z_in) + " m)");
  if (c.invert_out < z_out)
    e.fail("invert", "the outlet's invert " + num(c.invert_out) +
                         " m is below the bed of the cell holding the outlet (" + num(z_out) + " m)");
}


// ------------------------------------------------------------ lines

struct Point {
  double x, y;
};

// > 0 where c lies left of the line from a to b, twice the triangle's area.
double orient(Point a, Point b, Point c) { return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x); }

// The line's points ([[x, y], ...], at least two, consecutive ones distinct).
std::vector<Point> line_points(const Entry& e) {
  const toml::node* n = e.t.get("points");
  if (!n) e.fail("points", "missing: the line's points [[x, y], ...] (m)");
  const toml::array* a = n->as_array();
  if (!a) e.rd.fail_type(e.key("points"), "an array of points [[x, y], ...]", *n);
  std::vector<Point> out;
  for (std::size_t k = 0; k < a->size(); ++k) {
    const std::string at = e.key("points") + "[" + std::to_string(k) + "]";
    const toml::array* xy = a->get(k)->as_array();
    if (!xy || xy->size() != 2) e.rd.fail_type(at, "a point [x, y] (m)", *a->get(k));
    out.push_back({e.rd.number(*xy->get(0), at + "[0]"), e.rd.number(*xy->get(1), at + "[1]")});
    if (k > 0 && out[k].x == out[k - 1].x && out[k].y == out[k - 1].y)
      e.fail("points", "points " + std::to_string(k - 1) + " and " + std::to_string(k) + " are the same");
  }
  if (out.size() < 2) e.fail("points", "a line needs at least two points, found " + std::to_string(out.size()));
  return out;
}

// Where the line crosses the segment from the centre of cell a to that of
// cell b: an odd number of times (a point on the line counts on its right),
// the first crossing's distance along the line and the side a lies on.
struct Crossed {
  bool odd = false;
  double s = 0;
  bool a_left = false;
};

Crossed cross(const std::vector<Point>& line, const std::vector<double>& along, Point a, Point b) {
  Crossed out;
  int count = 0;
  for (std::size_t k = 0; k + 1 < line.size(); ++k) {
    const Point p0 = line[k], p1 = line[k + 1];
    if (std::max(a.x, b.x) < std::min(p0.x, p1.x) || std::min(a.x, b.x) > std::max(p0.x, p1.x) ||
        std::max(a.y, b.y) < std::min(p0.y, p1.y) || std::min(a.y, b.y) > std::max(p0.y, p1.y))
      continue;
    const double da = orient(p0, p1, a), db = orient(p0, p1, b);
    const double d0 = orient(a, b, p0), d1 = orient(a, b, p1);
    if ((da > 0) == (db > 0) || (d0 > 0) == (d1 > 0)) continue;
    const double s = along[k] + d0 / (d0 - d1) * (along[k + 1] - along[k]);
    if (count == 0 || s < out.s) {
      out.s = s;
      out.a_left = da > 0;
    }
    ++count;
  }
  out.odd = count % 2 == 1;
  return out;
}

// The distance along the line to each of its points.
std::vector<double> distances(const std::vector<Point>& line) {
  std::vector<double> out{0.0};
  for (std::size_t k = 1; k < line.size(); ++k)
    out.push_back(out.back() + std::hypot(line[k].x - line[k - 1].x, line[k].y - line[k - 1].y));
  return out;
}

// The pairs of active cells the line separates: on a grid across the faces
// between neighbours, on a mesh across the interior edges. The line is
// first moved by a few ten-millionths of a cell, the same for every line, so
// that it passes through no centre and along no pair of centres (a line along
// a row of centres, turning on one, would otherwise leave a pair on its two
// sides uncut).
std::vector<LineCrossing> line_crossings(std::vector<Point> line, const Problem& p) {
  const double cell = p.mesh ? std::sqrt(p.mesh->cell_area[0]) : std::min(p.grid.dx, p.grid.dy);
  for (Point& q : line) {
    q.x += 1.4142135623730951e-7 * cell;
    q.y += 0.7320508075688772e-7 * cell;
  }
  const std::vector<double> along = distances(line);
  std::vector<LineCrossing> out;
  const auto add = [&](index_t a, index_t b, Point ca, Point cb, double length) {
    const Crossed c = cross(line, along, ca, cb);
    if (!c.odd) return;
    out.push_back({c.a_left ? a : b, c.a_left ? b : a, length, 0.0, c.s});
  };
  const auto active = [&](index_t c) { return !std::isnan(p.z[static_cast<std::size_t>(c)]); };
  if (p.mesh) {
    const UnstructuredMesh& m = *p.mesh;
    for (index_t e = 0; e < m.edges(); ++e) {
      const auto k = static_cast<std::size_t>(e);
      const mesh_index l = m.edge_left[k], r = m.edge_right[k];
      if (r < 0) continue;
      add(l, r, {m.cell_x[static_cast<std::size_t>(l)], m.cell_y[static_cast<std::size_t>(l)]},
          {m.cell_x[static_cast<std::size_t>(r)], m.cell_y[static_cast<std::size_t>(r)]}, m.edge_length[k]);
    }
    return out;
  }
  const Grid& g = p.grid;
  // The cells around each of the line's segments: their east and north faces.
  std::vector<char> seen(static_cast<std::size_t>(g.cells()), 0);
  for (std::size_t k = 0; k + 1 < line.size(); ++k) {
    const auto column = [&](double x) {
      return std::clamp(static_cast<index_t>(std::floor((x - g.x0) / g.dx)), index_t(0), g.nx - 1);
    };
    const auto row = [&](double y) {
      return std::clamp(static_cast<index_t>(std::floor((y - g.y0) / g.dy)), index_t(0), g.ny - 1);
    };
    const index_t i0 = std::max<index_t>(column(std::min(line[k].x, line[k + 1].x)) - 1, 0);
    const index_t i1 = column(std::max(line[k].x, line[k + 1].x));
    const index_t j0 = std::max<index_t>(row(std::min(line[k].y, line[k + 1].y)) - 1, 0);
    const index_t j1 = row(std::max(line[k].y, line[k + 1].y));
    for (index_t j = j0; j <= j1; ++j) {
      for (index_t i = i0; i <= i1; ++i) {
        const index_t c = j * g.nx + i;
        if (seen[static_cast<std::size_t>(c)]++ || !active(c)) continue;
        const Point here{g.x_center(i), g.y_center(j)};
        if (i + 1 < g.nx && active(c + 1)) add(c, c + 1, here, {g.x_center(i + 1), here.y}, g.dy);
        if (j + 1 < g.ny && active(c + g.nx)) add(c, c + g.nx, here, {here.x, g.y_center(j + 1)}, g.dx);
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const LineCrossing& a, const LineCrossing& b) { return a.s < b.s; });
  return out;
}

void read_line(const Entry& e, const fs::path& base_dir, Structure& s, const Problem& p) {
  const std::vector<Point> line = line_points(e);
  if (!p.mesh && p.scheme == Scheme::roe3)
    e.fail("type", "weirs and walls run on grids with the first-order scheme only so far (this case asks for "
                   "third order, roe3)");
  s.crossings = line_crossings(line, p);
  if (s.crossings.empty())
    e.fail("points", std::string("the line crosses no ") + (p.mesh ? "edge between two active cells of the mesh"
                                                                    : "face between two active cells of the grid") +
                         " (it must separate the centres of neighbouring cells)");
  if (s.spec.kind == StructureKind::wall) return;
  s.spec.coefficient = e.positive("coefficient", "C of Q = C L H^1.5 (m^0.5/s), free flow");
  const toml::node* c = e.t.get("crest");
  if (!c) e.fail("crest", "missing: the crest level (m, a number or a CSV of distance along the line, crest)");
  if (c->is_number()) {
    const double z = e.rd.number(*c, e.key("crest"));
    for (LineCrossing& x : s.crossings) x.crest = z;
  } else if (c->is_string()) {
    const TimeSeries crest = series_file(e.rd, e.key("crest"), *c, base_dir, 1.0, "crest (m) against the distance "
                                         "along the line (m)", 0.0, std::nullopt);
    for (LineCrossing& x : s.crossings) x.crest = series_value(crest.view(), x.s);
  } else {
    e.rd.fail_type(e.key("crest"), "a number (m) or a CSV file of (distance along the line, crest)", *c);
  }
}

// A breach's own keys; its line and `at` are resolved once every structure is read (resolve_breach).
void read_breach(const Entry& e, const fs::path& base_dir, Structure& s) {
  StructureSpec& b = s.spec;
  if (!e.rd.string(e.t, e.at, "line")) e.fail("line", "missing: the name of the weir it opens");
  e.pair("at", "its centre [x, y] on the weir's line (m)");
  b.bottom = e.required("bottom", "the breach's final bottom level (m)");
  const toml::node* trigger = e.t.get("trigger");
  const bool start = e.t.contains("start");
  if (start == (trigger != nullptr))
    e.fail(start ? "trigger" : "start", "give either 'start' (a time, s) or 'trigger' ({ level = ..., duration = ... })");
  if (start) {
    b.start = e.required("start", "the time it starts (s)");
  } else {
    const toml::table* t = trigger->as_table();
    if (!t) e.rd.fail_type(e.key("trigger"), "a table { level = ..., duration = ... }", *trigger);
    e.rd.check_keys(*t, e.key("trigger"), kTriggerKeys);
    const auto level = e.rd.number(*t, e.key("trigger"), "level");
    if (!level) e.fail("trigger.level", "missing: the water level (m) that starts it");
    const double duration = e.rd.number(*t, e.key("trigger"), "duration").value_or(0.0);
    if (!(duration >= 0)) e.fail("trigger.duration", "must be >= 0 (s), found " + num(duration));
    b.triggered = true;
    b.trigger_level = *level;
    b.trigger_duration = duration;
  }
  const toml::node* w = e.t.get("width");
  if (!w) e.fail("width", "missing: { initial = ..., final = ..., model = \"verheij\" } or a CSV of (time since it "
                          "started, width)");
  if (w->is_string()) {
    b.growth = BreachGrowth::series;
    s.width = series_file(e.rd, e.key("width"), *w, base_dir, 1.0, "width (m)", 0.0,
                          std::string("a width is >= 0"));
    return;
  }
  const toml::table* t = w->as_table();
  if (!t) e.rd.fail_type(e.key("width"), "a table { initial, final, model = \"verheij\" } or a CSV file name", *w);
  e.rd.check_keys(*t, e.key("width"), kGrowthKeys);
  const std::string model = e.rd.string(*t, e.key("width"), "model").value_or("verheij");
  if (model != "verheij") e.fail("width.model", "unknown model '" + clip(model) + "' (valid: verheij)");
  b.growth = BreachGrowth::verheij;
  const Entry g{e.rd, *t, e.key("width"), e.name};
  b.width_initial = g.non_negative("initial", 0.0, "the width when it starts (m)");
  b.width_final = g.positive("final", "the width it grows to (m)");
  if (b.width_final < b.width_initial)
    g.fail("final", "the final width " + num(b.width_final) + " m is below the initial one " + num(b.width_initial) +
                        " m");
  b.f1 = g.non_negative("f1", 1.3, "Verheij-van der Knaap's f1");
  b.f2 = g.non_negative("f2", 0.04, "Verheij-van der Knaap's f2");
  b.critical_velocity = g.non_negative("critical_velocity", 0.2, "the dike's critical flow velocity (m/s)");
  if (!(b.critical_velocity > 0)) g.fail("critical_velocity", "must be > 0 (m/s)");
}

// The weir a breach opens (by name), where on its line it lies and the crossing nearest it.
void resolve_breach(const Entry& e, std::size_t self, std::vector<Structure>& all, std::size_t first,
                    const std::vector<std::vector<Point>>& lines) {
  Structure& s = all[self];
  const std::string name = *e.rd.string(e.t, e.at, "line");
  std::size_t w = first;
  std::string weirs;
  for (; w < all.size(); ++w) {
    if (all[w].spec.kind != StructureKind::weir) continue;
    if (all[w].name == name) break;
    weirs += (weirs.empty() ? "" : ", ") + all[w].name;
  }
  if (w == all.size())
    e.fail("line", "names no weir: '" + clip(name) + "' (weirs: " + (weirs.empty() ? "none" : weirs) + ")");
  const std::vector<Point>& line = lines[w - first];
  const auto xy = e.pair("at", "its centre [x, y] on the weir's line (m)");
  const Point at{xy[0], xy[1]};
  // The nearest point of the line.
  const std::vector<double> along = distances(line);
  double best = -1, s_at = 0;
  for (std::size_t k = 0; k + 1 < line.size(); ++k) {
    const double dx = line[k + 1].x - line[k].x, dy = line[k + 1].y - line[k].y, l2 = dx * dx + dy * dy;
    const double u = std::clamp(((at.x - line[k].x) * dx + (at.y - line[k].y) * dy) / l2, 0.0, 1.0);
    const double d = std::hypot(line[k].x + u * dx - at.x, line[k].y + u * dy - at.y);
    if (best < 0 || d < best) {
      best = d;
      s_at = along[k] + u * (along[k + 1] - along[k]);
    }
  }
  const double tolerance = std::max(0.01, 1e-6 * along.back());
  if (best > tolerance)
    e.fail("at", "(" + num(at.x) + ", " + num(at.y) + ") is " + num(best) + " m off the line of weir '" +
                     all[w].name + "' (it must lie on it, within " + num(tolerance) + " m)");
  s.spec.weir = static_cast<int>(w);
  s.spec.at = s_at;
  const std::vector<LineCrossing>& x = all[w].crossings;
  std::size_t nearest = 0;
  for (std::size_t k = 1; k < x.size(); ++k)
    if (std::abs(x[k].s - s_at) < std::abs(x[nearest].s - s_at)) nearest = k;
  s.spec.sensor = static_cast<int>(nearest);
  if (!(s.spec.bottom < x[nearest].crest))
    e.fail("bottom", "the bottom " + num(s.spec.bottom) + " m is not below the crest of weir '" + all[w].name +
                         "' at `at` (" + num(x[nearest].crest) + " m)");
}

// The mesh with the edges between the crossings' cells made walls on both
// sides: each such edge keeps its left cell, and a new edge, reversed,
// serves its right cell.
UnstructuredMesh cut_edges(const UnstructuredMesh& mesh, const std::vector<Structure>& structures) {
  UnstructuredMesh out = mesh;
  if (out.boundary_names.empty()) out.boundary_names.emplace_back();
  std::map<std::pair<mesh_index, mesh_index>, mesh_index> edge_of;
  for (index_t e = 0; e < mesh.edges(); ++e) {
    const auto k = static_cast<std::size_t>(e);
    if (mesh.edge_right[k] >= 0) edge_of[{mesh.edge_left[k], mesh.edge_right[k]}] = static_cast<mesh_index>(e);
  }
  for (const Structure& s : structures) {
    for (const LineCrossing& x : s.crossings) {
      const auto l = static_cast<mesh_index>(x.left), r = static_cast<mesh_index>(x.right);
      auto it = edge_of.find({l, r});
      if (it == edge_of.end()) it = edge_of.find({r, l});
      if (it == edge_of.end()) continue;  // cut already, by another line
      const auto k = static_cast<std::size_t>(it->second);
      const mesh_index right = out.edge_right[k];
      edge_of.erase(it);
      const auto cut = static_cast<mesh_index>(out.edge_left.size());
      out.push_reversed_wall(out, k);
      out.edge_right[k] = boundary_code(0);
      for (int slot = 0; slot < 4; ++slot) {
        mesh_index& e = out.cell_edges[static_cast<std::size_t>(4 * right + slot)];
        if (e == static_cast<mesh_index>(k)) e = cut;
      }
    }
  }
  return out;
}

}  // namespace

void read_structures(const Reader& rd, const toml::node& n, const fs::path& base_dir, const CellCentres& where,
                     Problem& p) {
  const toml::array* a = n.as_array();
  if (!a) rd.fail_type("structure", "an array of tables [[structure]] with name and type", n);
  std::vector<std::string> names;
  const std::size_t first = p.forcing.structures.size();
  std::vector<std::vector<Point>> lines;  // per structure read here: its line, if any
  std::vector<std::size_t> breaches;
  for (std::size_t k = 0; k < a->size(); ++k) {
    const std::string at = "structure[" + std::to_string(k) + "]";
    const toml::table* t = a->get(k)->as_table();
    if (!t) rd.fail_type(at, "a table { name = \"...\", type = \"pump\", ... }", *a->get(k));
    const auto name = rd.string(*t, at, "name");
    if (!name) rd.fail_at(at + ".name", "missing: every structure needs a name (for structures.csv and summary.json)");
    if (name->empty() || name->find_first_of(",\"\r\n") != std::string::npos)
      rd.fail_at(at + ".name", "structure name \"" + clip(*name) + "\" must be non-empty and hold no comma, quote or "
                                                                  "line break");
    if (std::find(names.begin(), names.end(), *name) != names.end())
      rd.fail_at(at + ".name", "structure name '" + clip(*name) + "' used twice");
    names.push_back(*name);
    const Entry e{rd, *t, at, "structure '" + clip(*name) + "'"};
    const auto type = rd.string(*t, at, "type");
    if (!type) e.fail("type", "missing (pump, gate, culvert, weir, wall or breach)");
    Structure s;
    s.name = *name;
    static const std::map<std::string, StructureKind> kinds{
        {"pump", StructureKind::pump}, {"gate", StructureKind::gate},     {"culvert", StructureKind::culvert},
        {"weir", StructureKind::weir}, {"wall", StructureKind::wall},     {"breach", StructureKind::breach}};
    const auto kind = kinds.find(*type);
    if (kind == kinds.end()) {
      static const Keys valid{"pump", "gate", "culvert", "weir", "wall", "breach"};
      std::string msg = "unknown type '" + clip(*type) + "'";
      if (auto best = closest(*type, valid)) msg += " (did you mean '" + std::string(*best) + "'?)";
      e.fail("type", msg + "; valid: pump, gate, culvert, weir, wall, breach");
    }
    s.spec.kind = kind->second;
    // The keys first, so that a misspelt one is named before what it leaves missing.
    rd.check_keys(*t, at, keys_of(s.spec.kind));
    lines.emplace_back();
    if (s.on_line()) {
      lines.back() = line_points(e);
      read_line(e, base_dir, s, p);
    } else if (s.spec.kind == StructureKind::breach) {
      read_breach(e, base_dir, s);
      breaches.push_back(k);
    } else {
      s.inlet = end_cell(e, "inlet", where, p);
      s.outlet = end_cell(e, "outlet", where, p);
      if (s.inlet == s.outlet) e.fail("outlet", "the inlet and the outlet lie in the same cell");
      if (s.spec.kind == StructureKind::culvert)
        read_culvert(e, s, p);
      else
        read_pump(e, base_dir, s, p);
    }
    p.forcing.structures.push_back(std::move(s));
  }
  for (std::size_t k : breaches) {
    const std::string at = "structure[" + std::to_string(k) + "]";
    const toml::table& t = *a->get(k)->as_table();
    const Entry e{rd, t, at, "structure '" + clip(p.forcing.structures[first + k].name) + "'"};
    resolve_breach(e, first + k, p.forcing.structures, first, lines);
  }
  // A face or edge belongs to one line at most: two would exchange across it twice, or a wall would not hold.
  std::map<std::pair<index_t, index_t>, std::size_t> owner;
  bool cut = false;
  for (std::size_t k = first; k < p.forcing.structures.size(); ++k) {
    const Structure& s = p.forcing.structures[k];
    for (const LineCrossing& x : s.crossings) {
      const auto [it, fresh] = owner.emplace(std::minmax(x.left, x.right), k);
      if (fresh) continue;
      const toml::table& t = *a->get(k - first)->as_table();
      const Entry e{rd, t, "structure[" + std::to_string(k - first) + "]", "structure '" + clip(s.name) + "'"};
      e.fail("points", "its line crosses the face or edge between cells " + std::to_string(x.left) + " and " +
                           std::to_string(x.right) + " that structure '" + p.forcing.structures[it->second].name +
                           "' crosses too (one line to a face)");
    }
    cut = cut || !s.crossings.empty();
  }
  if (cut && p.mesh) p.mesh = std::make_shared<const UnstructuredMesh>(cut_edges(*p.mesh, p.forcing.structures));
}

}  // namespace shallows::io::case_reader
