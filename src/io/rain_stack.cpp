// SPDX-License-Identifier: MIT
// NetCDF rain stacks (radar rainfall) through the NetCDF C library.
#include "shallows/io/rain_stack.hpp"

#include "output_detail.hpp"
#include "text_tokens.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>

#if defined(SHALLOWS_HAVE_NETCDF)
#include <netcdf.h>
#endif

namespace shallows::io {
using detail::format_number;

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& file, const std::string& what) { throw InputError(file.string() + ": " + what); }

} // namespace

bool have_netcdf() {
#if defined(SHALLOWS_HAVE_NETCDF)
  return true;
#else
  return false;
#endif
}

#if !defined(SHALLOWS_HAVE_NETCDF)

RainStack read_rain_stack(const fs::path& file, const std::string&, const std::string&, double) {
  fail(file, "a NetCDF rain stack needs a build with NetCDF (libnetcdf-dev); this build has none");
}

#else

namespace {

// Lower case, without blanks around it, one space for each run of blanks inside.
std::string normalised(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// The rates' units: the factor to m/s, or 0 where unknown.
double rate_units(const std::string& units) {
  const std::string u = normalised(units);
  if (u.empty() || u == "mm/h" || u == "mm h-1" || u == "mm/hr" || u == "mm hr-1") return 1.0 / 3.6e6;
  if (u == "m/s" || u == "m s-1") return 1.0;
  if (u == "kg m-2 s-1" || u == "mm/s" || u == "mm s-1") return 1e-3;  // 1 kg of water per m^2 is 1 mm
  return 0;
}

// The time units: seconds per unit, or 0 where unknown. "X since DATE" is X.
double time_units(const std::string& units) {
  std::string u = normalised(units);
  if (const auto since = u.find(" since "); since != std::string::npos) u.resize(since);
  if (u.empty() || u == "s" || u == "sec" || u == "second" || u == "seconds") return 1;
  if (u == "min" || u == "minute" || u == "minutes") return 60;
  if (u == "h" || u == "hr" || u == "hour" || u == "hours") return 3600;
  if (u == "d" || u == "day" || u == "days") return 86400;
  return 0;
}

// An open file, closed when it goes.
class NcFile {
 public:
  explicit NcFile(const fs::path& path) : path_(path) {
    const int status = nc_open(path.c_str(), NC_NOWRITE, &id_);
    if (status != NC_NOERR) fail(path, std::string("cannot open as NetCDF (") + nc_strerror(status) + ")");
  }
  ~NcFile() { nc_close(id_); }
  NcFile(const NcFile&) = delete;
  NcFile& operator=(const NcFile&) = delete;

  int id() const { return id_; }

  void check(int status, const std::string& what) const {
    if (status != NC_NOERR) fail(path_, what + ": " + nc_strerror(status));
  }

  std::string variables() const {
    int n = 0;
    check(nc_inq_nvars(id_, &n), "listing its variables");
    std::string names;
    for (int v = 0; v < n; ++v) {
      char name[NC_MAX_NAME + 1] = {};
      check(nc_inq_varname(id_, v, name), "listing its variables");
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
    return names.empty() ? "none" : names;
  }

  int varid(const std::string& name) const {
    int v = -1;
    return nc_inq_varid(id_, name.c_str(), &v) == NC_NOERR ? v : -1;
  }

  std::string dim_name(int dim) const {
    char name[NC_MAX_NAME + 1] = {};
    check(nc_inq_dimname(id_, dim, name), "reading a dimension's name");
    return name;
  }

  std::vector<int> dims(int var) const {
    int n = 0;
    check(nc_inq_varndims(id_, var, &n), "reading a variable's dimensions");
    std::vector<int> d(static_cast<std::size_t>(n));
    if (n > 0) check(nc_inq_vardimid(id_, var, d.data()), "reading a variable's dimensions");
    return d;
  }

  std::size_t dim_len(int dim) const {
    std::size_t n = 0;
    check(nc_inq_dimlen(id_, dim, &n), "reading a dimension's length");
    return n;
  }

  // A text attribute; empty where the variable has none.
  std::string text(int var, const char* name) const {
    nc_type type = NC_NAT;
    std::size_t len = 0;
    if (nc_inq_att(id_, var, name, &type, &len) != NC_NOERR) return {};
    if (type == NC_CHAR) {
      std::string s(len, '\0');
      check(nc_get_att_text(id_, var, name, s.data()), std::string("reading attribute ") + name);
      return std::string(s.c_str());  // some writers count a final NUL
    }
    if (type == NC_STRING && len == 1) {
      char* s = nullptr;
      check(nc_get_att_string(id_, var, name, &s), std::string("reading attribute ") + name);
      std::string out = s ? s : "";
      nc_free_string(1, &s);
      return out;
    }
    return "<not text>";
  }

  // A numeric attribute's values; empty where the variable has none.
  std::vector<double> numbers(int var, const char* name) const {
    nc_type type = NC_NAT;
    std::size_t len = 0;
    if (nc_inq_att(id_, var, name, &type, &len) != NC_NOERR || type == NC_CHAR || type == NC_STRING) return {};
    std::vector<double> v(len);
    check(nc_get_att_double(id_, var, name, v.data()), std::string("reading attribute ") + name);
    return v;
  }

  // The value that marks a missing value of var: its _FillValue, or its type's default fill.
  double fill_value(int var) const {
    nc_type type = NC_NAT;
    check(nc_inq_vartype(id_, var, &type), "reading a variable's type");
    alignas(8) unsigned char buf[8] = {};
    int no_fill = 0;
    check(nc_inq_var_fill(id_, var, &no_fill, buf), "reading a variable's fill value");
    const auto as = [&buf]<class T>(T) {
      T v;
      std::memcpy(&v, buf, sizeof v);
      return static_cast<double>(v);
    };
    switch (type) {
      case NC_BYTE: return as(static_cast<signed char>(0));
      case NC_UBYTE: return as(static_cast<unsigned char>(0));
      case NC_SHORT: return as(static_cast<short>(0));
      case NC_USHORT: return as(static_cast<unsigned short>(0));
      case NC_INT: return as(0);
      case NC_UINT: return as(0u);
      case NC_INT64: return as(static_cast<long long>(0));
      case NC_UINT64: return as(static_cast<unsigned long long>(0));
      case NC_FLOAT: return as(0.0f);
      case NC_DOUBLE: return as(0.0);
      default: return std::numeric_limits<double>::quiet_NaN();
    }
  }

  bool numeric(int var) const {
    nc_type type = NC_NAT;
    check(nc_inq_vartype(id_, var, &type), "reading a variable's type");
    return type >= NC_BYTE && type <= NC_UINT64 && type != NC_CHAR && type != NC_STRING;
  }

  std::vector<double> values(int var, std::size_t n, const std::string& what) const {
    std::vector<double> v(n);
    if (n > 0) check(nc_get_var_double(id_, var, v.data()), "reading " + what);
    return v;
  }

 private:
  fs::path path_;
  int id_ = -1;
};

// A coordinate variable: the name of dimension dim, one value per index along it.
std::vector<double> coordinate(const NcFile& nc, const fs::path& file, const std::string& name, int dim,
                               const std::string& what) {
  const int v = nc.varid(name);
  if (v < 0) fail(file, "no variable '" + name + "' (" + what + "; variables: " + nc.variables() + ")");
  const std::vector<int> d = nc.dims(v);
  if (d.size() != 1 || d[0] != dim)
    fail(file, "variable '" + name + "' (" + what + ") must have the one dimension '" + nc.dim_name(dim) + "'");
  if (!nc.numeric(v)) fail(file, "variable '" + name + "' (" + what + ") is not numeric");
  return nc.values(v, nc.dim_len(dim), "'" + name + "'");
}

// An axis of cell centres, evenly spaced in either order: its cells as (first edge, step), and whether it runs
// backwards.
struct Axis {
  double edge = 0, step = 0;
  bool reversed = false;
};

Axis axis(const fs::path& file, const std::string& name, const std::vector<double>& c) {
  if (c.size() < 2)
    fail(file, "'" + name + "' has " + std::to_string(c.size()) +
                   " value(s); a rain stack needs at least 2 cells along x and y (their spacing is its cell size)");
  for (double v : c)
    if (!std::isfinite(v)) fail(file, "'" + name + "' holds a value that is not finite");
  const double step = (c.back() - c.front()) / static_cast<double>(c.size() - 1);
  for (std::size_t i = 0; i + 1 < c.size(); ++i) {
    const double d = c[i + 1] - c[i];
    if (!(std::abs(d - step) <= 1e-6 * std::abs(step)) || step == 0)
      fail(file, "'" + name + "' is not evenly spaced: cell centres " + format_number(c[i]) + " and " +
                     format_number(c[i + 1]) + " are " + format_number(d) + " m apart, the mean spacing is " +
                     format_number(step) + " m");
  }
  Axis a;
  a.reversed = step < 0;
  a.step = std::abs(step);
  a.edge = std::min(c.front(), c.back()) - 0.5 * a.step;
  return a;
}

} // namespace

RainStack read_rain_stack(const fs::path& file, const std::string& variable, const std::string& time_variable,
                          double t_end) {
  const std::lock_guard lock(detail::netcdf_mutex());
  const NcFile nc(file);
  RainStack s;
  s.path = file;
  s.variable = variable;
  const int var = nc.varid(variable);
  if (var < 0) fail(file, "no variable '" + variable + "' (variables: " + nc.variables() + ")");
  if (!nc.numeric(var)) fail(file, "variable '" + variable + "' is not numeric");
  const std::vector<int> dims = nc.dims(var);
  if (dims.size() != 3) {
    std::string names;
    for (int d : dims) names += (names.empty() ? "" : ", ") + nc.dim_name(d);
    fail(file, "variable '" + variable + "' has " + std::to_string(dims.size()) + " dimension(s) (" + names +
                   "); a rain stack has 3: (time, y, x)");
  }

  // Rates.
  s.units = nc.text(var, "units");
  s.to_mps = rate_units(s.units);
  if (s.to_mps == 0)
    fail(file, "variable '" + variable + "' has units '" + s.units +
                   "' (known: mm/h, mm h-1, mm/hr, mm hr-1, mm/s, mm s-1, m/s, m s-1, kg m-2 s-1; none: mm/h)");
  if (s.units.empty()) s.units = "mm/h";

  // Times.
  const std::string tname = time_variable.empty() ? nc.dim_name(dims[0]) : time_variable;
  std::vector<double> times =
      coordinate(nc, file, tname, dims[0], "the time of each frame of '" + variable + "'");
  const std::string tunits = nc.text(nc.varid(tname), "units");
  const double seconds = time_units(tunits);
  if (seconds == 0)
    fail(file, "time variable '" + tname + "' has units '" + tunits +
                   "' (known: s, seconds, minutes, hours, days, or 'X since DATE' with DATE the run's start)");
  if (times.empty()) fail(file, "variable '" + variable + "' has no frames ('" + tname + "' is empty)");
  for (std::size_t k = 0; k < times.size(); ++k) {
    times[k] *= seconds;
    if (!std::isfinite(times[k])) fail(file, "'" + tname + "' holds a time that is not finite");
    if (k > 0 && !(times[k] > times[k - 1]))
      fail(file, "the times of '" + tname + "' must increase strictly, found " + format_number(times[k]) + " s after " +
                     format_number(times[k - 1]) + " s");
  }
  if (times[0] > 0)
    fail(file, "the first frame of '" + variable + "' is at t = " + format_number(times[0]) +
                   " s, after the run's start (t = 0): the stack must begin at or before it");

  // Cells.
  const std::string yname = nc.dim_name(dims[1]), xname = nc.dim_name(dims[2]);
  const Axis ax = axis(file, xname, coordinate(nc, file, xname, dims[2], "x of the cell centres, m"));
  const Axis ay = axis(file, yname, coordinate(nc, file, yname, dims[1], "y of the cell centres, m"));
  const std::size_t nx = nc.dim_len(dims[2]), ny = nc.dim_len(dims[1]);
  s.grid.nx = static_cast<index_t>(nx);
  s.grid.ny = static_cast<index_t>(ny);
  s.grid.x0 = ax.edge;
  s.grid.y0 = ay.edge;
  s.grid.dx = ax.step;
  s.grid.dy = ay.step;

  // Missing values and packing.
  std::vector<double> missing = nc.numbers(var, "missing_value");
  missing.push_back(nc.fill_value(var));
  const std::vector<double> scale = nc.numbers(var, "scale_factor"), offset = nc.numbers(var, "add_offset");
  const double a = scale.empty() ? 1.0 : scale[0], b = offset.empty() ? 0.0 : offset[0];

  // The frames the run uses: from the last at or before 0 to the last before t_end.
  std::size_t first = 0, last = 0;
  while (first + 1 < times.size() && times[first + 1] <= 0) ++first;
  last = first;
  while (last + 1 < times.size() && times[last + 1] < t_end) ++last;
  s.times.assign(times.begin() + static_cast<std::ptrdiff_t>(first),
                 times.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  const std::size_t cells = nx * ny;
  s.frames.resize(s.times.size() * cells);
  std::vector<double> raw(cells);
  for (std::size_t k = first; k <= last; ++k) {
    const std::size_t start[3] = {k, 0, 0}, count[3] = {1, ny, nx};
    nc.check(nc_get_vara_double(nc.id(), var, start, count, raw.data()),
             "reading frame " + std::to_string(k) + " of '" + variable + "'");
    double* out = s.frames.data() + (k - first) * cells;
    for (std::size_t r = 0; r < ny; ++r) {
      const std::size_t j = ay.reversed ? ny - 1 - r : r;
      for (std::size_t c = 0; c < nx; ++c) {
        const std::size_t i = ax.reversed ? nx - 1 - c : c;
        const double v = raw[r * nx + c];
        const bool gone = std::isnan(v) || std::find(missing.begin(), missing.end(), v) != missing.end();
        out[j * nx + i] = gone ? std::numeric_limits<double>::quiet_NaN() : (v * a + b) * s.to_mps;
      }
    }
  }
  return s;
}

#endif

} // namespace shallows::io
