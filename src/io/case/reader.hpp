// SPDX-License-Identifier: MIT
#pragma once
// What the case reader's files share. parse_case (case.cpp) reads the
// sections in order, each by a reader of its own file; build_problem
// (problem.cpp) then turns what was read into the model's terms. Every error
// goes through Reader, which names the file (or --set) and the key.
#include <toml++/toml.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/io/raster.hpp"
#include "shallows/io/time_series.hpp"
#include "shallows/mesh/unstructured/mesh.hpp"
#include "shallows/solver/capabilities.hpp"

namespace shallows::io::case_reader {

namespace fs = std::filesystem;
using Keys = std::vector<std::string_view>;

// ---------------------------------------------------------------- schema.cpp

struct Section {
  std::string_view name;
  Keys keys;
};

extern const Keys top_level_keys;
// The keys of a section of fixed keys ([domain], [physics], ...); null for others.
const Section* find_section(std::string_view name);
// The keys of an entry of an array of tables (its dotted path: "source", "boundary.segment"); null for others.
const Section* find_entry_keys(std::string_view array);
// Closest valid key, for "did you mean"; none when it shares nothing with key.
std::optional<std::string_view> closest(std::string_view key, const Keys& valid);
std::string join(const Keys& keys);

// ---------------------------------------------------------------- reader.cpp

std::string num(double v);  // %.10g
std::string clip(std::string_view s, std::size_t n = 60);
std::string describe(const toml::node& n);  // "integer 3", "string \"x\"", ...
std::string dotted(std::string_view prefix, std::string_view key);
std::string at_cell(double x, double y);
std::string trim(std::string_view s);

class Reader {
 public:
  // arrays: fields given as values per cell (parse_case); the reader marks those it takes.
  Reader(std::string source, std::set<std::string> overridden, const FieldArrays* arrays = nullptr)
      : source_(std::move(source)), overridden_(std::move(overridden)), arrays_(arrays) {}

  [[noreturn]] void fail(std::string_view key, const std::string& msg) const;
  // "<src>: <key>: <msg>"
  [[noreturn]] void fail_at(std::string_view key, const std::string& msg) const;
  [[noreturn]] void fail_type(std::string_view key, std::string_view expected, const toml::node& found) const;

  // Refuses a key of t not in valid, with the closest valid one.
  void check_keys(const toml::table& t, std::string_view prefix, const Keys& valid) const;

  // t's key, checked for its type; none where absent.
  const toml::table* table(const toml::table& t, std::string_view prefix, std::string_view key) const;
  std::optional<double> number(const toml::table& t, std::string_view prefix, std::string_view key) const;
  double number(const toml::node& n, const std::string& key) const;  // finite
  std::optional<std::int64_t> integer(const toml::table& t, std::string_view prefix, std::string_view key) const;
  std::optional<std::string> string(const toml::table& t, std::string_view prefix, std::string_view key) const;
  std::string string(const toml::node& n, const std::string& key) const;

  // The values given for a field key in parse_case's arrays (marked as taken), or null.
  const std::vector<double>* array(std::string_view key) const;
  // The keys of parse_case's arrays that no field reader took.
  std::vector<std::string> arrays_not_taken() const;

 private:
  // "--set" when the key's value came from an override, "array" when from
  // parse_case's arrays, else the file.
  std::string src(std::string_view key) const;
  bool is_array_key(std::string_view key) const { return arrays_ && arrays_->count(std::string(key)) > 0; }

  std::string source_;
  std::set<std::string> overridden_;
  const FieldArrays* arrays_;
  mutable std::set<std::string> arrays_taken_;
};

// ---------------------------------------------------------------- overrides.cpp

// Applies "a.b.c=value" overrides (--set); returns the dotted paths that were set.
std::set<std::string> apply_overrides(toml::table& root, const std::vector<std::string>& overrides);

// ---------------------------------------------------------------- fields.cpp

// A per-cell field as given: a number, an expression, a raster, or values per
// cell handed to parse_case (FieldArrays).
struct FieldSpec {
  enum class Kind { constant, expression, raster, array } kind = Kind::constant;
  Resample resample = Resample::average;  // a raster at another resolution than the grid
  double value = 0;
  std::string expression;
  fs::path file;  // resolved against the case folder
  const std::vector<double>* values = nullptr;  // Kind::array: one per cell, owned by parse_case's caller
  std::string key;
};

// `resample` in table t at key: how a raster is brought onto the grid.
Resample read_resample(const Reader& rd, const toml::table& t, const std::string& key);
std::optional<FieldSpec> field_spec(const Reader& rd, const toml::table& t, std::string_view prefix,
                                    std::string_view key, const fs::path& base_dir);

// The first raster a case reads (the DEM where there is one): every other
// raster must share its coordinate system, and, with no [domain], its grid.
struct RasterReference {
  bool set = false;
  fs::path file;
  std::string crs_wkt;
  Grid grid;
};

Raster read_field_raster(const Reader& rd, const FieldSpec& f, RasterReference& ref);

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

// Values of a field at cell centres (grid) or centroids (mesh), or the cell
// averages of an expression (at.averages); a raster's values are taken as
// they are, as the cells' averages. raster: the already-read raster, if any.
std::vector<double> evaluate(const Reader& rd, const FieldSpec& f, const CellCentres& at,
                             std::optional<Raster>&& raster = std::nullopt);

// First active cell (z not NaN) where v is not finite -> error.
void check_finite(const Reader& rd, const std::string& key, const std::vector<double>& v,
                  const std::vector<double>& z, const CellCentres& at, const FieldSpec* spec);

// A forcing parameter given as a field: finite and in [0, upper] in every
// active cell, times scale; 0 in inactive cells, which no forcing reaches.
std::vector<double> forcing_field(const Reader& rd, const FieldSpec& f, const CellCentres& at,
                                  const std::vector<double>& z, double scale, const std::string& unit,
                                  double upper = std::numeric_limits<double>::infinity());

// The same, where a number gives one value for every cell (executors read a
// parameter of size 1 as uniform).
std::vector<double> forcing_parameter(const Reader& rd, const FieldSpec& f, const CellCentres& at,
                                      const std::vector<double>& z, double scale, const std::string& unit,
                                      double upper = std::numeric_limits<double>::infinity());

// A CSV time series named at key, relative to the case folder. The run may
// not outlast a series of more than one row (its last value would hold on
// unseen); `negative`: why a negative value is refused, or none where it is allowed.
TimeSeries series_file(const Reader& rd, const std::string& key, const toml::node& n, const fs::path& base_dir,
                       double scale, const std::string& what, double t_end,
                       const std::optional<std::string>& negative);

// `scale` of an entry at `at` ([[source]], an inflow [[boundary.segment]]): a factor >= 0 on every value of its
// discharge, constant or series (a hydrograph scaled up or down, an ensemble's member).
void scale_discharge(const Reader& rd, const toml::table& t, const std::string& at, TimeSeries& discharge);

// ---------------------------------------------------------------- expressions.cpp

// A muParser expression in x and y at every cell (in parallel on large grids).
std::vector<double> eval_expression(const Reader& rd, const FieldSpec& f, const CellCentres& at);

// ---------------------------------------------------------------- problem.cpp

// What the sections give that the Problem holds in other terms: read, then
// placed by build_problem.
struct Reading {
  double max_speed = 100.0;                       // physics.max_speed (m/s)
  std::optional<std::vector<double>> manning_map;  // physics.manning as a field, per cell
  struct InflowSegment {
    std::string key;   // boundary.segment[k]
    std::string name;  // "segment west 0-10"
    std::string side_name;
    Side side{};
    index_t begin = 0, end = 0;  // cells along the side
    TimeSeries discharge;        // m^3/s into the domain
    std::string discharge_key;   // key.hydrograph or key.discharge
    std::vector<double> concentrations;  // per scalar
  };
  std::vector<InflowSegment> inflow_segments;
};

// The modelling decisions on what was read: a Manning map becomes forcing,
// dry cells carry no discharge, an inflow segment becomes a volume source.
void build_problem(const Reader& rd, Reading&& r, Problem& p);

// ---------------------------------------------------------------- domain.cpp

// Where the case runs, a mesh or a grid, with the bathymetry as given: its
// raster is read first, since with no [domain] it gives the grid.
struct Domain {
  std::shared_ptr<UnstructuredMesh> mesh;  // null: a grid, in Problem::grid
  bool grid_from_raster = false;           // no [domain]: the grid is the bathymetry raster's
  std::optional<FieldSpec> z;              // bathymetry.z; none: a flat bed at 0
  bool z_from_mesh = false;                // z = "mesh": the node elevations of the mesh file
  std::optional<Raster> z_raster;
};

// [mesh] or [domain] (into p.grid), and [bathymetry].
Domain read_domain(const Reader& rd, const toml::table& root, const fs::path& base_dir, RasterReference& rasters,
                   Problem& p, std::vector<std::string>& notes);

// ---------------------------------------------------------------- state.cpp

// The bed elevation p.z: NaN marks an inactive cell.
void read_bathymetry(const Reader& rd, Domain& d, const CellCentres& at, Problem& p);
// [initial] into p.h, p.hu, p.hv; returns whether it gave velocities (u, v).
bool read_initial(const Reader& rd, const toml::table& root, const fs::path& base_dir, const CellCentres& at,
                  Problem& p);

// ---------------------------------------------------------------- physics.cpp

// The discharge per unit width (m^2/s) of critical flow (Froude number 1) at
// speed u: u^3 / g.
inline double critical_discharge(double u, double g) { return u * u * u / g; }

void read_numerics(const Reader& rd, const toml::table& root, Problem& p);

// [physics] into p.physics (and r: max_speed, a Manning map).
void read_physics(const Reader& rd, const toml::table& root, const fs::path& base_dir, const CellCentres& at,
                  Problem& p, Reading& r);

// Initial speeds and inflow discharges beyond physics.max_speed are input errors.
void check_speeds(const Reader& rd, const Problem& p, const std::string& first_key, double max_speed,
                  const CellCentres& at, const UnstructuredMesh* mesh);

// ---------------------------------------------------------------- time.cpp

// [time]: p.t_end and p.output_times; the sides' series must last the run.
void read_time(const Reader& rd, const toml::table& root, Problem& p);

// ---------------------------------------------------------------- scalars.cpp

// Concentrations beyond any solute's, whose h c would overflow in float.
constexpr double kMaxConcentration = 1e20;

// [[scalar]] into p.scalars; returns their output variables.
std::vector<ScalarOutput> read_scalars(const Reader& rd, const toml::table& root, const fs::path& base_dir,
                                       const CellCentres& at, Problem& p);

// concentration = { salt = 35.0 } in table t (key `at`): the concentration of
// the water it brings, per scalar of Problem::scalars (0 for those it does not name).
std::vector<double> read_concentrations(const Reader& rd, const toml::table& t, const std::string& at,
                                        const std::vector<PassiveScalar>& scalars);

// ---------------------------------------------------------------- boundaries.cpp

// [boundary]: a grid's sides, or a mesh's physical line groups by name (the
// mesh, its inactive cells cut out, then goes to p.mesh).
void read_boundaries(const Reader& rd, const toml::table& root, const fs::path& base_dir,
                     const std::shared_ptr<UnstructuredMesh>& mesh, Problem& p);

// [[boundary.segment]] (grids): level, open and wall stretches into
// p.segments, inflow stretches into r for build_problem.
void read_segments(const Reader& rd, const toml::node& n, const fs::path& base_dir, Problem& p, Reading& r);

// A note for each inflow side or group along which every cell starts dry.
void note_dry_inflows(const Problem& p, std::vector<std::string>& notes);

// ---------------------------------------------------------------- forcing.cpp

// [rain], [infiltration], [[source]] and [[boundary.segment]], after [time]
// (a series must last the run) and [physics] (max_speed bounds a source's discharge).
void read_forcing(const Reader& rd, const toml::table& root, const fs::path& base_dir, const CellCentres& at,
                  Problem& p, Reading& r);

// A volume source whose discharge could not leave its cells even as critical
// flow at max_speed through their whole perimeter is an input error at key.
void check_source_discharge(const Reader& rd, const std::string& key, const VolumeSource& s, const Problem& p,
                            const UnstructuredMesh* mesh, double max_speed);

// The active cell (grid or mesh) holding the point (x, y) named `point` in
// messages ("source 'well' at (1, 2)"); an error at key where it is outside
// the domain or in an inactive cell.
index_t active_cell_at(const Reader& rd, const std::string& key, const std::string& point, double x, double y,
                       const CellCentres& where, const Problem& p);

// ---------------------------------------------------------------- structures.cpp

// [[structure]] into p.forcing.structures, after [time] (a series must last the run).
void read_structures(const Reader& rd, const toml::node& n, const fs::path& base_dir, const CellCentres& at,
                     Problem& p);

// ---------------------------------------------------------------- output.cpp, parallel.cpp

// [output], with gauges inside the grid or the mesh's bounding box.
OutputSettings read_output(const Reader& rd, const toml::table& root, const Problem& p);
// [parallel] (grids only).
ParallelSettings read_parallel(const Reader& rd, const toml::table& root, bool on_mesh);

} // namespace shallows::io::case_reader
