// SPDX-License-Identifier: MIT
// output.nc: CF-1.8 NetCDF (classic 64-bit-offset format, so that a reader can
// follow the file while it grows), written as output.nc.part.
#include <stdexcept>

#include "output_detail.hpp"

#if defined(SHALLOWS_HAVE_NETCDF)
#include <netcdf.h>

#include <array>
#include <chrono>
#include <cstring>
#include <ctime>
#endif

namespace shallows::io::detail {

#if !defined(SHALLOWS_HAVE_NETCDF)

std::unique_ptr<FormatWriter> make_netcdf_writer(const Context&) {
  throw InputError(
      "output.format: \"netcdf\" requested but this build has no NetCDF support "
      "(rebuild with libnetcdf-dev installed, or choose vtk/png)");
}

#else

namespace {

constexpr float fill = NC_FILL_FLOAT;

struct VarSpec {
  const char* name;
  const char* long_name;
  const char* standard_name;  // nullptr: CF has none
  const char* units;
};

// Record variables, (time, y, x), in this order in Frame.
constexpr std::array<VarSpec, 6> record_vars{{
    {"h", "water depth", "flood_water_thickness", "m"},
    {"hu", "x component of unit discharge (h u)", nullptr, "m2 s-1"},
    {"hv", "y component of unit discharge (h v)", nullptr, "m2 s-1"},
    {"u", "x component of depth-averaged velocity", "eastward_flood_water_velocity", "m s-1"},
    {"v", "y component of depth-averaged velocity", "northward_flood_water_velocity", "m s-1"},
    {"eta", "water surface elevation (h + z)", "water_surface_height_above_reference_datum", "m"},
}};

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Closes the file if the writer dies unfinished (also when its constructor
// throws): what was synced stays readable as output.nc.part.
struct NcHandle {
  int id = -1;
  NcHandle() = default;
  NcHandle(const NcHandle&) = delete;
  NcHandle& operator=(const NcHandle&) = delete;
  ~NcHandle() {
    if (id >= 0) nc_close(id);
  }
};

class NetcdfWriter final : public FormatWriter {
 public:
  explicit NetcdfWriter(const Context& ctx)
      : ctx_(ctx), final_(ctx.settings.dir / "output.nc"), part_(part_path(final_)) {
    remove_stale(final_);
    const Grid& g = ctx.grid;
    const auto nx = static_cast<std::size_t>(g.nx), ny = static_cast<std::size_t>(g.ny);
    // 64-bit offset (CDF-2) is read by every NetCDF tool but limits a record
    // variable to 4 GiB per time; larger grids need CDF-5.
    const bool huge = double(nx) * double(ny) * 4.0 > 4.0e9;
    check(nc_create(part_.c_str(), NC_CLOBBER | (huge ? NC_64BIT_DATA : NC_64BIT_OFFSET), &nc_.id), "create");
    ncid_ = nc_.id;

    int dim_t = 0, dim_y = 0, dim_x = 0;
    check(nc_def_dim(ncid_, "time", NC_UNLIMITED, &dim_t), "define dimension time");
    check(nc_def_dim(ncid_, "y", ny, &dim_y), "define dimension y");
    check(nc_def_dim(ncid_, "x", nx, &dim_x), "define dimension x");

    check(nc_def_var(ncid_, "time", NC_DOUBLE, 1, &dim_t, &var_time_), "define time");
    text(var_time_, "long_name", "simulation time");
    text(var_time_, "units", "s");
    text(var_time_, "axis", "T");
    check(nc_def_var(ncid_, "y", NC_DOUBLE, 1, &dim_y, &var_y_), "define y");
    text(var_y_, "long_name", "y coordinate of cell centre");
    text(var_y_, "standard_name", "projection_y_coordinate");
    text(var_y_, "units", "m");
    text(var_y_, "axis", "Y");
    check(nc_def_var(ncid_, "x", NC_DOUBLE, 1, &dim_x, &var_x_), "define x");
    text(var_x_, "long_name", "x coordinate of cell centre");
    text(var_x_, "standard_name", "projection_x_coordinate");
    text(var_x_, "units", "m");
    text(var_x_, "axis", "X");

    const int dims3[3] = {dim_t, dim_y, dim_x};
    const int dims2[2] = {dim_y, dim_x};
    for (std::size_t v = 0; v < record_vars.size(); ++v) var_rec_[v] = define(record_vars[v], 3, dims3);
    var_z_ = define({"z", "bed elevation", "altitude", "m"}, 2, dims2);

    // Maxima are defined now (adding variables at the end would rewrite the
    // whole classic-format file) and hold fill values until finish().
    var_max_h_ = define({"max_h", "maximum water depth over the run", "flood_water_thickness", "m"}, 2, dims2);
    text(var_max_h_, "cell_methods", "time: maximum");
    var_max_speed_ = define({"max_speed", "maximum depth-averaged speed over the run", "flood_water_speed", "m s-1"},
                            2, dims2);
    text(var_max_speed_, "cell_methods", "time: maximum");
    check(nc_def_var(ncid_, "arrival_threshold", NC_FLOAT, 0, nullptr, &var_threshold_), "define arrival_threshold");
    text(var_threshold_, "long_name", "depth that defines arrival_time");
    text(var_threshold_, "standard_name", "flood_water_thickness");
    text(var_threshold_, "units", "m");
    var_arrival_ = define({"arrival_time", "first time the depth exceeded arrival_threshold (fill: never)",
                           "time_when_flood_water_rises_above_threshold", "s"},
                          2, dims2);
    text(var_arrival_, "coordinates", "arrival_threshold");

    text(NC_GLOBAL, "title", "shallows shallow-water simulation");
    text(NC_GLOBAL, "institution", "shallows");
    text(NC_GLOBAL, "source", "shallows " SHALLOWS_VERSION);
    text(NC_GLOBAL, "Conventions", "CF-1.8");
    text(NC_GLOBAL, "history", utc_now() + " created by shallows " SHALLOWS_VERSION);
    text(NC_GLOBAL, "comment",
         "Cell-centred values on a uniform grid; row-major (y, x) with y = 0 at the south. "
         "Cells with h <= dry_depth are written dry (h = hu = hv = u = v = 0, eta = z); "
         "inactive cells (no bed) hold _FillValue. max_h, max_speed and arrival_time are "
         "filled in at the end of the run.");
    dbl(NC_GLOBAL, "dry_depth", ctx.h_dry);
    dbl(NC_GLOBAL, "dx", g.dx);
    dbl(NC_GLOBAL, "dy", g.dy);
    check(nc_enddef(ncid_), "end definitions");

    std::vector<double> coord(nx);
    for (std::size_t i = 0; i < nx; ++i) coord[i] = g.x_center(static_cast<index_t>(i));
    check(nc_put_var_double(ncid_, var_x_, coord.data()), "write x");
    coord.resize(ny);
    for (std::size_t j = 0; j < ny; ++j) coord[j] = g.y_center(static_cast<index_t>(j));
    check(nc_put_var_double(ncid_, var_y_, coord.data()), "write y");
    const auto threshold = static_cast<float>(ctx.settings.arrival_threshold);
    check(nc_put_var_float(ncid_, var_threshold_, &threshold), "write arrival_threshold");
    put_field(var_z_, ctx.z, "write z");
    check(nc_sync(ncid_), "sync");
  }

  void write(const Frame& f) override {
    const std::vector<float>* fields[6] = {&f.h, &f.hu, &f.hv, &f.u, &f.v, &f.eta};
    const std::size_t n = ctx_.cells();
    buf_.resize(n);
    for (std::size_t v = 0; v < 6; ++v) {
      const std::vector<float>& src = *fields[v];
      for (std::size_t k = 0; k < n; ++k) buf_[k] = ctx_.inactive[k] ? fill : src[k];
      const std::size_t start[3] = {records_, 0, 0};
      const std::size_t count[3] = {1, static_cast<std::size_t>(ctx_.grid.ny), static_cast<std::size_t>(ctx_.grid.nx)};
      check(nc_put_vara_float(ncid_, var_rec_[v], start, count, buf_.data()),
            (std::string("write ") + record_vars[v].name).c_str());
    }
    const std::size_t index = records_;
    check(nc_put_var1_double(ncid_, var_time_, &index, &f.time), "write time");
    check(nc_sync(ncid_), "sync");
    ++records_;
  }

  void finish(const Maxima& m) override {
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
  int define(const VarSpec& s, int ndims, const int* dims) {
    int id = 0;
    check(nc_def_var(ncid_, s.name, NC_FLOAT, ndims, dims, &id), s.name);
    text(id, "long_name", s.long_name);
    if (s.standard_name) text(id, "standard_name", s.standard_name);
    text(id, "units", s.units);
    check(nc_put_att_float(ncid_, id, "_FillValue", NC_FLOAT, 1, &fill), s.name);
    return id;
  }
  // A (y, x) field in double; NaN (inactive, or never arrived) -> fill.
  void put_field(int var, const std::vector<double>& src, const char* what) {
    const std::size_t n = ctx_.cells();
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
  int var_time_ = 0, var_x_ = 0, var_y_ = 0, var_z_ = 0;
  int var_rec_[6] = {};
  int var_max_h_ = 0, var_max_speed_ = 0, var_arrival_ = 0, var_threshold_ = 0;
  std::vector<float> buf_;
};

}  // namespace

std::unique_ptr<FormatWriter> make_netcdf_writer(const Context& ctx) { return std::make_unique<NetcdfWriter>(ctx); }

#endif

}  // namespace shallows::io::detail
