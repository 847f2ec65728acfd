// SPDX-License-Identifier: MIT
// Case files: TOML schema validation, --set overrides, field evaluation
// (muParser expressions, numbers, ESRI ASCII rasters). See docs/case-file.md.
#include "shallows/io/case.hpp"

#include <muParser.h>
#include <omp.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <numbers>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <toml++/toml.h>
#include <utility>

#include "shallows/io/gmsh.hpp"
#include "shallows/io/rain_stack.hpp"
#include "shallows/io/raster.hpp"
#include "shallows/io/time_series.hpp"
#include "shallows/mesh/unstructured/build.hpp"
#include "shallows/mesh/unstructured/locate.hpp"
#include "shallows/mesh/unstructured/ordering.hpp"

#if defined(SHALLOWS_HAVE_GDAL)
#include <ogr_srs_api.h>
#endif

namespace shallows::io {
namespace {

namespace fs = std::filesystem;
using Keys = std::vector<std::string_view>;

// ---------------------------------------------------------------- schema

struct Section {
  std::string_view name;
  Keys keys;
};

const std::vector<Section>& sections() {
  static const std::vector<Section> s{
      {"domain", {"nx", "ny", "x", "y"}},
      {"mesh", {"file", "ordering", "seed"}},
      {"bathymetry", {"z"}},
      {"initial", {"eta", "h", "hu", "hv", "u", "v"}},
      {"boundary", {"west", "east", "south", "north", "segment"}},
      {"physics", {"g", "manning", "dry_tolerance", "max_speed"}},
      {"numerics", {"scheme", "cfl", "precision"}},
      {"time", {"end", "output_every", "output_times"}},
      {"output", {"dir", "format", "gauges", "arrival_threshold", "precision", "checkpoint_every", "checkpoint_wall"}},
      {"rain", {"rate", "concentration"}},
      {"infiltration", {"model", "conductivity", "suction", "deficit", "initial_loss", "loss_rate"}},
      {"parallel", {"ranks_x", "ranks_y", "halo_steps"}},
  };
  return s;
}

const Keys top_level_keys{"name", "domain", "mesh", "bathymetry", "initial", "boundary", "physics",
                          "numerics", "time", "output", "rain", "infiltration", "source", "scalar", "parallel"};

const Section* find_section(std::string_view name) {
  for (const auto& s : sections())
    if (s.name == name) return &s;
  return nullptr;
}

std::size_t levenshtein(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::size_t common_prefix(std::string_view a, std::string_view b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

// Closest valid key by edit distance (ties: longer common prefix, then
// schema order); none when it shares nothing with the unknown key.
std::optional<std::string_view> closest(std::string_view key, const Keys& valid) {
  std::optional<std::string_view> best;
  std::size_t best_d = 0, best_p = 0;
  for (auto v : valid) {
    const std::size_t d = levenshtein(key, v);
    const std::size_t p = common_prefix(key, v);
    if (!best || d < best_d || (d == best_d && p > best_p)) {
      best = v;
      best_d = d;
      best_p = p;
    }
  }
  if (best && best_d >= std::max(key.size(), best->size())) return std::nullopt;
  return best;
}

std::string join(const Keys& keys) {
  std::string s;
  for (auto k : keys) {
    if (!s.empty()) s += ", ";
    s += k;
  }
  return s;
}

// ---------------------------------------------------------------- formatting

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string clip(std::string_view s, std::size_t n = 60) {
  if (s.size() <= n) return std::string(s);
  return std::string(s.substr(0, n)) + "...";
}

std::string describe(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "string \"" + clip(*n.value<std::string>()) + "\"";
    case toml::node_type::integer: return "integer " + std::to_string(*n.value<std::int64_t>());
    case toml::node_type::floating_point: return "float " + num(*n.value<double>());
    case toml::node_type::boolean: return std::string("boolean ") + (*n.value<bool>() ? "true" : "false");
    case toml::node_type::array: return "array";
    case toml::node_type::table: return "table";
    case toml::node_type::date: return "date";
    case toml::node_type::time: return "time";
    case toml::node_type::date_time: return "date-time";
    default: return "nothing";
  }
}

std::string dotted(std::string_view prefix, std::string_view key) {
  if (prefix.empty()) return std::string(key);
  return std::string(prefix) + "." + std::string(key);
}

std::string at_cell(double x, double y) { return "at cell centre (x, y) = (" + num(x) + ", " + num(y) + ")"; }

// ---------------------------------------------------------------- reader

class Reader {
 public:
  Reader(std::string source, std::set<std::string> overridden)
      : source_(std::move(source)), overridden_(std::move(overridden)) {}

  // "--set" when the key's value came from an override, else the file.
  std::string src(std::string_view key) const {
    for (const auto& p : overridden_) {
      if (key == p) return "--set";
      if (key.size() > p.size() && key.substr(0, p.size()) == p && (key[p.size()] == '.' || key[p.size()] == '['))
        return "--set";
    }
    return source_;
  }

  [[noreturn]] void fail(std::string_view key, const std::string& msg) const {
    throw InputError(src(key) + ": " + msg);
  }
  // "<src>: <key>: <msg>"
  [[noreturn]] void fail_at(std::string_view key, const std::string& msg) const {
    fail(key, std::string(key) + ": " + msg);
  }
  [[noreturn]] void fail_type(std::string_view key, std::string_view expected, const toml::node& found) const {
    fail_at(key, "expected " + std::string(expected) + ", found " + describe(found));
  }

  void check_keys(const toml::table& t, std::string_view prefix, const Keys& valid) const {
    for (auto&& [k, v] : t) {
      const std::string_view key = k.str();
      if (std::find(valid.begin(), valid.end(), key) != valid.end()) continue;
      const std::string full = dotted(prefix, key);
      const bool section = prefix.empty() && v.is_table();
      std::string msg = std::string("unknown ") + (section ? "section" : "key") + " '" + full + "'";
      if (auto best = closest(key, valid))
        msg += " (did you mean '" + dotted(prefix, *best) + "'?)";
      else
        msg += " (valid: " + join(valid) + ")";
      fail(full, msg);
    }
  }

  const toml::table* table(const toml::table& t, std::string_view prefix, std::string_view key) const {
    const toml::node* n = t.get(key);
    if (!n) return nullptr;
    if (!n->is_table()) fail_type(dotted(prefix, key), "a table", *n);
    return n->as_table();
  }

  std::optional<double> number(const toml::table& t, std::string_view prefix, std::string_view key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    return number(*n, dotted(prefix, key));
  }
  double number(const toml::node& n, const std::string& key) const {
    if (!n.is_number()) fail_type(key, "a number", n);
    const double v = *n.value<double>();
    if (!std::isfinite(v)) fail_at(key, "must be a finite number, found " + num(v));
    return v;
  }

  std::optional<std::int64_t> integer(const toml::table& t, std::string_view prefix, std::string_view key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (!n->is_integer()) fail_type(dotted(prefix, key), "an integer", *n);
    return *n->value<std::int64_t>();
  }

  std::optional<std::string> string(const toml::table& t, std::string_view prefix, std::string_view key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    return string(*n, dotted(prefix, key));
  }
  std::string string(const toml::node& n, const std::string& key) const {
    if (!n.is_string()) fail_type(key, "a string", n);
    return *n.value<std::string>();
  }

  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::set<std::string> overridden_;
};

// ---------------------------------------------------------------- overrides

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t p = 0;
  while (true) {
    const std::size_t q = path.find('.', p);
    parts.push_back(trim(path.substr(p, q == std::string::npos ? std::string::npos : q - p)));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return parts;
}

// Applies "a.b.c=value" overrides; returns the dotted paths that were set.
std::set<std::string> apply_overrides(toml::table& root, const std::vector<std::string>& overrides) {
  const std::string src = "--set";
  std::set<std::string> done;
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos)
      throw InputError(src + ": expected section.key=value, found '" + clip(o) + "'");
    const std::vector<std::string> parts = split_path(o.substr(0, eq));
    const std::string value = trim(std::string_view(o).substr(eq + 1));
    std::string path;
    for (const auto& p : parts) {
      if (p.empty()) throw InputError(src + ": empty key in '" + clip(o) + "'");
      path = dotted(path, p);
    }

    // Validate the first two levels against the schema.
    if (std::find(top_level_keys.begin(), top_level_keys.end(), parts[0]) == top_level_keys.end()) {
      std::string msg = "unknown " + std::string(parts.size() > 1 ? "section" : "key") + " '" + parts[0] + "'";
      if (auto best = closest(parts[0], top_level_keys)) msg += " (did you mean '" + std::string(*best) + "'?)";
      throw InputError(src + ": " + msg);
    }
    // On a mesh, [boundary] keys are the mesh's group names, checked against the mesh when it is read.
    const bool mesh_group = parts[0] == "boundary" && root.contains("mesh");
    if (parts.size() > 1 && !mesh_group) {
      const Section* sec = find_section(parts[0]);
      if (!sec) throw InputError(src + ": '" + parts[0] + "' is not a section");
      if (std::find(sec->keys.begin(), sec->keys.end(), parts[1]) == sec->keys.end()) {
        std::string msg = "unknown key '" + parts[0] + "." + parts[1] + "'";
        if (auto best = closest(parts[1], sec->keys))
          msg += " (did you mean '" + parts[0] + "." + std::string(*best) + "'?)";
        else
          msg += " (valid: " + join(sec->keys) + ")";
        throw InputError(src + ": " + msg);
      }
    }

    // Walk to the parent table, creating tables on the way.
    toml::table* t = &root;
    std::string walked;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      walked = dotted(walked, parts[i]);
      toml::node* n = t->get(parts[i]);
      if (!n) {
        t->insert(parts[i], toml::table{});
        n = t->get(parts[i]);
      }
      if (!n->is_table())
        throw InputError(src + ": cannot set '" + path + "': '" + walked + "' is a " + describe(*n) +
                         ", not a table (set '" + walked + "' whole instead)");
      t = n->as_table();
    }

    // The value as TOML, else as a plain string.
    bool set = false;
    try {
      const std::string doc = "v = " + value;
      toml::table parsed = toml::parse(std::string_view(doc), std::string_view("--set"));
      if (parsed.size() == 1) {
        if (toml::node* v = parsed.get("v")) {
          v->visit([&](auto& node) { t->insert_or_assign(parts.back(), node); });
          set = true;
        }
      }
    } catch (const toml::parse_error&) {
    }
    if (!set) t->insert_or_assign(parts.back(), value);
    done.insert(path);
  }
  return done;
}

// ---------------------------------------------------------------- fields

struct FieldSpec {
  enum class Kind { constant, expression, raster } kind = Kind::constant;
  Resample resample = Resample::average;  // a raster at another resolution than the grid
  double value = 0;
  std::string expression;
  fs::path file;  // resolved against the case folder
  std::string key;
};

// `resample` in table t at key: how a raster is brought onto the grid.
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
  if (n->is_number()) {
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

// The first raster a case reads (the DEM where there is one): every other
// raster must share its coordinate system, and, with no [domain], its grid.
struct RasterReference {
  bool set = false;
  fs::path file;
  std::string crs_wkt;
  Grid grid;
};

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

// Where fields are evaluated: the centres of a grid's cells or the centroids
// of a mesh's cells, in the order of the Problem's fields. With `averages`
// (grids, third order), expressions give cell averages instead (3 x 3 Gauss
// points): a finite-volume scheme holds cell averages, and centre values
// differ from them by dx^2/24 f'', an O(dx^2) error that caps roe3 at second
// order (docs/numerics.md, "Cell averages, not centre values").
struct CellCentres {
  const Grid* grid = nullptr;
  const UnstructuredMesh* mesh = nullptr;
  bool averages = false;
  RasterReference* rasters = nullptr;  // the case's reference raster, set by the first raster read
  bool grid_from_raster = false;       // no [domain]: the grid is the reference raster's

  std::size_t size() const { return static_cast<std::size_t>(mesh ? mesh->cells() : grid->cells()); }
  double x(std::size_t k) const {
    return mesh ? mesh->cell_x[k] : grid->x_center(static_cast<index_t>(k) % grid->nx);
  }
  double y(std::size_t k) const {
    return mesh ? mesh->cell_y[k] : grid->y_center(static_cast<index_t>(k) / grid->nx);
  }
};

struct ParserSlot {
  double x = 0;
  double y = 0;
  mu::Parser parser;
};

std::unique_ptr<ParserSlot> make_parser(const std::string& expr) {
  // muParser reads a lone = as an assignment to x or y, which a field never
  // means (x = 5 ? 2 : 0.5 would set every cell to 2): refused, == compares.
  for (std::size_t k = 0; k < expr.size(); ++k) {
    if (expr[k] != '=') continue;
    if (k + 1 < expr.size() && expr[k + 1] == '=') {
      ++k;
      continue;
    }
    if (k > 0 && (expr[k - 1] == '<' || expr[k - 1] == '>' || expr[k - 1] == '!')) continue;
    throw mu::ParserError("'=' at position " + std::to_string(k + 1) +
                          " would assign to a variable; write == to compare");
  }
  auto s = std::make_unique<ParserSlot>();
  s->parser.DefineConst("pi", std::numbers::pi);
  s->parser.DefineConst("e", std::numbers::e);
  s->parser.DefineVar("x", &s->x);
  s->parser.DefineVar("y", &s->y);
  s->parser.SetExpr(expr);
  return s;
}

// The discharge per unit width (m^2/s) of critical flow (Froude number 1) at
// speed u: u^3 / g.
double critical_discharge(double u, double g) { return u * u * u / g; }

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
      check_inflow(p.mesh_boundary[g], nullptr, mesh->boundary_names[g]);
  } else {
    const char* sides[4] = {"west", "east", "south", "north"};
    for (std::size_t s = 0; s < 4; ++s) check_inflow(p.boundary[s], &p.forcing.boundary[s], sides[s]);
  }
}

std::vector<double> eval_expression(const Reader& rd, const FieldSpec& f, const CellCentres& at) {
  const std::size_t n = at.size();
  std::vector<double> out(n);
  const int threads = n >= 16384 ? std::max(1, omp_get_max_threads()) : 1;
  std::vector<std::unique_ptr<ParserSlot>> slots;
  try {
    // Parsers are built here, one per thread (muParser binds variables by
    // address); the first evaluation reports syntax errors.
    for (int t = 0; t < threads; ++t) slots.push_back(make_parser(f.expression));
    slots[0]->x = at.x(0);
    slots[0]->y = at.y(0);
    slots[0]->parser.Eval();
    if (slots[0]->parser.GetNumResults() != 1)
      rd.fail_at(f.key, "expression \"" + clip(f.expression) + "\" must give one value, not a list");
  } catch (const mu::Parser::exception_type& e) {
    rd.fail_at(f.key, "in expression \"" + clip(f.expression) + "\": " + e.GetMsg());
  }

  // 3-point Gauss-Legendre rule on [-1/2, 1/2] (exact to degree 5), or the centre alone.
  static constexpr double gauss_x[3] = {-0.3872983346207417, 0.0, 0.3872983346207417};
  static constexpr double gauss_w[3] = {5.0 / 18.0, 8.0 / 18.0, 5.0 / 18.0};
  const bool averages = at.averages && at.grid;
  const double dx = averages ? at.grid->dx : 0, dy = averages ? at.grid->dy : 0;

  bool failed = false;
  std::string error;
#pragma omp parallel num_threads(threads)
  {
    ParserSlot& s = *slots[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
    for (std::size_t k = 0; k < n; ++k) {
      const double xc = at.x(k), yc = at.y(k);
      double v = std::numeric_limits<double>::quiet_NaN();
      try {
        if (averages) {
          v = 0;
          for (int b = 0; b < 3; ++b) {
            s.y = yc + gauss_x[b] * dy;
            double row = 0;
            for (int a = 0; a < 3; ++a) {
              s.x = xc + gauss_x[a] * dx;
              row += gauss_w[a] * s.parser.Eval();
            }
            v += gauss_w[b] * row;
          }
        } else {
          s.x = xc;
          s.y = yc;
          v = s.parser.Eval();
        }
      } catch (const mu::Parser::exception_type& e) {
#pragma omp critical(shallows_case_eval)
        {
          if (!failed) error = e.GetMsg();
          failed = true;
        }
      }
      out[k] = v;
    }
  }
  if (failed) rd.fail_at(f.key, "in expression \"" + clip(f.expression) + "\": " + error);
  return out;
}

// A raster onto the grid: as it is where it has the grid's cells; else
// resampled, where it covers the grid at another resolution.
std::vector<double> raster_on_grid(const Reader& rd, const FieldSpec& f, Raster&& r, const CellCentres& at) {
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
std::vector<double> raster_on_mesh(const Reader& rd, const FieldSpec& f, const Raster& r, const UnstructuredMesh& m) {
  try {
    return sample_raster(r, m.cell_x, m.cell_y);
  } catch (const InputError& e) {
    rd.fail_at(f.key, e.what());
  }
}

std::vector<double> evaluate(const Reader& rd, const FieldSpec& f, const CellCentres& at,
                             std::optional<Raster>&& raster = std::nullopt) {
  switch (f.kind) {
    case FieldSpec::Kind::constant:
      return std::vector<double>(at.size(), f.value);
    case FieldSpec::Kind::expression:
      return eval_expression(rd, f, at);
    case FieldSpec::Kind::raster:
    default: {
      Raster r = raster ? std::move(*raster) : read_field_raster(rd, f, *at.rasters);
      if (at.mesh) return raster_on_mesh(rd, f, r, *at.mesh);
      return raster_on_grid(rd, f, std::move(r), at);
    }
  }
}

// First active cell (z not NaN) where v is not finite -> error.
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

// ---------------------------------------------------------------- sections

Grid read_domain(const Reader& rd, const toml::table& d) {
  rd.check_keys(d, "domain", find_section("domain")->keys);
  Grid g;
  const auto count = [&](std::string_view key) {
    const auto v = rd.integer(d, "domain", key);
    if (!v) rd.fail_at(dotted("domain", key), "missing (number of cells, an integer > 0)");
    if (*v <= 0) rd.fail_at(dotted("domain", key), "must be > 0, found " + std::to_string(*v));
    if (*v > (std::int64_t(1) << 24)) rd.fail_at(dotted("domain", key), "too large: " + std::to_string(*v));
    return static_cast<index_t>(*v);
  };
  const auto range = [&](std::string_view key) {
    const std::string full = dotted("domain", key);
    const toml::node* n = d.get(key);
    if (!n) rd.fail_at(full, "missing ([min, max] in metres)");
    const toml::array* a = n->as_array();
    if (!a || a->size() != 2) rd.fail_type(full, "an array [min, max] of two numbers", *n);
    const double lo = rd.number(*a->get(0), full + "[0]");
    const double hi = rd.number(*a->get(1), full + "[1]");
    if (!(hi > lo)) rd.fail_at(full, "max must be greater than min, found [" + num(lo) + ", " + num(hi) + "]");
    return std::pair{lo, hi};
  };
  g.nx = count("nx");
  g.ny = count("ny");
  if (g.nx * g.ny > (index_t(1) << 32)) rd.fail_at("domain", "too many cells (nx * ny > 2^32)");
  const auto [x0, x1] = range("x");
  const auto [y0, y1] = range("y");
  g.x0 = x0;
  g.y0 = y0;
  g.dx = (x1 - x0) / static_cast<double>(g.nx);
  g.dy = (y1 - y0) / static_cast<double>(g.ny);
  return g;
}

// A CSV time series named at key, relative to the case folder. The run may
// not outlast a series of more than one row (its last value would hold on
// unseen); `negative`: why a negative value is refused, or none where it is allowed.
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

// Concentrations beyond any solute's, whose h c would overflow in float.
constexpr double kMaxConcentration = 1e20;

// concentration = { salt = 35.0 } in table t (key `at`): the concentration of
// the water it brings, per scalar of Problem::scalars (0 for those it does not name).
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

// series: where a grid side's discharge or eta may be a CSV time series
// (nullptr on a mesh); the condition's value is then the series' first.
BoundaryCondition<double> read_boundary(const Reader& rd, const toml::table& b, std::string_view side,
                                        const fs::path& base_dir, TimeSeries* series) {
  BoundaryCondition<double> bc;
  const std::string key = dotted("boundary", side);
  const toml::node* n = b.get(side);
  if (!n) return bc;
  const auto kind_of = [&](const std::string& name, const std::string& at) {
    if (name == "wall") return BoundaryKind::wall;
    if (name == "open") return BoundaryKind::open;
    if (name == "inflow") return BoundaryKind::inflow;
    if (name == "level") return BoundaryKind::level;
    std::string msg = "unknown boundary type '" + clip(name) + "' (valid: wall, open, inflow, level)";
    if (auto best = closest(name, {"wall", "open", "inflow", "level"}))
      msg = "unknown boundary type '" + clip(name) + "' (did you mean '" + std::string(*best) +
            "'? valid: wall, open, inflow, level)";
    rd.fail_at(at, msg);
  };
  if (n->is_string()) {
    bc.kind = kind_of(*n->value<std::string>(), key);
    if (bc.kind == BoundaryKind::inflow)
      rd.fail_at(key, "an inflow boundary needs its discharge: { type = \"inflow\", discharge = q }");
    if (bc.kind == BoundaryKind::level)
      rd.fail_at(key, "a level boundary needs its surface elevation: { type = \"level\", eta = v }");
    return bc;
  }
  if (!n->is_table())
    rd.fail_type(key, "\"wall\", \"open\" or a table { type = ..., ... }", *n);
  const toml::table& t = *n->as_table();
  rd.check_keys(t, key, {"type", "discharge", "eta", "concentration"});
  const auto type = rd.string(t, key, "type");
  if (!type) rd.fail_at(key, "missing 'type' (wall, open, inflow or level)");
  bc.kind = kind_of(*type, key + ".type");
  // The values themselves are read in parse_case, once the scalars are known (read_concentrations).
  if (t.contains("concentration")) {
    if (bc.kind == BoundaryKind::wall || bc.kind == BoundaryKind::open)
      rd.fail_at(key + ".concentration", "only used by types \"inflow\" and \"level\" (water that enters through "
                                         "the side), not \"" + *type + "\" (an open side lets out the water inside)");
  }
  // A CSV file instead of a number: the value over time.
  const auto value_of = [&](const char* name, const std::string& what) -> std::optional<double> {
    const toml::node* v = t.get(name);
    if (!v || !v->is_string()) return rd.number(t, key, name);
    if (!series) rd.fail_at(key + "." + name, "a time series on a mesh boundary group is not supported yet; give a number");
    *series = series_file(rd, key + "." + name, *v, base_dir, 1.0, what, -1.0, std::nullopt);
    return series->v.front();
  };
  const bool is_inflow = bc.kind == BoundaryKind::inflow, is_level = bc.kind == BoundaryKind::level;
  const auto discharge = is_inflow ? value_of("discharge", "discharge (m^2/s)") : rd.number(t, key, "discharge");
  const auto eta = is_level ? value_of("eta", "surface elevation (m)") : rd.number(t, key, "eta");
  if (bc.kind == BoundaryKind::inflow) {
    if (!discharge) rd.fail_at(key, "type \"inflow\" needs 'discharge' (m^2/s, into the domain)");
    bc.value = *discharge;
  } else if (discharge) {
    rd.fail_at(key + ".discharge", "only used by type \"inflow\", not \"" + *type + "\"");
  }
  if (bc.kind == BoundaryKind::level) {
    if (!eta) rd.fail_at(key, "type \"level\" needs 'eta' (free-surface elevation, m)");
    bc.value = *eta;
  } else if (eta) {
    rd.fail_at(key + ".eta", "only used by type \"level\", not \"" + *type + "\"");
  }
  return bc;
}

std::vector<double> read_output_times(const Reader& rd, const toml::node& n, double t_end) {
  const std::string key = "time.output_times";
  const toml::array* a = n.as_array();
  if (!a) rd.fail_type(key, "an array of numbers", n);
  std::vector<double> times;
  for (std::size_t k = 0; k < a->size(); ++k) {
    const std::string at = key + "[" + std::to_string(k) + "]";
    const double t = rd.number(*a->get(k), at);
    if (!(t > 0) || t > t_end)
      rd.fail_at(at, "must be in (0, time.end = " + num(t_end) + "], found " + num(t));
    if (!times.empty() && !(t > times.back()))
      rd.fail_at(at, "times must be increasing, found " + num(t) + " after " + num(times.back()));
    times.push_back(t);
  }
  if (times.empty() || times.back() < t_end * (1 - 1e-12))
    times.push_back(t_end);
  else
    times.back() = t_end;
  return times;
}

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

OutputSettings read_output(const Reader& rd, const toml::table* o, const Extent& g, Precision run_precision) {
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
      gauge.name = rd.string(*t, at, "name").value_or("g" + std::to_string(k + 1));
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

const std::string parallel_on_mesh =
    "the MPI process grid and halo ([parallel]) apply to Cartesian grids only; this case runs on a mesh ([mesh]), "
    "which runs on one rank";

// [parallel]: each value an integer >= 1, bounded as the command line's --ranks-x, --ranks-y, --halo-steps.
ParallelSettings read_parallel(const Reader& rd, const toml::table& t) {
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

// [mesh]: the mesh file read, built and renumbered.
std::shared_ptr<UnstructuredMesh> read_mesh(const Reader& rd, const toml::table& m, const fs::path& base_dir,
                                            std::vector<std::string>& notes) {
  rd.check_keys(m, "mesh", find_section("mesh")->keys);
  const auto file = rd.string(m, "mesh", "file");
  if (!file) rd.fail_at("mesh.file", "missing (a Gmsh .msh file, format 2.2 or 4.1)");
  if (file->empty()) rd.fail_at("mesh.file", "empty file name");
  const fs::path path = fs::path(*file).is_absolute() ? fs::path(*file) : base_dir / *file;
  CellOrdering ordering = CellOrdering::rcm;
  if (auto o = rd.string(m, "mesh", "ordering")) {
    static const Keys valid{"rcm", "morton", "file", "random"};
    if (*o == "rcm") ordering = CellOrdering::rcm;
    else if (*o == "morton") ordering = CellOrdering::morton;
    else if (*o == "file") ordering = CellOrdering::file;
    else if (*o == "random") ordering = CellOrdering::random;
    else rd.fail_at("mesh.ordering", "unknown ordering '" + clip(*o) + "' (valid: " + join(valid) + ")");
  }
  std::uint64_t seed = 1;
  if (auto v = rd.integer(m, "mesh", "seed")) {
    if (*v < 0) rd.fail_at("mesh.seed", "must be >= 0, found " + std::to_string(*v));
    seed = static_cast<std::uint64_t>(*v);
  }
  UnstructuredMesh mesh;
  try {
    mesh = build_mesh(read_gmsh(path), path.string());
  } catch (const InputError& e) {
    rd.fail_at("mesh.file", e.what());
  }
  const index_t pieces = connected_components(mesh);
  if (pieces > 1)
    notes.push_back(path.string() + ": the mesh has " + std::to_string(pieces) +
                    " pieces not connected to each other (each runs on its own)");
  return std::make_shared<UnstructuredMesh>(apply_ordering(mesh, ordering, seed));
}

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

// ---------------------------------------------------------------- forcing

constexpr double m_per_mm = 1e-3;
constexpr double mps_per_mmph = 1.0 / 3.6e6;  // mm/h -> m/s

std::string allowed_range(double upper) { return std::isinf(upper) ? ">= 0" : "in [0, " + num(upper) + "]"; }

// A forcing parameter given as a field: finite and in [0, upper] in every
// active cell, times scale; 0 in inactive cells, which no forcing reaches.
std::vector<double> forcing_field(const Reader& rd, const FieldSpec& f, const CellCentres& at,
                                  const std::vector<double>& z, double scale, const std::string& unit,
                                  double upper = std::numeric_limits<double>::infinity()) {
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

// The same, where a number gives one value for every cell (executors read a
// parameter of size 1 as uniform).
std::vector<double> forcing_parameter(const Reader& rd, const FieldSpec& f, const CellCentres& at,
                                      const std::vector<double>& z, double scale, const std::string& unit,
                                      double upper = std::numeric_limits<double>::infinity()) {
  if (f.kind != FieldSpec::Kind::constant) return forcing_field(rd, f, at, z, scale, unit, upper);
  if (!(f.value >= 0 && f.value <= upper))
    rd.fail_at(f.key, "must be " + allowed_range(upper) + " (" + unit + "), found " + num(f.value));
  return {f.value * scale};
}


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

// A volume source whose discharge (a constant, or each value of its series)
// could not leave its cells even as critical flow at max_speed through their
// whole perimeter is an input error, named by `key`: 1e300 m^3/s would
// otherwise make the run non-finite a step later, naming no source.
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

// [[source]]: points that bring water in (or take it out: a negative
// discharge) in the cell that holds them (a grid cell, or the mesh cell).
void read_sources(const Reader& rd, const toml::node& n, const fs::path& base_dir, const CellCentres& where,
                  double max_speed, Problem& p) {
  const toml::array* a = n.as_array();
  if (!a) rd.fail_type("source", "an array of tables [[source]] with x, y and discharge", n);
  const Grid& g = p.grid;
  std::vector<std::string> names;
  for (std::size_t k = 0; k < a->size(); ++k) {
    const std::string at = "source[" + std::to_string(k) + "]";
    const toml::table* t = a->get(k)->as_table();
    if (!t) rd.fail_type(at, "a table { name = \"...\", x = .., y = .., discharge = .. }", *a->get(k));
    rd.check_keys(*t, at, {"name", "x", "y", "discharge", "concentration"});
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
    const std::string point = s.name + " at (" + num(*x) + ", " + num(*y) + ")";
    index_t c = -1;
    if (const UnstructuredMesh* m = where.mesh) {
      c = cells_holding(*m, {*x}, {*y})[0];
      if (c < 0) {
        const Box b = mesh_box(*m);
        rd.fail_at(at, point + " is outside the mesh " + m->source + " (in no cell; bounding box [" + num(b.x0) +
                           ", " + num(b.x1) + "] x [" + num(b.y0) + ", " + num(b.y1) + "])");
      }
      if (std::isnan(p.z[static_cast<std::size_t>(c)]))
        rd.fail_at(at, point + " lies in the inactive element " + std::to_string(m->cell_tag[static_cast<std::size_t>(c)]) +
                           " (bathymetry.z is NODATA there)");
    } else {
      c = cell_at(g, *x, *y);
      if (c < 0)
        rd.fail_at(at, point + " is outside the domain [" + num(g.x0) + ", " + num(g.x1()) + "] x [" + num(g.y0) +
                           ", " + num(g.y1()) + "]");
      if (std::isnan(p.z[static_cast<std::size_t>(c)]))
        rd.fail_at(at, point + " lies in the inactive cell " + cell_ij(g, c) + " (bathymetry.z is NODATA there)");
    }
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
    check_source_discharge(rd, at + ".discharge", s, p, where.mesh, max_speed);
    add_source_concentrations(rd, *t, at, p);
    p.forcing.sources.push_back(std::move(s));
  }
}

const char* kind_name(BoundaryKind k) {
  switch (k) {
    case BoundaryKind::wall: return "wall";
    case BoundaryKind::open: return "open";
    case BoundaryKind::inflow: return "inflow";
    case BoundaryKind::level: return "level";
  }
  return "?";
}

// [[boundary.segment]]: a condition on the cells of a side's first column
// or row whose centres lie in [from, to]. An inflow hydrograph along a
// stretch of a walled side is brought in as a volume source over the active
// ones (Forcing::sources); a level, open or wall stretch is a condition of
// its own for their ghost cells (Problem::segments).
void read_segments(const Reader& rd, const toml::node& n, const fs::path& base_dir, double max_speed, Problem& p) {
  const toml::array* a = n.as_array();
  if (!a) rd.fail_type("boundary.segment", "an array of tables [[boundary.segment]] with side, from, to, type", n);
  const Grid& g = p.grid;
  struct Placed {
    Side side;
    index_t begin, end;  // cells along the side
    std::string key, name;
  };
  std::vector<Placed> placed;
  for (std::size_t k = 0; k < a->size(); ++k) {
    const std::string at = "boundary.segment[" + std::to_string(k) + "]";
    const toml::table* t = a->get(k)->as_table();
    if (!t)
      rd.fail_type(at, "a table { side = .., from = .., to = .., type = \"inflow\", hydrograph = .. }", *a->get(k));
    rd.check_keys(*t, at, {"side", "from", "to", "type", "hydrograph", "discharge", "eta", "concentration"});
    const auto side_str = rd.string(*t, at, "side");
    if (!side_str) rd.fail_at(at + ".side", "missing (west, east, south or north)");
    Side side{};
    if (*side_str == "west") side = Side::west;
    else if (*side_str == "east") side = Side::east;
    else if (*side_str == "south") side = Side::south;
    else if (*side_str == "north") side = Side::north;
    else rd.fail_at(at + ".side", "unknown side '" + clip(*side_str) + "' (valid: west, east, south, north)");
    const auto type = rd.string(*t, at, "type");
    if (!type) rd.fail_at(at + ".type", "missing (inflow, level, open or wall)");
    const Keys types{"inflow", "level", "open", "wall"};
    if (std::find(types.begin(), types.end(), *type) == types.end()) {
      std::string msg = "unknown segment type '" + clip(*type) + "' (";
      if (auto best = closest(*type, types)) msg += "did you mean '" + std::string(*best) + "'? ";
      rd.fail_at(at + ".type", msg + "valid: inflow, level, open, wall)");
    }
    const bool along_y = side == Side::west || side == Side::east;
    const char* coord = along_y ? "y" : "x";
    const auto from = rd.number(*t, at, "from");
    const auto to = rd.number(*t, at, "to");
    if (!from || !to)
      rd.fail_at(at, std::string("needs from and to (") + coord + " along the " + *side_str + " side, m)");
    if (!(*from < *to)) rd.fail_at(at, "from must be less than to, found from = " + num(*from) + ", to = " + num(*to));
    const std::string name = "segment " + *side_str + " " + num(*from) + "-" + num(*to);
    // The side's cells whose centres lie in [from, to]: m = begin .. end - 1 along it.
    const index_t count = along_y ? g.ny : g.nx;
    index_t begin = count, end = 0;
    for (index_t m = 0; m < count; ++m) {
      const double centre = along_y ? g.y_center(m) : g.x_center(m);
      if (centre < *from || centre > *to) continue;
      begin = std::min(begin, m);
      end = m + 1;
    }
    if (begin >= end) {
      const double first = along_y ? g.y_center(0) : g.x_center(0);
      const double step = along_y ? g.dy : g.dx;
      rd.fail_at(at, name + ": no cell of the " + *side_str + " side has its centre in " + coord + " = [" +
                         num(*from) + ", " + num(*to) + "] (centres at " + coord + " = " + num(first) + " + " +
                         num(step) + " k, k = 0.." + std::to_string(count - 1) + ")");
    }
    for (const Placed& o : placed) {
      if (o.side == side && begin < o.end && o.begin < end)
        rd.fail_at(at, name + " overlaps " + o.name + " (" + o.key + ")");
    }
    placed.push_back({side, begin, end, at, name});
    if (*type != "inflow") {
      BoundarySegment sg;
      sg.name = name;
      sg.where = {side, begin, end, {BoundaryKind::wall, 0.0}};
      for (const char* key : {"hydrograph", "discharge"})
        if (t->contains(key)) rd.fail_at(at + "." + key, "only used by type \"inflow\", not \"" + *type + "\"");
      if (*type == "level") {
        sg.where.bc.kind = BoundaryKind::level;
        const toml::node* eta = t->get("eta");
        if (!eta)
          rd.fail_at(at, "a level segment needs eta (free-surface elevation, m: a number or a CSV time series)");
        if (eta->is_string()) {
          sg.value = series_file(rd, at + ".eta", *eta, base_dir, 1.0, "surface elevation (m)", p.t_end, std::nullopt);
          sg.where.bc.value = sg.value.v.front();
        } else {
          sg.where.bc.value = rd.number(*eta, at + ".eta");
          if (!std::isfinite(sg.where.bc.value))
            rd.fail_at(at + ".eta", "must be finite, found " + num(sg.where.bc.value));
        }
      } else {
        sg.where.bc.kind = *type == "open" ? BoundaryKind::open : BoundaryKind::wall;
        if (t->contains("eta")) rd.fail_at(at + ".eta", "only used by type \"level\", not \"" + *type + "\"");
      }
      if (t->contains("concentration") && *type != "level")
        rd.fail_at(at + ".concentration",
                   "only used by types \"inflow\" and \"level\" (water that enters), not \"" + *type + "\"");
      const std::vector<double> c = read_concentrations(rd, *t, at, p.scalars);
      for (std::size_t q = 0; q < c.size(); ++q) p.scalars[q].segments.push_back(c[q]);
      p.segments.push_back(std::move(sg));
      continue;
    }
    if (t->contains("eta")) rd.fail_at(at + ".eta", "only used by type \"level\", not \"inflow\"");
    const BoundaryKind kind = p.bc(side).kind;
    if (kind != BoundaryKind::wall)
      rd.fail_at(at, "an inflow segment brings its water in as a source along a walled side; make the side a wall "
                     "(boundary." + *side_str + " is \"" + kind_name(kind) + "\")");

    VolumeSource s;
    s.name = name;
    const toml::node* hydrograph = t->get("hydrograph");
    const auto discharge = rd.number(*t, at, "discharge");
    if (hydrograph && discharge) rd.fail_at(at, "give either hydrograph (a CSV file) or discharge (m^3/s), not both");
    if (!hydrograph && !discharge)
      rd.fail_at(at, "an inflow segment needs hydrograph = \"q.csv\" or discharge = Q (total m^3/s into the domain)");
    if (discharge) {
      if (*discharge < 0)
        rd.fail_at(at + ".discharge", "must be >= 0 (m^3/s into the domain), found " + num(*discharge) +
                                          " (a [[source]] with a negative discharge takes water out)");
      s.discharge = TimeSeries::constant(*discharge);
    } else {
      s.discharge = series_file(rd, at + ".hydrograph", *hydrograph, base_dir, 1.0, "discharge (m^3/s)", p.t_end,
                                "an inflow segment only brings water in; a [[source]] with a negative discharge "
                                "takes it out");
    }

    // The side's first column (west, east) or row (south, north): its active cells.
    for (index_t m = begin; m < end; ++m) {
      index_t c = 0;
      switch (side) {
        case Side::west: c = m * g.nx; break;
        case Side::east: c = m * g.nx + g.nx - 1; break;
        case Side::south: c = m; break;
        case Side::north: c = (g.ny - 1) * g.nx + m; break;
      }
      if (!std::isnan(p.z[static_cast<std::size_t>(c)])) s.cells.push_back(c);
    }
    if (s.cells.empty()) rd.fail_at(at, name + ": every cell of the " + *side_str + " side in it is inactive");
    check_source_discharge(rd, at + (hydrograph ? ".hydrograph" : ".discharge"), s, p, nullptr, max_speed);
    add_source_concentrations(rd, *t, at, p);
    p.forcing.sources.push_back(std::move(s));
  }
}

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

// [[scalar]]: passive scalars, into p.scalars with their
// initial concentration; returns their output variables. Read before the
// boundaries and the forcing, whose concentrations name them.
std::vector<ScalarOutput> read_scalars(const Reader& rd, const toml::node& n, const fs::path& base_dir,
                                       const CellCentres& at, Problem& p) {
  const toml::array* a = n.as_array();
  if (!a) rd.fail_type("scalar", "an array of tables [[scalar]] with name and initial", n);
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

const std::string segments_on_mesh =
    "boundary segments run on Cartesian grids; on a mesh, give the stretch a physical line group of its own in the "
    "mesh file and its condition under [boundary] (this case runs on a mesh, [mesh])";

// The forcing sections of a case, after [time] (a series must last the run)
// and [physics] (max_speed bounds a source's discharge).
void read_forcing(const Reader& rd, const toml::table& root, const fs::path& base_dir, const CellCentres& at,
                  double max_speed, Problem& p) {
  if (const toml::table* r = rd.table(root, "", "rain")) {
    read_rain(rd, *r, base_dir, at, p);
    const std::vector<double> c = read_concentrations(rd, *r, "rain", p.scalars);
    for (std::size_t k = 0; k < c.size(); ++k) p.scalars[k].rain = c[k];
  }
  if (const toml::table* i = rd.table(root, "", "infiltration")) read_infiltration(rd, *i, base_dir, at, p);
  if (const toml::node* s = root.get("source")) read_sources(rd, *s, base_dir, at, max_speed, p);
  if (at.mesh) return;  // segments: refused with the mesh's boundaries
  if (const toml::table* b = rd.table(root, "", "boundary"))
    if (const toml::node* s = b->get("segment")) read_segments(rd, *s, base_dir, max_speed, p);
}

std::string default_name(const std::string& source) {
  if (source.empty() || source.front() == '<') return "default";
  const std::string stem = fs::path(source).stem().string();
  return stem.empty() ? "default" : stem;
}

// An inflow side or group gives its ghost cells the depth inside, so it brings
// no water into cells that are dry: a note where every cell it feeds starts dry.
void note_dry_inflows(const Problem& p, std::vector<std::string>& notes) {
  // Grids: an inflow segment; meshes (no segments): a source. Both are volume sources, which fill dry cells too.
  const std::string instead = p.mesh ? "bring the discharge with a [[source]] at the inlet"
                                     : "give the stretch as a [[boundary.segment]] of type \"inflow\"";
  const auto note = [&](const std::string& key) {
    notes.push_back(key + ": an inflow boundary brings water only into wet cells (its ghost cells take the depth "
                            "inside), and every cell along it is dry at t = 0, so no water will enter there; for a "
                            "river entering a dry channel " + instead + " (a discharge in m^3/s that also fills dry "
                            "cells)");
  };
  const auto dry = [&](std::size_t k) { return !(p.h[k] > p.physics.h_dry); };
  if (p.mesh) {
    const UnstructuredMesh& m = *p.mesh;
    for (std::size_t g = 1; g < p.mesh_boundary.size(); ++g) {
      if (p.mesh_boundary[g].kind != BoundaryKind::inflow) continue;
      bool all_dry = true, any = false;
      for (index_t e = 0; e < m.edges(); ++e) {
        if (m.edge_right[static_cast<std::size_t>(e)] != boundary_code(static_cast<int>(g))) continue;
        any = true;
        all_dry = all_dry && dry(static_cast<std::size_t>(m.edge_left[static_cast<std::size_t>(e)]));
      }
      if (any && all_dry) note("boundary." + m.boundary_names[g]);
    }
    return;
  }
  const Grid& grid = p.grid;
  const char* names[4] = {"west", "east", "south", "north"};
  const std::vector<SegmentCondition<double>> segments = segments_at<double>(p.segments, 0.0);
  for (int s = 0; s < 4; ++s) {
    if (p.boundary[static_cast<std::size_t>(s)].kind != BoundaryKind::inflow) continue;
    const auto side = static_cast<Side>(s);
    const bool x_side = side == Side::west || side == Side::east;
    const index_t n = x_side ? grid.ny : grid.nx;
    bool all_dry = true, any = false;
    for (index_t k = 0; k < n && all_dry; ++k) {
      // A segment's cells follow its own condition.
      if (segment_at(side, k, segments.data(), static_cast<int>(segments.size())) >= 0) continue;
      const index_t i = x_side ? (side == Side::west ? 0 : grid.nx - 1) : k;
      const index_t j = x_side ? k : (side == Side::south ? 0 : grid.ny - 1);
      any = true;
      all_dry = dry(static_cast<std::size_t>(j * grid.nx + i));
    }
    if (any && all_dry) note(std::string("boundary.") + names[s]);
  }
}

} // namespace

// ---------------------------------------------------------------- public

Case parse_case(std::string_view toml_text, const std::string& source_name, const fs::path& base_dir,
                const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw InputError(source_name + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
                     ": TOML syntax error: " + std::string(e.description()));
  }
  const Reader rd(source_name, apply_overrides(root, overrides));
  rd.check_keys(root, "", top_level_keys);

  Case c;
  c.source = source_name;
  c.text = std::string(toml_text);
  c.name = rd.string(root, "", "name").value_or(default_name(source_name));
  if (c.name.empty()) rd.fail_at("name", "empty name");
  Problem& p = c.problem;

  // The mesh, or the grid; bathymetry first, since a raster there may define the grid.
  const toml::table* mesh_table = rd.table(root, "", "mesh");
  const toml::table* domain_table = rd.table(root, "", "domain");
  if (mesh_table && domain_table)
    rd.fail("mesh", "give either [domain] (a Cartesian grid) or [mesh] (an unstructured mesh), not both");
  std::shared_ptr<UnstructuredMesh> mesh;
  if (mesh_table) mesh = read_mesh(rd, *mesh_table, base_dir, c.notes);

  const toml::table* bathy = rd.table(root, "", "bathymetry");
  std::optional<FieldSpec> z_spec;
  if (bathy) {
    rd.check_keys(*bathy, "bathymetry", find_section("bathymetry")->keys);
    z_spec = field_spec(rd, *bathy, "bathymetry", "z", base_dir);
  }
  // z = "mesh": the node elevations of the mesh file.
  const bool z_from_mesh =
      z_spec && z_spec->kind == FieldSpec::Kind::expression && trim(z_spec->expression) == "mesh";
  if (z_from_mesh && !mesh)
    rd.fail_at("bathymetry.z", "\"mesh\" (node elevations of the mesh file) needs a [mesh] section");
  RasterReference rasters;
  std::optional<Raster> z_raster;
  if (z_spec && z_spec->kind == FieldSpec::Kind::raster) z_raster = read_field_raster(rd, *z_spec, rasters);

  if (!mesh) {
    if (domain_table) {
      p.grid = read_domain(rd, *domain_table);
    } else if (z_raster) {
      p.grid = z_raster->grid();
    } else {
      rd.fail("domain", "missing section [domain] (nx, ny, x, y) or [mesh] (file); [domain] may be left out only "
                        "when bathymetry.z = { file = \"...\" } gives the grid");
    }
    // Coordinates far beyond any map (the Earth is 4e7 m round) lose the cell
    // size to rounding or overflow to infinity: refused, naming their source.
    const Grid& g = p.grid;
    constexpr double kFar = 1e12;  // m
    for (const double v : {g.x0, g.y0, g.x1(), g.y1(), g.dx, g.dy}) {
      if (std::isfinite(v) && std::abs(v) <= kFar) continue;
      const std::string where = domain_table ? std::string("domain") : std::string("bathymetry.z");
      rd.fail_at(where, "the grid spans x = [" + num(g.x0) + ", " + num(g.x1()) + "], y = [" + num(g.y0) + ", " +
                            num(g.y1()) + "] m with cells of " + num(g.dx) + " x " + num(g.dy) +
                            " m: coordinates and cell sizes must stay within +-1e12 m");
    }
  }
  // Numerics.
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

  // Third order on a grid: expressions give cell averages (see CellCentres).
  const CellCentres at{mesh ? nullptr : &p.grid, mesh.get(), p.scheme == Scheme::roe3, &rasters,
                       !mesh && !domain_table};
  const auto n = at.size();

  if (z_from_mesh) {
    p.z = node_bed(*mesh);
    check_finite(rd, z_spec->key, p.z, std::vector<double>(n, 0.0), at, &*z_spec);
  } else if (z_spec) {
    p.z = evaluate(rd, *z_spec, at, std::move(z_raster));
    z_raster.reset();
    if (z_spec->kind != FieldSpec::Kind::raster) {
      const std::vector<double> all_active(n, 0.0);
      check_finite(rd, z_spec->key, p.z, all_active, at, &*z_spec);
    } else {
      // NaN = NODATA = inactive; a raster holds no infinities.
      if (std::all_of(p.z.begin(), p.z.end(), [](double v) { return std::isnan(v); }))
        rd.fail_at("bathymetry.z", "every cell is NODATA: no active cell");
    }
  } else {
    p.z.assign(n, 0.0);
  }

  // Initial state.
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

  // Passive scalars, before the boundaries and the forcing, whose concentrations name them.
  std::vector<ScalarOutput> scalar_outputs;
  if (const toml::node* sn = root.get("scalar")) scalar_outputs = read_scalars(rd, *sn, base_dir, at, p);

  // Boundaries: the sides of a grid, or the physical line groups of a mesh by name.
  if (mesh) {
    if (std::all_of(p.z.begin(), p.z.end(), [](double v) { return std::isnan(v); }))
      rd.fail_at("bathymetry.z", "every cell is NODATA: no active cell");
    *mesh = deactivate_cells(*mesh, p.z);
    p.mesh_boundary.assign(mesh->boundary_names.size(), BoundaryCondition<double>{});
    if (const toml::table* b = rd.table(root, "", "boundary")) {
      for (auto&& [k, v] : *b) {
        const std::string name(k.str());
        if (name == "segment" && v.is_array()) rd.fail_at("boundary.segment", segments_on_mesh);
        const int group = mesh->find_boundary(name);
        if (group < 0) {
          std::string groups;
          for (std::size_t q = 1; q < mesh->boundary_names.size(); ++q)
            groups += (groups.empty() ? "" : ", ") + mesh->boundary_names[q];
          rd.fail_at(dotted("boundary", name), "the mesh " + mesh->source + " has no physical line group '" +
                                                   clip(name) + "' (its groups: " +
                                                   (groups.empty() ? "none" : groups) + ")");
        }
        p.mesh_boundary[static_cast<std::size_t>(group)] = read_boundary(rd, *b, name, base_dir, nullptr);
        if (!v.is_table()) continue;
        const std::vector<double> given = read_concentrations(rd, *v.as_table(), dotted("boundary", name), p.scalars);
        for (std::size_t q = 0; q < given.size(); ++q) {
          std::vector<double>& groups = p.scalars[q].groups;
          groups.resize(mesh->boundary_names.size(), 0.0);
          groups[static_cast<std::size_t>(group)] = given[q];
        }
      }
    }
    p.mesh = mesh;
  } else if (const toml::table* b = rd.table(root, "", "boundary")) {
    rd.check_keys(*b, "boundary", find_section("boundary")->keys);
    const char* sides[4] = {"west", "east", "south", "north"};
    for (std::size_t s = 0; s < 4; ++s) {
      p.boundary[s] = read_boundary(rd, *b, sides[s], base_dir, &p.forcing.boundary[s]);
      const toml::node* side = b->get(sides[s]);
      if (!side || !side->is_table()) continue;
      const std::vector<double> given =
          read_concentrations(rd, *side->as_table(), dotted("boundary", sides[s]), p.scalars);
      for (std::size_t k = 0; k < given.size(); ++k) p.scalars[k].side[s] = given[k];
    }
  }

  // Physics.
  double max_speed = 100.0;
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
        // The map's friction is applied by the forcing after each step, the scheme's own by none.
        p.forcing.manning = forcing_field(rd, *f, at, p.z, 1.0, "s/m^(1/3)");
        p.physics.n_manning = 0;
      }
    }
    if (auto v = rd.number(*ph, "physics", "dry_tolerance")) {
      if (!(*v >= 0)) rd.fail_at("physics.dry_tolerance", "must be >= 0 (m), found " + num(*v));
      p.physics.h_dry = *v;
    }
    if (auto v = rd.number(*ph, "physics", "max_speed")) {
      if (!(*v > 0)) rd.fail_at("physics.max_speed", "must be > 0 (m/s), found " + num(*v));
      max_speed = *v;
    }
  }
  // No discharge in a dry cell (h <= dry_tolerance), as every step leaves one: the Riemann solver sees none there,
  // and the sides' account, which takes a boundary cell's discharge, counted a film's as water that left.
  for (std::size_t k = 0; k < n; ++k)
    if (std::isnan(p.z[k]) || !(p.h[k] > p.physics.h_dry)) p.hu[k] = p.hv[k] = 0;
  check_speeds(rd, p, velocity_pair ? "u" : "hu", max_speed, at, mesh.get());

  // Time.
  const toml::table* tt = rd.table(root, "", "time");
  if (!tt) rd.fail("time", "missing section [time] (needs end)");
  rd.check_keys(*tt, "time", find_section("time")->keys);
  const auto end = rd.number(*tt, "time", "end");
  if (!end) rd.fail("time.end", "time.end: missing (end time of the run, s)");
  if (!(*end > 0)) rd.fail_at("time.end", "must be > 0 (s), found " + num(*end));
  p.t_end = *end;
  for (std::size_t s = 0; s < 4; ++s) {
    const TimeSeries& ts = p.forcing.boundary[s];
    const char* sides[4] = {"west", "east", "south", "north"};
    const std::string key = std::string("boundary.") + sides[s] + (p.boundary[s].kind == BoundaryKind::level ? ".eta" : ".discharge");
    if (ts.t.size() > 1 && ts.t.back() < p.t_end)
      rd.fail_at(key, "the run lasts until " + num(p.t_end) + " s but the series ends at " + num(ts.t.back()) + " s");
  }
  const auto every = rd.number(*tt, "time", "output_every");
  const toml::node* times = tt->get("output_times");
  if (every && times) rd.fail("time.output_times", "time: give either output_every or output_times, not both");
  if (every) {
    if (!(*every > 0)) rd.fail_at("time.output_every", "must be > 0 (s), found " + num(*every));
    if (p.t_end / *every > 1e6)
      rd.fail_at("time.output_every", "too small: " + num(p.t_end / *every) + " outputs (at most 1e6)");
    p.output_times = output_times_every(*every, p.t_end);
  } else if (times) {
    p.output_times = read_output_times(rd, *times, p.t_end);
  } else {
    p.output_times = {p.t_end};
  }

  if (mesh && p.scheme != Scheme::roe1)
    rd.fail_at("numerics.scheme", "unstructured meshes run the first-order scheme only (\"roe1\")");

  // Forcing beyond the boundaries.
  read_forcing(rd, root, base_dir, at, max_speed, p);

  if (const toml::table* pt = rd.table(root, "", "parallel")) {
    if (mesh) rd.fail_at("parallel", parallel_on_mesh);
    c.parallel = read_parallel(rd, *pt);
  }

  c.output = read_output(rd, rd.table(root, "", "output"), extent_of(p.grid, mesh.get()), p.precision);
  c.output.crs_wkt = rasters.crs_wkt;
  c.output.scalars = std::move(scalar_outputs);
  if (mesh && std::find(c.output.formats.begin(), c.output.formats.end(), "geotiff") != c.output.formats.end())
    rd.fail_at("output.format", "geotiff writes Cartesian grids only; this case runs on a mesh ([mesh])");
  note_dry_inflows(p, c.notes);
  return c;
}

Case load_case(const fs::path& file, const std::vector<std::string>& overrides) {
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
  return parse_case(ss.str(), source, base, overrides);
}

std::string_view default_case_toml() {
  static constexpr std::string_view text = R"toml(# shallows built-in case: a dam break onto a dry, gently rising floodplain
# with a round hill. The reservoir behind the dam line x = 8 m has its
# surface at 2 m; the dam is gone at t = 0, so the water floods east over
# dry ground, climbs the slope and splits around the hill.
# Every key is described in docs/case-file.md.

[domain]
nx = 200
ny = 100
x = [0.0, 40.0]   # m
y = [0.0, 20.0]   # m

[bathymetry]
# Bed rising 2 cm per metre towards +x, with a hill 1 m high at (24, 10).
z = "0.02 * x + exp(-((x - 24)^2 + (y - 10)^2) / 8)"

[initial]
# Water surface at 2 m behind the dam; downstream eta = 0 lies below the
# bed (z >= 0.16 m there), so those cells start dry.
eta = "x < 8 ? 2 : 0"

[boundary]
west = "wall"
south = "wall"
north = "wall"
east = "open"

[physics]
g = 9.81
manning = 0.02         # s/m^(1/3)
dry_tolerance = 1e-6   # m

[numerics]
scheme = "roe1"
cfl = 0.9
precision = "double"

[time]
end = 6.0             # s
output_every = 1.0    # s

[output]
dir = "output"
format = ["netcdf", "vtk", "png"]
arrival_threshold = 0.01   # m
gauges = [
  { name = "downstream", x = 14.0, y = 10.0 },
  { name = "behind_hill", x = 30.0, y = 10.0 },
]
)toml";
  return text;
}

} // namespace shallows::io
