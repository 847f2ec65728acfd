// SPDX-License-Identifier: MIT
#pragma once
// NetCDF rain stacks for the tests, written with the NetCDF C API as a radar
// product might hold one: rr(time, y, x) in float (or packed in shorts), the
// coordinate variables, optional units and fill value. Only in a build with
// NetCDF.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(SHALLOWS_HAVE_NETCDF)
#include <netcdf.h>
#endif

namespace shallows::test_support {

// By default the grid 5 x 3 cells of 2 m over [0, 10] x [10, 16], rows
// written north first.
struct StackFile {
  std::string variable = "rr";
  std::string time_name = "time";
  std::vector<double> times{0, 600};
  std::string time_units;  // none where empty
  std::string units;       // none where empty
  std::vector<double> x{1, 3, 5, 7, 9};
  std::vector<double> y{15, 13, 11};
  std::optional<float> fill;
  // Packed: the values stored as shorts, read as raw * scale_factor + add_offset (value() gives raw).
  std::optional<double> scale_factor, add_offset;
  // The value in the file at frame k, x index c, y index r (file order).
  std::function<float(std::size_t, std::size_t, std::size_t)> value = [](std::size_t k, std::size_t c,
                                                                         std::size_t r) {
    return static_cast<float>(10 * double(k) + double(c) + 0.25 * double(r));
  };
};

#if defined(SHALLOWS_HAVE_NETCDF)
inline void nc_or_throw(int status) {
  if (status != NC_NOERR) throw std::runtime_error(nc_strerror(status));
}

inline void write_stack(const std::filesystem::path& path, const StackFile& s) {
  int nc = 0, dt = 0, dy = 0, dx = 0, vt = 0, vy = 0, vx = 0, v = 0;
  nc_or_throw(nc_create(path.c_str(), NC_CLOBBER, &nc));
  nc_or_throw(nc_def_dim(nc, s.time_name.c_str(), s.times.size(), &dt));
  nc_or_throw(nc_def_dim(nc, "y", s.y.size(), &dy));
  nc_or_throw(nc_def_dim(nc, "x", s.x.size(), &dx));
  nc_or_throw(nc_def_var(nc, s.time_name.c_str(), NC_DOUBLE, 1, &dt, &vt));
  nc_or_throw(nc_def_var(nc, "y", NC_DOUBLE, 1, &dy, &vy));
  nc_or_throw(nc_def_var(nc, "x", NC_DOUBLE, 1, &dx, &vx));
  const int dims[3] = {dt, dy, dx};
  const bool packed = s.scale_factor || s.add_offset;
  nc_or_throw(nc_def_var(nc, s.variable.c_str(), packed ? NC_SHORT : NC_FLOAT, 3, dims, &v));
  if (!s.time_units.empty()) nc_or_throw(nc_put_att_text(nc, vt, "units", s.time_units.size(), s.time_units.c_str()));
  if (!s.units.empty()) nc_or_throw(nc_put_att_text(nc, v, "units", s.units.size(), s.units.c_str()));
  if (s.fill && packed) {
    const auto fill = static_cast<short>(*s.fill);
    nc_or_throw(nc_put_att_short(nc, v, "_FillValue", NC_SHORT, 1, &fill));
  } else if (s.fill) {
    nc_or_throw(nc_put_att_float(nc, v, "_FillValue", NC_FLOAT, 1, &*s.fill));
  }
  if (s.scale_factor) nc_or_throw(nc_put_att_double(nc, v, "scale_factor", NC_DOUBLE, 1, &*s.scale_factor));
  if (s.add_offset) nc_or_throw(nc_put_att_double(nc, v, "add_offset", NC_DOUBLE, 1, &*s.add_offset));
  nc_or_throw(nc_enddef(nc));
  nc_or_throw(nc_put_var_double(nc, vt, s.times.data()));
  nc_or_throw(nc_put_var_double(nc, vy, s.y.data()));
  nc_or_throw(nc_put_var_double(nc, vx, s.x.data()));
  std::vector<float> values;
  for (std::size_t k = 0; k < s.times.size(); ++k)
    for (std::size_t r = 0; r < s.y.size(); ++r)
      for (std::size_t c = 0; c < s.x.size(); ++c) values.push_back(s.value(k, c, r));
  nc_or_throw(nc_put_var_float(nc, v, values.data()));  // converted to shorts where packed
  nc_or_throw(nc_close(nc));
}
#endif

}  // namespace shallows::test_support
