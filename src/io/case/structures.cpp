// SPDX-License-Identifier: MIT
// [[structure]]: hydraulic structures between two cells (docs/structures.md):
// pumps and gates (a discharge, a number or a CSV series, optionally started
// and stopped by the inlet level) and culverts (circular or box barrels).
// Every error names the structure and its key.
#include <algorithm>
#include <array>
#include <cmath>

#include "reader.hpp"

namespace shallows::io::case_reader {
namespace {

const Keys kPumpKeys{"name", "type", "inlet", "outlet", "discharge", "on", "off"};
const Keys kCulvertKeys{"name",   "type",   "inlet",  "outlet",  "shape",         "diameter",  "width",
                        "height", "length", "invert", "manning", "entrance_loss", "exit_loss", "one_way"};

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

}  // namespace

void read_structures(const Reader& rd, const toml::node& n, const fs::path& base_dir, const CellCentres& where,
                     Problem& p) {
  const toml::array* a = n.as_array();
  if (!a) rd.fail_type("structure", "an array of tables [[structure]] with name and type", n);
  std::vector<std::string> names;
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
    if (!type) e.fail("type", "missing (pump, gate or culvert)");
    Structure s;
    s.name = *name;
    if (*type == "pump" || *type == "gate") {
      s.spec.kind = *type == "pump" ? StructureKind::pump : StructureKind::gate;
    } else if (*type == "culvert") {
      s.spec.kind = StructureKind::culvert;
    } else if (*type == "weir" || *type == "wall" || *type == "breach") {
      e.fail("type", "\"" + *type + "\" structures are not built yet (built: pump, gate, culvert)");
    } else {
      static const Keys valid{"pump", "gate", "culvert"};
      std::string msg = "unknown type '" + clip(*type) + "'";
      if (auto best = closest(*type, valid)) msg += " (did you mean '" + std::string(*best) + "'?)";
      e.fail("type", msg + "; valid: pump, gate, culvert");
    }
    // The keys first, so that a misspelt one is named before what it leaves missing.
    rd.check_keys(*t, at, s.spec.kind == StructureKind::culvert ? kCulvertKeys : kPumpKeys);
    s.inlet = end_cell(e, "inlet", where, p);
    s.outlet = end_cell(e, "outlet", where, p);
    if (s.inlet == s.outlet) e.fail("outlet", "the inlet and the outlet lie in the same cell");
    if (s.spec.kind == StructureKind::culvert)
      read_culvert(e, s, p);
    else
      read_pump(e, base_dir, s, p);
    p.forcing.structures.push_back(std::move(s));
  }
}

}  // namespace shallows::io::case_reader
