// SPDX-License-Identifier: MIT
// output.nc: CF-1.8 NetCDF (classic 64-bit-offset format, so that a reader can
// follow the file while it grows), written as output.nc.part. On a grid the
// fields are (y, x); on a mesh they are per face of a UGRID-1.0 mesh topology.
// Both share everything but the spatial dimensions and coordinates.
#include <stdexcept>

#include "netcdf_ugrid.hpp"
#include "output_detail.hpp"

#if defined(SHALLOWS_HAVE_NETCDF)
#include <netcdf.h>

#include <array>
#include <cstring>
#include <optional>
#endif

namespace shallows::io::detail {

std::recursive_mutex& netcdf_mutex() {
  static std::recursive_mutex m;
  return m;
}

#if !defined(SHALLOWS_HAVE_NETCDF)

std::unique_ptr<FormatWriter> make_netcdf_writer(const Context&) {
  throw InputError(
      "output.format: \"netcdf\" requested but this build has no NetCDF support "
      "(rebuild with libnetcdf-dev installed, or choose vtk/png)");
}

#else

namespace {

constexpr float fill = NC_FILL_FLOAT;
constexpr double fill_double = NC_FILL_DOUBLE;

struct VarSpec {
  const char* name;
  const char* long_name;
  const char* standard_name;  // nullptr: CF has none
  const char* units;
};

// Record variables, (time, y, x) or (time, nMesh_face), in this order in Frame.
constexpr std::array<VarSpec, 6> record_vars{{
    {"h", "water depth", "flood_water_thickness", "m"},
    {"hu", "x component of unit discharge (h u)", nullptr, "m2 s-1"},
    {"hv", "y component of unit discharge (h v)", nullptr, "m2 s-1"},
    {"u", "x component of depth-averaged velocity", "eastward_flood_water_velocity", "m s-1"},
    {"v", "y component of depth-averaged velocity", "northward_flood_water_velocity", "m s-1"},
    {"eta", "water surface elevation (h + z)", "water_surface_height_above_reference_datum", "m"},
}};

// The volume account per record (VolumeAccount, in this order): the mass balance over time.
struct AccountSpec {
  const char* name;
  const char* long_name;
};
constexpr std::array<AccountSpec, 7> account_vars{{
    {"volume", "water volume on the active cells"},
    {"positivity_volume", "water the depth clamps added since the start"},
    {"rain_volume", "rain fallen on the active cells since the start"},
    {"infiltration_volume", "water infiltrated since the start"},
    {"source_volume", "net water the sources and inflow segments brought since the start"},
    {"boundary_inflow_volume", "water that entered through the sides since the start"},
    {"boundary_outflow_volume", "water that left through the sides since the start"},
}};

// Closes the file if the writer dies unfinished (also when its constructor
// throws): what was synced stays readable as output.nc.part.
struct NcHandle {
  int id = -1;
  NcHandle() = default;
  NcHandle(const NcHandle&) = delete;
  NcHandle& operator=(const NcHandle&) = delete;
  ~NcHandle() {
    const std::lock_guard lock(netcdf_mutex());
    if (id >= 0) nc_close(id);
  }
};

class NetcdfWriter final : public FormatWriter {
 public:
  explicit NetcdfWriter(const Context& ctx)
      : ctx_(ctx), final_(ctx.settings.dir / "output.nc"), part_(part_path(final_)),
        doubles_(ctx.settings.precision == Precision::double_precision) {
    const std::lock_guard lock(netcdf_mutex());
    if (ctx.resuming()) {
      reopen();
      return;
    }
    remove_stale(final_);
    // 64-bit offset (CDF-2) is read by every NetCDF tool but limits a record
    // variable to 4 GiB per time, and other variables to 4 GiB; larger grids
    // need CDF-5. A mesh's largest variable is mesh_face_nodes, 16 bytes a cell
    // (its edges take about as much).
    const double bytes_per_cell = ctx.mesh ? 16.0 : (doubles_ ? 8.0 : 4.0);
    const bool huge = double(ctx.cells()) * bytes_per_cell > 4.0e9;
    check(nc_create(part_.c_str(), NC_CLOBBER | (huge ? NC_64BIT_DATA : NC_64BIT_OFFSET), &nc_.id), "create");
    ncid_ = nc_.id;

    int dim_t = 0;
    check(nc_def_dim(ncid_, "time", NC_UNLIMITED, &dim_t), "define dimension time");
    if (ctx.mesh) define_mesh_dims();
    else define_grid_dims();

    check(nc_def_var(ncid_, "time", NC_DOUBLE, 1, &dim_t, &var_time_), "define time");
    text(var_time_, "long_name", "simulation time");
    text(var_time_, "units", "s");
    text(var_time_, "axis", "T");
    if (ctx.mesh) ugrid_->define();
    else define_grid_vars();

    for (std::size_t v = 0; v < record_vars.size(); ++v) var_rec_[v] = define(record_vars[v], true);
    for (const ScalarOutput& sc : ctx.settings.scalars) {
      const std::string long_name = "concentration of " + sc.name;
      var_c_.push_back(define({sc.name.c_str(), long_name.c_str(), nullptr, sc.units.c_str()}, true));
    }
    for (std::size_t v = 0; v < account_vars.size(); ++v)
      var_account_[v] = define_account(account_vars[v].name, account_vars[v].long_name, "m3", dim_t);
    for (const ScalarOutput& sc : ctx.settings.scalars)
      var_mass_.push_back(define_account((sc.name + "_mass").c_str(),
                                         "mass of " + sc.name + " on the active cells (h c times the cell areas, summed)",
                                         sc.units == "1" ? "m3" : sc.units + " m3", dim_t));
    var_z_ = define({"z", "bed elevation", "altitude", "m"}, false);

    // Maxima are defined now (adding variables at the end would rewrite the
    // whole classic-format file) and hold fill values until finish().
    var_max_h_ = define({"max_h", "maximum water depth over the run", "flood_water_thickness", "m"}, false);
    text(var_max_h_, "cell_methods", "time: maximum");
    var_max_speed_ =
        define({"max_speed", "maximum depth-averaged speed over the run", "flood_water_speed", "m s-1"}, false);
    text(var_max_speed_, "cell_methods", "time: maximum");
    check(nc_def_var(ncid_, "arrival_threshold", NC_FLOAT, 0, nullptr, &var_threshold_), "define arrival_threshold");
    text(var_threshold_, "long_name", "depth that defines arrival_time");
    text(var_threshold_, "standard_name", "flood_water_thickness");
    text(var_threshold_, "units", "m");
    var_arrival_ = define({"arrival_time", "first time the depth exceeded arrival_threshold (fill: never)",
                           "time_when_flood_water_rises_above_threshold", "s"},
                          false);
    text(var_arrival_, "coordinates", ctx.mesh ? "mesh_face_x mesh_face_y arrival_threshold" : "arrival_threshold");

    text(NC_GLOBAL, "title", "shallows shallow-water simulation");
    text(NC_GLOBAL, "institution", "shallows");
    text(NC_GLOBAL, "source", "shallows " SHALLOWS_VERSION);
    text(NC_GLOBAL, "Conventions", ctx.mesh ? "CF-1.8 UGRID-1.0" : "CF-1.8");
    text(NC_GLOBAL, "history", utc_now() + " created by shallows " SHALLOWS_VERSION);
    const char* rules =
        "Cells with h <= dry_depth are written dry (h = hu = hv = u = v = 0, eta = z); "
        "inactive cells (no bed) hold _FillValue. max_h, max_speed and arrival_time are "
        "filled in at the end of the run.";
    if (ctx.mesh)
      text(NC_GLOBAL, "comment",
           std::string("Cell averages on an unstructured mesh (UGRID-1.0 topology \"mesh\"), one value per face in "
                       "the mesh's cell order, located at the face centroid (mesh_face_x, mesh_face_y). ") +
               rules);
    else
      text(NC_GLOBAL, "comment",
           std::string("Cell-centred values on a uniform grid; row-major (y, x) with y = 0 at the south. ") + rules);
    dbl(NC_GLOBAL, "dry_depth", ctx.h_dry);
    if (!ctx.mesh) {
      dbl(NC_GLOBAL, "dx", ctx.grid.dx);
      dbl(NC_GLOBAL, "dy", ctx.grid.dy);
    }
    check(nc_enddef(ncid_), "end definitions");

    if (ctx.mesh) ugrid_->put();
    else put_grid();
    const auto threshold = static_cast<float>(ctx.settings.arrival_threshold);
    check(nc_put_var_float(ncid_, var_threshold_, &threshold), "write arrival_threshold");
    put_field(var_z_, ctx.z, "write z");
    check(nc_sync(ncid_), "sync");
  }

  void write(const Frame& f) override {
    const std::lock_guard lock(netcdf_mutex());
    const std::vector<float>* fields[6] = {&f.h, &f.hu, &f.hv, &f.u, &f.v, &f.eta};
    const std::size_t n = ctx_.cells();
    std::vector<std::size_t> start(count_.size(), 0);
    start[0] = records_;
    if (doubles_) {
      // The run's own digits: the written values derived again in double.
      dbuf_.resize(n);
      const Fields& raw = *f.raw;
      for (std::size_t v = 0; v < 6; ++v) {
        for (std::size_t k = 0; k < n; ++k) {
          const CellValues c = cell_values(raw.h[k], raw.hu[k], raw.hv[k], ctx_.z[k], ctx_.h_dry);
          const double values[6] = {c.h, c.hu, c.hv, c.u, c.v, c.eta};
          dbuf_[k] = ctx_.inactive[k] ? fill_double : values[v];
        }
        check(nc_put_vara_double(ncid_, var_rec_[v], start.data(), count_.data(), dbuf_.data()),
              (std::string("write ") + record_vars[v].name).c_str());
      }
      for (std::size_t s = 0; s < var_c_.size(); ++s) {
        for (std::size_t k = 0; k < n; ++k)
          dbuf_[k] = ctx_.inactive[k] ? fill_double : concentration(raw.hc[s][k], raw.h[k]);
        check(nc_put_vara_double(ncid_, var_c_[s], start.data(), count_.data(), dbuf_.data()),
              ctx_.settings.scalars[s].name.c_str());
      }
      const std::size_t index = records_;
      put_account(index, f);
      check(nc_put_var1_double(ncid_, var_time_, &index, &f.time), "write time");
      check(nc_sync(ncid_), "sync");
      ++records_;
      return;
    }
    buf_.resize(n);
    for (std::size_t v = 0; v < 6; ++v) {
      const std::vector<float>& src = *fields[v];
      for (std::size_t k = 0; k < n; ++k) buf_[k] = ctx_.inactive[k] ? fill : src[k];
      check(nc_put_vara_float(ncid_, var_rec_[v], start.data(), count_.data(), buf_.data()),
            (std::string("write ") + record_vars[v].name).c_str());
    }
    for (std::size_t s = 0; s < var_c_.size(); ++s) {
      for (std::size_t k = 0; k < n; ++k) buf_[k] = ctx_.inactive[k] ? fill : f.c[s][k];
      check(nc_put_vara_float(ncid_, var_c_[s], start.data(), count_.data(), buf_.data()),
            ctx_.settings.scalars[s].name.c_str());
    }
    const std::size_t index = records_;
    put_account(index, f);
    check(nc_put_var1_double(ncid_, var_time_, &index, &f.time), "write time");
    check(nc_sync(ncid_), "sync");
    ++records_;
  }

  void finish(const Maxima& m) override {
    const std::lock_guard lock(netcdf_mutex());
    const double h_dry = ctx_.h_dry;
    std::vector<double> max_h(m.max_h), max_speed(m.max_speed);
    for (std::size_t k = 0; k < max_h.size(); ++k)
      if (max_h[k] <= h_dry) max_h[k] = max_speed[k] = 0;  // never wet: written dry
    put_field(var_max_h_, max_h, "write max_h");
    put_field(var_max_speed_, max_speed, "write max_speed");
    put_field(var_arrival_, m.arrival_time, "write arrival_time");
    nc_.id = -1;
    check(nc_close(ncid_), "close");
    commit_part(part_, final_);
  }

 private:
  // The volume account of a record (NaN, e.g. no positivity account on
  // several ranks, is written as the fill value) and the scalars' masses.
  void put_account(std::size_t index, const Frame& f) {
    const VolumeAccount& a = f.account;
    const double values[7] = {a.volume,  a.positivity,  a.rain,        a.infiltration,
                              a.sources, a.boundary_in, a.boundary_out};
    for (std::size_t v = 0; v < account_vars.size(); ++v) {
      const double x = std::isnan(values[v]) ? fill_double : values[v];
      check(nc_put_var1_double(ncid_, var_account_[v], &index, &x), account_vars[v].name);
    }
    for (std::size_t s = 0; s < var_mass_.size(); ++s) {
      const double mass = scalar_mass(f.raw->hc[s], ctx_.z, ctx_.grid, ctx_.mesh.get());
      check(nc_put_var1_double(ncid_, var_mass_[s], &index, &mass), "write a scalar's mass");
    }
  }
  // A double per record (time): the volume account, a scalar's mass.
  int define_account(const char* name, const std::string& long_name, const std::string& units, int dim_t) {
    int id = 0;
    check(nc_def_var(ncid_, name, NC_DOUBLE, 1, &dim_t, &id), name);
    text(id, "long_name", long_name);
    text(id, "units", units);
    check(nc_put_att_double(ncid_, id, "_FillValue", NC_DOUBLE, 1, &fill_double), "fill value");
    return id;
  }

  // A restart: the interrupted run's file, its records from the checkpoint's
  // frame on written again (a larger record count left by the run is
  // overwritten frame by frame, with the same values).
  void reopen() {
    check(nc_open(reopen_part(final_).c_str(), NC_WRITE, &nc_.id), "reopen");
    ncid_ = nc_.id;
    const auto id = [&](const char* name) {
      int v = 0;
      check(nc_inq_varid(ncid_, name, &v), name);
      return v;
    };
    var_time_ = id("time");
    for (std::size_t v = 0; v < record_vars.size(); ++v) var_rec_[v] = id(record_vars[v].name);
    for (std::size_t v = 0; v < account_vars.size(); ++v) var_account_[v] = id(account_vars[v].name);
    for (const ScalarOutput& sc : ctx_.settings.scalars) {
      var_c_.push_back(id(sc.name.c_str()));
      var_mass_.push_back(id((sc.name + "_mass").c_str()));
    }
    var_max_h_ = id("max_h");
    var_max_speed_ = id("max_speed");
    var_arrival_ = id("arrival_time");
    count_ = record_count();
    records_ = ctx_.resume_times.size();
  }

  // One record of a field: (1, ny, nx) or (1, faces).
  std::vector<std::size_t> record_count() const {
    if (ctx_.mesh) return {1, ctx_.cells()};
    return {1, static_cast<std::size_t>(ctx_.grid.ny), static_cast<std::size_t>(ctx_.grid.nx)};
  }

  // Grid: dimensions y, x; coordinate variables y, x at the cell centres.
  void define_grid_dims() {
    int dim_y = 0, dim_x = 0;
    check(nc_def_dim(ncid_, "y", static_cast<std::size_t>(ctx_.grid.ny), &dim_y), "define dimension y");
    check(nc_def_dim(ncid_, "x", static_cast<std::size_t>(ctx_.grid.nx), &dim_x), "define dimension x");
    space_ = {dim_y, dim_x};
    count_ = record_count();
  }
  void define_grid_vars() {
    check(nc_def_var(ncid_, "y", NC_DOUBLE, 1, &space_[0], &var_y_), "define y");
    text(var_y_, "long_name", "y coordinate of cell centre");
    text(var_y_, "standard_name", "projection_y_coordinate");
    text(var_y_, "units", "m");
    text(var_y_, "axis", "Y");
    check(nc_def_var(ncid_, "x", NC_DOUBLE, 1, &space_[1], &var_x_), "define x");
    text(var_x_, "long_name", "x coordinate of cell centre");
    text(var_x_, "standard_name", "projection_x_coordinate");
    text(var_x_, "units", "m");
    text(var_x_, "axis", "X");
    if (!ctx_.settings.crs_wkt.empty()) {
      // CF grid mapping: the coordinate system of the rasters the case read.
      int var_crs = 0;
      check(nc_def_var(ncid_, "crs", NC_INT, 0, nullptr, &var_crs), "define crs");
      text(var_crs, "crs_wkt", ctx_.settings.crs_wkt);
      text(var_crs, "spatial_ref", ctx_.settings.crs_wkt);  // the name GDAL reads
    }
  }
  void put_grid() {
    const Grid& g = ctx_.grid;
    const auto nx = static_cast<std::size_t>(g.nx), ny = static_cast<std::size_t>(g.ny);
    std::vector<double> coord(nx);
    for (std::size_t i = 0; i < nx; ++i) coord[i] = g.x_center(static_cast<index_t>(i));
    check(nc_put_var_double(ncid_, var_x_, coord.data()), "write x");
    coord.resize(ny);
    for (std::size_t j = 0; j < ny; ++j) coord[j] = g.y_center(static_cast<index_t>(j));
    check(nc_put_var_double(ncid_, var_y_, coord.data()), "write y");
  }

  // Mesh (UGRID-1.0, netcdf_ugrid.hpp): the fields per face.
  void define_mesh_dims() {
    ugrid_.emplace(ncid_, *ctx_.mesh, [this](int status, const char* what) { check(status, what); });
    space_ = {ugrid_->face_dim()};
    count_ = record_count();
  }

  void check(int status, const char* what) const {
    if (status != NC_NOERR)
      throw std::runtime_error("NetCDF error in " + part_.string() + " (" + what + "): " + nc_strerror(status));
  }
  void text(int var, const char* name, const std::string& value) {
    check(nc_put_att_text(ncid_, var, name, value.size(), value.c_str()), name);
  }
  void dbl(int var, const char* name, double value) {
    check(nc_put_att_double(ncid_, var, name, NC_DOUBLE, 1, &value), name);
  }
  // A field on the cells (float or double: output.precision), per record (time first) or not.
  int define(const VarSpec& s, bool record) {
    std::vector<int> dims;
    if (record) check(nc_inq_unlimdim(ncid_, &dims.emplace_back()), "time dimension");
    dims.insert(dims.end(), space_.begin(), space_.end());
    int id = 0;
    check(nc_def_var(ncid_, s.name, doubles_ ? NC_DOUBLE : NC_FLOAT, static_cast<int>(dims.size()), dims.data(), &id),
          s.name);
    text(id, "long_name", s.long_name);
    if (s.standard_name) text(id, "standard_name", s.standard_name);
    text(id, "units", s.units);
    if (doubles_)
      check(nc_put_att_double(ncid_, id, "_FillValue", NC_DOUBLE, 1, &fill_double), s.name);
    else
      check(nc_put_att_float(ncid_, id, "_FillValue", NC_FLOAT, 1, &fill), s.name);
    if (!ctx_.mesh && !ctx_.settings.crs_wkt.empty()) text(id, "grid_mapping", "crs");
    if (ctx_.mesh) ugrid_->tie(id);
    return id;
  }
  // A field on the cells in double; NaN (inactive, or never arrived) -> fill.
  void put_field(int var, const std::vector<double>& src, const char* what) {
    const std::size_t n = ctx_.cells();
    if (doubles_) {
      dbuf_.resize(n);
      for (std::size_t k = 0; k < n; ++k) dbuf_[k] = (ctx_.inactive[k] || std::isnan(src[k])) ? fill_double : src[k];
      check(nc_put_var_double(ncid_, var, dbuf_.data()), what);
      return;
    }
    buf_.resize(n);
    for (std::size_t k = 0; k < n; ++k)
      buf_[k] = (ctx_.inactive[k] || std::isnan(src[k])) ? fill : static_cast<float>(src[k]);
    check(nc_put_var_float(ncid_, var, buf_.data()), what);
  }

  const Context& ctx_;
  fs::path final_, part_;
  NcHandle nc_;
  int ncid_ = -1;
  std::size_t records_ = 0;
  std::vector<int> space_;           // spatial dimensions of a field: (y, x) or (nMesh_face)
  std::vector<std::size_t> count_;   // one record of a field: (1, space...)
  int var_time_ = 0, var_x_ = 0, var_y_ = 0, var_z_ = 0;
  int var_rec_[6] = {};
  int var_account_[7] = {};
  std::vector<int> var_c_, var_mass_;  // per passive scalar: its concentration, its mass
  int var_max_h_ = 0, var_max_speed_ = 0, var_arrival_ = 0, var_threshold_ = 0;
  std::optional<UgridMesh> ugrid_;  // a mesh's topology
  bool doubles_ = false;  // output.precision = "double"
  std::vector<float> buf_;
  std::vector<double> dbuf_;
};

}  // namespace

std::unique_ptr<FormatWriter> make_netcdf_writer(const Context& ctx) { return std::make_unique<NetcdfWriter>(ctx); }

#endif

}  // namespace shallows::io::detail
