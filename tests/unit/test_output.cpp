// SPDX-License-Identifier: MIT
// Run outputs: NetCDF read back through the C API, VTK headers and data, the
// .pvd collection, gauges.csv, PNG headers, atomic renames.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "shallows/io/output.hpp"
#include "support/output_files.hpp"

#if defined(SHALLOWS_HAVE_NETCDF)
#include <netcdf.h>
#endif

namespace fs = std::filesystem;
using namespace shallows::test_support;
using shallows::Fields;
using shallows::Grid;
using shallows::Maxima;
using shallows::io::Gauge;
using shallows::io::InputError;
using shallows::io::OutputSettings;
using shallows::io::OutputWriter;

namespace {

constexpr int nx = 7, ny = 5;
constexpr double h_dry = 1e-3;
constexpr int dry_i = 2, dry_j = 1;    // h below h_dry
constexpr int off_i = 6, off_j = 4;    // inactive (NaN bed)
constexpr int late_i = 3, late_j = 3;  // never reached the arrival depth
constexpr double t0 = 0.0, t1 = 12.5;

std::size_t at(int i, int j) { return std::size_t(j) * nx + std::size_t(i); }

Grid make_grid() {
  Grid g;
  g.nx = nx;
  g.ny = ny;
  g.x0 = 100;
  g.y0 = -50;
  g.dx = 2;    // non-square cells
  g.dy = 1.5;
  return g;
}

double bed(int i, int j) { return (i == off_i && j == off_j) ? std::nan("") : 0.1 * i + 0.05 * j; }
double depth(int frame, int i, int j) {
  if (i == dry_i && j == dry_j) return 5e-4;
  return (frame + 1) * (1.0 + 0.1 * i + 0.01 * j);
}
double vel_u(int i, int) { return 0.25 * (i + 1); }
double vel_v(int, int j) { return -0.1 * j; }

std::vector<double> make_bed() {
  std::vector<double> z(nx * ny);
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) z[at(i, j)] = bed(i, j);
  return z;
}

Fields make_fields(int frame) {
  Fields f;
  f.h.resize(nx * ny);
  f.hu.resize(nx * ny);
  f.hv.resize(nx * ny);
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const double h = depth(frame, i, j);
      f.h[at(i, j)] = h;
      f.hu[at(i, j)] = h * vel_u(i, j);
      f.hv[at(i, j)] = h * vel_v(i, j);
    }
  f.hu[at(dry_i, dry_j)] = 1e-4;  // must be written as 0
  return f;
}

Maxima make_maxima() {
  Maxima m;
  const Fields f = make_fields(1);
  m.max_h = f.h;
  m.max_speed.assign(nx * ny, 0.0);
  m.arrival_time.assign(nx * ny, 0.0);
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      m.max_speed[at(i, j)] = std::hypot(vel_u(i, j), vel_v(i, j));
      m.arrival_time[at(i, j)] = 0.5 * i;
    }
  m.arrival_time[at(late_i, late_j)] = std::nan("");
  m.arrival_time[at(off_i, off_j)] = std::nan("");
  return m;
}

class OutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / ("shallows_test_output_" + std::string(info->name()));
    fs::remove_all(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  OutputSettings settings(std::vector<std::string> formats) const {
    OutputSettings s;
    s.dir = dir_;
    s.formats = std::move(formats);
    s.gauges = {{"g1", make_grid().x_center(1), make_grid().y_center(2)},
                {"dry", make_grid().x_center(dry_i) + 0.9, make_grid().y_center(dry_j) - 0.7},
                {"corner", make_grid().x1(), make_grid().y1() - 2.0}};  // east edge -> last column
    return s;
  }

  // Two frames at t0 and t1, then finish.
  void run(const OutputSettings& s) const {
    OutputWriter w(s, make_grid(), make_bed(), h_dry);
    w.write(t0, make_fields(0));
    w.write(t1, make_fields(1));
    w.finish(make_maxima());
  }

  fs::path dir_;
};

// ---------------------------------------------------------------------------
// NetCDF

#if defined(SHALLOWS_HAVE_NETCDF)

struct NcVar {
  int id = -1;
  std::vector<float> data;
};

NcVar read_float(int nc, const char* name, std::size_t count) {
  NcVar v;
  EXPECT_EQ(nc_inq_varid(nc, name, &v.id), NC_NOERR) << name;
  nc_type type{};
  nc_inq_vartype(nc, v.id, &type);
  EXPECT_EQ(type, NC_FLOAT) << name;
  v.data.resize(count);
  EXPECT_EQ(nc_get_var_float(nc, v.id, v.data.data()), NC_NOERR) << name;
  return v;
}

// output.precision = "double": every field comes back with the run's digits.
TEST_F(OutputTest, NetcdfInDoubleKeepsEveryDigit) {
  OutputSettings s = settings({"netcdf"});
  s.gauges.clear();
  s.precision = shallows::Precision::double_precision;
  run(s);
  int nc = -1;
  nc_ok(nc_open((dir_ / "output.nc").c_str(), NC_NOWRITE, &nc));
  const std::size_t n = nx * ny;
  const auto read = [&](const char* name, std::size_t count) {
    int id = -1;
    nc_ok(nc_inq_varid(nc, name, &id));
    nc_type type{};
    nc_inq_vartype(nc, id, &type);
    EXPECT_EQ(type, NC_DOUBLE) << name;
    std::vector<double> v(count);
    nc_ok(nc_get_var_double(nc, id, v.data()));
    return v;
  };
  const std::vector<double> h = read("h", 2 * n), eta = read("eta", 2 * n), u = read("u", 2 * n);
  const std::vector<double> max_h = read("max_h", n), arrival = read("arrival_time", n);
  const Fields f1 = make_fields(1);
  const Maxima m = make_maxima();
  for (int j = 0; j < ny; ++j) {
    for (int i = 0; i < nx; ++i) {
      const std::size_t k = at(i, j);
      if (i == off_i && j == off_j) {
        EXPECT_EQ(h[n + k], NC_FILL_DOUBLE);
        continue;
      }
      if (i == dry_i && j == dry_j) {
        EXPECT_EQ(h[n + k], 0.0);
        continue;
      }
      EXPECT_EQ(h[n + k], f1.h[k]) << i << ", " << j;  // bit for bit, not to float's 7 digits
      EXPECT_EQ(eta[n + k], f1.h[k] + bed(i, j));
      EXPECT_EQ(u[n + k], f1.hu[k] / f1.h[k]);
      EXPECT_EQ(max_h[k], m.max_h[k]);
      if (std::isnan(m.arrival_time[k])) {
        EXPECT_EQ(arrival[k], NC_FILL_DOUBLE);
      } else {
        EXPECT_EQ(arrival[k], m.arrival_time[k]);
      }
    }
  }
  // The depths carry more than float's digits here, so the test tells the types apart.
  EXPECT_NE(static_cast<double>(static_cast<float>(f1.h[at(1, 1)])), f1.h[at(1, 1)]);
  nc_ok(nc_close(nc));
}

TEST_F(OutputTest, NetcdfHoldsCfVariablesAndValues) {
  run(settings({"netcdf"}));
  ASSERT_TRUE(fs::exists(dir_ / "output.nc"));
  EXPECT_TRUE(part_files(dir_).empty());

  int nc = -1;
  nc_ok(nc_open((dir_ / "output.nc").c_str(), NC_NOWRITE, &nc));

  // Dimensions: time (unlimited, 2 records), y, x.
  int unlimited = -1, dim = -1;
  std::size_t len = 0;
  nc_ok(nc_inq_unlimdim(nc, &unlimited));
  nc_ok(nc_inq_dimid(nc, "time", &dim));
  EXPECT_EQ(dim, unlimited);
  nc_ok(nc_inq_dimlen(nc, dim, &len));
  EXPECT_EQ(len, 2u);
  nc_ok(nc_inq_dimid(nc, "y", &dim));
  nc_ok(nc_inq_dimlen(nc, dim, &len));
  EXPECT_EQ(len, std::size_t(ny));
  nc_ok(nc_inq_dimid(nc, "x", &dim));
  nc_ok(nc_inq_dimlen(nc, dim, &len));
  EXPECT_EQ(len, std::size_t(nx));

  EXPECT_EQ(nc_text(nc, NC_GLOBAL, "Conventions"), "CF-1.8");
  EXPECT_EQ(nc_text(nc, NC_GLOBAL, "institution"), "shallows");
  EXPECT_NE(nc_text(nc, NC_GLOBAL, "source").find(SHALLOWS_VERSION), std::string::npos);

  // Coordinates at cell centres, time.
  int var = -1;
  double x[nx], y[ny], time[2];
  nc_ok(nc_inq_varid(nc, "x", &var));
  nc_ok(nc_get_var_double(nc, var, x));
  EXPECT_EQ(nc_text(nc, var, "units"), "m");
  EXPECT_EQ(nc_text(nc, var, "axis"), "X");
  EXPECT_DOUBLE_EQ(x[0], 101.0);
  EXPECT_DOUBLE_EQ(x[6], 113.0);
  nc_ok(nc_inq_varid(nc, "y", &var));
  nc_ok(nc_get_var_double(nc, var, y));
  EXPECT_EQ(nc_text(nc, var, "axis"), "Y");
  EXPECT_DOUBLE_EQ(y[0], -49.25);
  EXPECT_DOUBLE_EQ(y[4], -43.25);
  nc_ok(nc_inq_varid(nc, "time", &var));
  nc_ok(nc_get_var_double(nc, var, time));
  EXPECT_EQ(nc_text(nc, var, "units"), "s");
  EXPECT_DOUBLE_EQ(time[0], t0);
  EXPECT_DOUBLE_EQ(time[1], t1);

  // Record variables (time, y, x).
  const std::size_t n = nx * ny, rec = n;  // offset of the second record
  const NcVar h = read_float(nc, "h", 2 * n);
  const NcVar u = read_float(nc, "u", 2 * n);
  const NcVar v = read_float(nc, "v", 2 * n);
  const NcVar hu = read_float(nc, "hu", 2 * n);
  const NcVar eta = read_float(nc, "eta", 2 * n);
  const NcVar z = read_float(nc, "z", n);
  int ndims = 0;
  nc_ok(nc_inq_varndims(nc, z.id, &ndims));
  EXPECT_EQ(ndims, 2);
  nc_ok(nc_inq_varndims(nc, h.id, &ndims));
  EXPECT_EQ(ndims, 3);
  EXPECT_EQ(nc_text(nc, h.id, "units"), "m");
  EXPECT_EQ(nc_text(nc, u.id, "units"), "m s-1");
  EXPECT_EQ(nc_text(nc, eta.id, "standard_name"), "water_surface_height_above_reference_datum");
  EXPECT_NE(nc_text(nc, h.id, "long_name"), "<missing>");
  float fill = 0;
  nc_ok(nc_get_att_float(nc, h.id, "_FillValue", &fill));
  EXPECT_EQ(fill, NC_FILL_FLOAT);

  EXPECT_FLOAT_EQ(h.data[at(3, 2)], float(depth(0, 3, 2)));
  EXPECT_FLOAT_EQ(h.data[rec + at(3, 2)], float(depth(1, 3, 2)));
  EXPECT_FLOAT_EQ(u.data[rec + at(4, 1)], float(vel_u(4, 1)));
  EXPECT_FLOAT_EQ(v.data[at(5, 3)], float(vel_v(5, 3)));
  EXPECT_FLOAT_EQ(hu.data[at(1, 0)], float(depth(0, 1, 0) * vel_u(1, 0)));
  EXPECT_FLOAT_EQ(eta.data[rec + at(5, 4)], float(depth(1, 5, 4) + bed(5, 4)));
  EXPECT_FLOAT_EQ(z.data[at(5, 4)], float(bed(5, 4)));
  // Dry cell: zeros, eta = z.
  for (std::size_t r : {std::size_t(0), rec}) {
    EXPECT_EQ(h.data[r + at(dry_i, dry_j)], 0.0f);
    EXPECT_EQ(u.data[r + at(dry_i, dry_j)], 0.0f);
    EXPECT_EQ(hu.data[r + at(dry_i, dry_j)], 0.0f);
    EXPECT_FLOAT_EQ(eta.data[r + at(dry_i, dry_j)], float(bed(dry_i, dry_j)));
  }
  // Inactive cell: fill values.
  EXPECT_EQ(h.data[rec + at(off_i, off_j)], NC_FILL_FLOAT);
  EXPECT_EQ(u.data[rec + at(off_i, off_j)], NC_FILL_FLOAT);
  EXPECT_EQ(eta.data[at(off_i, off_j)], NC_FILL_FLOAT);
  EXPECT_EQ(z.data[at(off_i, off_j)], NC_FILL_FLOAT);

  // Maxima (y, x).
  const NcVar max_h = read_float(nc, "max_h", n);
  const NcVar max_speed = read_float(nc, "max_speed", n);
  const NcVar arrival = read_float(nc, "arrival_time", n);
  EXPECT_FLOAT_EQ(max_h.data[at(3, 2)], float(depth(1, 3, 2)));
  EXPECT_EQ(max_h.data[at(dry_i, dry_j)], 0.0f);
  EXPECT_EQ(max_h.data[at(off_i, off_j)], NC_FILL_FLOAT);
  EXPECT_FLOAT_EQ(max_speed.data[at(4, 3)], float(std::hypot(vel_u(4, 3), vel_v(4, 3))));
  EXPECT_FLOAT_EQ(arrival.data[at(4, 2)], 2.0f);
  EXPECT_EQ(arrival.data[at(late_i, late_j)], NC_FILL_FLOAT);
  EXPECT_EQ(arrival.data[at(off_i, off_j)], NC_FILL_FLOAT);
  EXPECT_EQ(nc_text(nc, arrival.id, "units"), "s");

  nc_ok(nc_close(nc));
}

TEST_F(OutputTest, UnfinishedRunLeavesOnlyPartFiles) {
  {
    OutputWriter w(settings({"netcdf"}), make_grid(), make_bed(), h_dry);
    w.write(t0, make_fields(0));
    // destroyed without finish(), as when the run throws
  }
  EXPECT_FALSE(fs::exists(dir_ / "output.nc"));
  EXPECT_FALSE(fs::exists(dir_ / "gauges.csv"));
  ASSERT_TRUE(fs::exists(dir_ / "output.nc.part"));
  EXPECT_TRUE(fs::exists(dir_ / "gauges.csv.part"));

  // What was synced is readable: one record.
  int nc = -1, dim = -1;
  std::size_t len = 0;
  nc_ok(nc_open((dir_ / "output.nc.part").c_str(), NC_NOWRITE, &nc));
  nc_ok(nc_inq_dimid(nc, "time", &dim));
  nc_ok(nc_inq_dimlen(nc, dim, &len));
  EXPECT_EQ(len, 1u);
  nc_close(nc);
}

TEST_F(OutputTest, StaleOutputOfAnEarlierRunIsRemoved) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "output.nc") << "old";
  {
    OutputWriter w(settings({"netcdf"}), make_grid(), make_bed(), h_dry);
  }
  EXPECT_FALSE(fs::exists(dir_ / "output.nc"));
}

#else

TEST_F(OutputTest, NetcdfWithoutSupportFailsClearly) {
  try {
    OutputWriter w(settings({"netcdf"}), make_grid(), make_bed(), h_dry);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("this build has no NetCDF support"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_));  // failed before making anything
}

TEST_F(OutputTest, UnfinishedRunLeavesOnlyPartFiles) {
  {
    OutputWriter w(settings({"vtk"}), make_grid(), make_bed(), h_dry);
    w.write(t0, make_fields(0));
  }
  EXPECT_FALSE(fs::exists(dir_ / "gauges.csv"));
  EXPECT_TRUE(fs::exists(dir_ / "gauges.csv.part"));
}

#endif

// ---------------------------------------------------------------------------
// VTK

// Float32 value `index` of the appended array at `offset` (raw, UInt64 headers).
float vti_value(const std::string& file, std::uint64_t offset, std::size_t index) {
  const auto start = file.find('_', file.find("<AppendedData")) + 1;
  std::uint64_t bytes = 0;
  std::memcpy(&bytes, file.data() + start + offset, sizeof bytes);
  EXPECT_EQ(bytes, std::uint64_t(nx * ny) * 4);  // a scalar array
  float v = 0;
  std::memcpy(&v, file.data() + start + offset + 8 + 4 * index, sizeof v);
  return v;
}

TEST_F(OutputTest, VtkFramesAndCollection) {
  run(settings({"vtk"}));
  EXPECT_TRUE(part_files(dir_).empty());

  const std::string vti = slurp(dir_ / "vtk" / "frame_00001.vti");
  ASSERT_FALSE(vti.empty());
  EXPECT_NE(vti.find("type=\"ImageData\""), std::string::npos);
  EXPECT_EQ(attribute(vti, "header_type"), "UInt64");
  EXPECT_EQ(attribute(vti, "WholeExtent"), "0 6 0 4 0 0");
  EXPECT_EQ(attribute(vti, "Origin"), "101 -49.25 0");
  EXPECT_EQ(attribute(vti, "Spacing"), "2 1.5 1");
  EXPECT_NE(vti.find("Name=\"velocity\" NumberOfComponents=\"3\""), std::string::npos);
  EXPECT_NE(vti.find(">12.5</DataArray>"), std::string::npos);  // TimeValue
  // h is the first appended array, eta the second.
  const std::string h_tag = vti.substr(vti.find("Name=\"h\""));
  const std::string eta_tag = vti.substr(vti.find("Name=\"eta\""));
  const auto h_off = std::stoull(attribute(h_tag, "offset"));
  const auto eta_off = std::stoull(attribute(eta_tag, "offset"));
  EXPECT_FLOAT_EQ(vti_value(vti, h_off, at(3, 2)), float(depth(1, 3, 2)));
  EXPECT_EQ(vti_value(vti, h_off, at(dry_i, dry_j)), 0.0f);
  EXPECT_TRUE(std::isnan(vti_value(vti, h_off, at(off_i, off_j))));
  EXPECT_FLOAT_EQ(vti_value(vti, eta_off, at(1, 1)), float(depth(1, 1, 1) + bed(1, 1)));
  EXPECT_TRUE(fs::exists(dir_ / "vtk" / "frame_00000.vti"));
  EXPECT_TRUE(fs::exists(dir_ / "vtk" / "maxima.vti"));

  const std::string pvd = slurp(dir_ / "output.pvd");
  EXPECT_NE(pvd.find("type=\"Collection\""), std::string::npos);
  std::size_t datasets = 0;
  for (auto p = pvd.find("<DataSet"); p != std::string::npos; p = pvd.find("<DataSet", p + 1)) ++datasets;
  EXPECT_EQ(datasets, 2u);
  EXPECT_NE(pvd.find("timestep=\"0\" group=\"\" part=\"0\" file=\"vtk/frame_00000.vti\""), std::string::npos);
  EXPECT_NE(pvd.find("timestep=\"12.5\" group=\"\" part=\"0\" file=\"vtk/frame_00001.vti\""), std::string::npos);
}

// ---------------------------------------------------------------------------
// Gauges

TEST_F(OutputTest, GaugeCsvHasHeaderAndOneRowPerWrite) {
  run(settings({}));  // gauges are written whatever the formats
  EXPECT_TRUE(part_files(dir_).empty());
  const std::vector<std::string> lines = split(slurp(dir_ / "gauges.csv"), '\n');
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "time,g1_h,g1_u,g1_v,g1_eta,dry_h,dry_u,dry_v,dry_eta,corner_h,corner_u,corner_v,corner_eta");
  for (int frame = 0; frame < 2; ++frame) {
    const std::vector<std::string> cells = split(lines[std::size_t(frame) + 1], ',');
    ASSERT_EQ(cells.size(), 13u);
    std::vector<double> v;
    for (const auto& c : cells) v.push_back(std::strtod(c.c_str(), nullptr));
    const double expected[13] = {
        frame == 0 ? t0 : t1,
        depth(frame, 1, 2), vel_u(1, 2), vel_v(1, 2), depth(frame, 1, 2) + bed(1, 2),
        0.0, 0.0, 0.0, bed(dry_i, dry_j),  // dry
        depth(frame, 6, 3), vel_u(6, 3), vel_v(6, 3), depth(frame, 6, 3) + bed(6, 3),
    };
    for (int k = 0; k < 13; ++k) EXPECT_NEAR(v[k], expected[k], 1e-9 * (1 + std::abs(expected[k]))) << "column " << k;
  }
  EXPECT_EQ(split(lines[1], ',')[5], "0");  // dry depth written as exactly 0
}

TEST_F(OutputTest, GaugeOutsideTheDomainIsNamed) {
  OutputSettings s = settings({});
  s.gauges.push_back({"bridge", 99.0, -45.0});
  try {
    OutputWriter w(s, make_grid(), make_bed(), h_dry);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bridge"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_));  // failed before making anything
}

// A gauge on the north-east corner of a grid whose y0 + ny dy rounds just
// below the y1 the case gave (30 = 0 + 11 x (30 / 11) in reals): inside,
// in the last cell.
TEST_F(OutputTest, GaugeOnTheFarCornerIsInside) {
  OutputSettings s = settings({});
  s.gauges = {{"ne", 40.0, 30.0}};
  Grid g;
  g.nx = 10;
  g.ny = 11;
  g.dx = 4;
  g.dy = 30.0 / 11;
  ASSERT_LT(g.y1(), 30.0);
  std::vector<double> z(static_cast<std::size_t>(g.cells()), 0.0);
  EXPECT_NO_THROW(OutputWriter(s, g, z, h_dry));
}

// Gauges write no maxima, so a run with gauges alone does not track them
// (run_case): the writer finishes with none; a format still needs them.
TEST_F(OutputTest, GaugesAloneFinishWithoutMaxima) {
  EXPECT_FALSE(OutputWriter::writes_maxima(settings({})));
  EXPECT_TRUE(OutputWriter::writes_maxima(settings({"vtk"})));
  {
    OutputWriter w(settings({}), make_grid(), make_bed(), h_dry);
    w.write(t0, make_fields(0));
    EXPECT_NO_THROW(w.finish(Maxima{}));
  }
  EXPECT_TRUE(part_files(dir_).empty());
  EXPECT_EQ(split(slurp(dir_ / "gauges.csv"), '\n').size(), 2u);
  OutputWriter v(settings({"vtk"}), make_grid(), make_bed(), h_dry);
  v.write(t0, make_fields(0));
  EXPECT_THROW(v.finish(Maxima{}), std::invalid_argument);
}

// Gauges alone take the values of their cells only (gauge_cells(), in gauge
// order): the same rows as a writer given the whole state.
TEST_F(OutputTest, GaugesAloneTakeTheirCellsOnly) {
  EXPECT_TRUE(OutputWriter::writes_gauges_only(settings({})));
  EXPECT_FALSE(OutputWriter::writes_gauges_only(settings({"vtk"})));
  std::string whole;
  {
    OutputSettings s = settings({"vtk"});
    OutputWriter w(s, make_grid(), make_bed(), h_dry);
    EXPECT_TRUE(w.gauge_cells().empty());
    w.write(t0, make_fields(0));
    w.write(t1, make_fields(1));
    w.finish(make_maxima());
    whole = slurp(dir_ / "gauges.csv");
  }
  fs::remove_all(dir_);
  OutputWriter w(settings({}), make_grid(), make_bed(), h_dry);
  const std::vector<std::size_t> cells = w.gauge_cells();
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_EQ(cells[0], static_cast<std::size_t>(at(1, 2)));
  const auto pick = [&](const Fields& all) {
    Fields f;
    for (std::size_t c : cells) {
      f.h.push_back(all.h[c]);
      f.hu.push_back(all.hu[c]);
      f.hv.push_back(all.hv[c]);
    }
    return f;
  };
  w.write(t0, pick(make_fields(0)));
  w.write(t1, make_fields(1));  // the whole state still does
  Fields short_by_one = pick(make_fields(1));
  short_by_one.hv.pop_back();
  EXPECT_THROW(w.write(t1, short_by_one), std::invalid_argument);
  w.finish(Maxima{});
  EXPECT_EQ(slurp(dir_ / "gauges.csv"), whole);
}

TEST_F(OutputTest, BadSettingsAndSizesAreRejected) {
  EXPECT_THROW(OutputWriter(settings({"hdf4"}), make_grid(), make_bed(), h_dry), InputError);
  EXPECT_THROW(OutputWriter(settings({}), make_grid(), std::vector<double>(3), h_dry), std::invalid_argument);
  OutputWriter w(settings({}), make_grid(), make_bed(), h_dry);
  Fields f = make_fields(0);
  f.hv.pop_back();
  EXPECT_THROW(w.write(t0, f), std::invalid_argument);
  w.finish(make_maxima());
  EXPECT_THROW(w.finish(make_maxima()), std::logic_error);
}

// ---------------------------------------------------------------------------
// Passive scalars

constexpr int empty_i = 0, empty_j = 0;  // h = 0 in the scalar frames
double salt(int frame, int i, int j) { return 30.0 + 0.1 * i + 0.01 * j + frame / 3.0; }
double dye(int, int i, int) { return i < 3 ? 1.0 : 0.0; }

// make_fields with two scalars, salt and dye, and a cell without water.
Fields scalar_fields(int frame) {
  Fields f = make_fields(frame);
  f.h[at(empty_i, empty_j)] = f.hu[at(empty_i, empty_j)] = f.hv[at(empty_i, empty_j)] = 0;
  f.hc.assign(2, std::vector<double>(nx * ny));
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      f.hc[0][at(i, j)] = f.h[at(i, j)] * salt(frame, i, j);
      f.hc[1][at(i, j)] = f.h[at(i, j)] * dye(frame, i, j);
    }
  f.hc[0][at(empty_i, empty_j)] = 1e-300;  // no water: 0 whatever h c is
  return f;
}

// What each scalar's variable holds: h c / h in active cells with water (the dry ones too), 0 without.
double expected_c(const Fields& f, std::size_t s, int i, int j) {
  return f.h[at(i, j)] > 0 ? f.hc[s][at(i, j)] / f.h[at(i, j)] : 0.0;
}

class ScalarOutputTest : public OutputTest {
 protected:
  OutputSettings scalar_settings(std::vector<std::string> formats) const {
    OutputSettings s = settings(std::move(formats));
    s.scalars = {{"salt", "g kg-1"}, {"dye", "1"}};
    return s;
  }
  void run_scalars(const OutputSettings& s) const {
    OutputWriter w(s, make_grid(), make_bed(), h_dry);
    w.write(t0, scalar_fields(0));
    w.write(t1, scalar_fields(1));
    w.finish(make_maxima());
  }
};

#if defined(SHALLOWS_HAVE_NETCDF)

// Sum of h c over the active cells, in cell order, times dx dy = 3 m^2.
double expected_mass(const Fields& f, std::size_t s) {
  double sum = 0;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i)
      if (!(i == off_i && j == off_j)) sum += f.hc[s][at(i, j)];
  return sum * 3.0;
}

TEST_F(ScalarOutputTest, NetcdfHoldsConcentrationsAndMasses) {
  for (const auto precision : {shallows::Precision::single_precision, shallows::Precision::double_precision}) {
    fs::remove_all(dir_);
    OutputSettings s = scalar_settings({"netcdf"});
    s.precision = precision;
    run_scalars(s);
    const bool doubles = precision == shallows::Precision::double_precision;
    int nc = -1;
    nc_ok(nc_open((dir_ / "output.nc").c_str(), NC_NOWRITE, &nc));
    int nvars = 0;
    nc_ok(nc_inq_nvars(nc, &nvars));
    EXPECT_EQ(nvars, 21 + 4);  // a concentration and a mass per scalar beside those of a run without scalars
    const std::size_t n = nx * ny;
    const Fields f[2] = {scalar_fields(0), scalar_fields(1)};
    for (std::size_t sc = 0; sc < 2; ++sc) {
      const char* name = sc == 0 ? "salt" : "dye";
      int id = -1;
      nc_ok(nc_inq_varid(nc, name, &id));
      nc_type type{};
      nc_ok(nc_inq_vartype(nc, id, &type));
      EXPECT_EQ(type, doubles ? NC_DOUBLE : NC_FLOAT);
      int ndims = 0;
      nc_ok(nc_inq_varndims(nc, id, &ndims));
      EXPECT_EQ(ndims, 3);
      EXPECT_EQ(nc_text(nc, id, "units"), sc == 0 ? "g kg-1" : "1");
      EXPECT_EQ(nc_text(nc, id, "long_name"), std::string("concentration of ") + name);
      std::vector<double> c(2 * n);
      nc_ok(nc_get_var_double(nc, id, c.data()));
      for (int r = 0; r < 2; ++r)
        for (int j = 0; j < ny; ++j)
          for (int i = 0; i < nx; ++i) {
            const double got = c[std::size_t(r) * n + at(i, j)];
            if (i == off_i && j == off_j) {
              EXPECT_EQ(got, doubles ? NC_FILL_DOUBLE : double(NC_FILL_FLOAT));
              continue;
            }
            const double want = expected_c(f[r], sc, i, j);
            EXPECT_EQ(got, doubles ? want : double(float(want))) << name << " " << i << ", " << j;
          }
      EXPECT_EQ(c[at(empty_i, empty_j)], 0.0);
      EXPECT_NE(c[at(dry_i, dry_j)], 0.0);  // not written dry

      const std::string mass_name = std::string(name) + "_mass";
      nc_ok(nc_inq_varid(nc, mass_name.c_str(), &id));
      nc_ok(nc_inq_vartype(nc, id, &type));
      EXPECT_EQ(type, NC_DOUBLE);
      EXPECT_EQ(nc_text(nc, id, "units"), sc == 0 ? "g kg-1 m3" : "m3");
      double mass[2];
      nc_ok(nc_get_var_double(nc, id, mass));
      for (int r = 0; r < 2; ++r) EXPECT_EQ(mass[r], expected_mass(f[r], sc)) << mass_name;
    }
    nc_ok(nc_close(nc));
  }
}

// A restart reopens output.nc with its scalar variables and goes on from the checkpoint's frame.
TEST_F(ScalarOutputTest, RestartGoesOnWithTheScalarVariables) {
  const OutputSettings s = scalar_settings({"netcdf"});
  run_scalars(s);
  {
    OutputWriter w(s, make_grid(), make_bed(), h_dry, shallows::io::OutputResume{{t0}});
    w.write(t1, scalar_fields(2));  // another state than the first run's at t1
    w.finish(make_maxima());
  }
  int nc = -1, id = -1;
  nc_ok(nc_open((dir_ / "output.nc").c_str(), NC_NOWRITE, &nc));
  const Fields f = scalar_fields(2);
  const std::size_t n = nx * ny;
  std::vector<float> c(2 * n);
  nc_ok(nc_inq_varid(nc, "salt", &id));
  nc_ok(nc_get_var_float(nc, id, c.data()));
  EXPECT_EQ(c[n + at(3, 2)], float(expected_c(f, 0, 3, 2)));
  EXPECT_EQ(c[at(3, 2)], float(expected_c(scalar_fields(0), 0, 3, 2)));
  double mass[2];
  nc_ok(nc_inq_varid(nc, "dye_mass", &id));
  nc_ok(nc_get_var_double(nc, id, mass));
  EXPECT_EQ(mass[1], expected_mass(f, 1));
  nc_ok(nc_close(nc));
  const std::vector<std::string> lines = split(slurp(dir_ / "gauges.csv"), '\n');
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(split(lines[2], ',').size(), 19u);
}

TEST_F(ScalarOutputTest, NetcdfWithoutScalarsHasNoScalarVariables) {
  run(settings({"netcdf"}));
  int nc = -1, nvars = 0;
  nc_ok(nc_open((dir_ / "output.nc").c_str(), NC_NOWRITE, &nc));
  nc_ok(nc_inq_nvars(nc, &nvars));
  EXPECT_EQ(nvars, 21);  // time, y, x, 6 fields, 7 accounts, z, max_h, max_speed, arrival_threshold, arrival_time
  nc_ok(nc_close(nc));
}

#endif

TEST_F(ScalarOutputTest, VtkFramesHoldEachConcentration) {
  run_scalars(scalar_settings({"vtk"}));
  const std::string vti = slurp(dir_ / "vtk" / "frame_00001.vti");
  const Fields f = scalar_fields(1);
  for (std::size_t sc = 0; sc < 2; ++sc) {
    const std::string tag = vti.substr(vti.find(sc == 0 ? "Name=\"salt\"" : "Name=\"dye\""));
    ASSERT_NE(tag.find("Float32"), std::string::npos);
    const auto offset = std::stoull(attribute(tag, "offset"));
    EXPECT_FLOAT_EQ(vti_value(vti, offset, at(3, 2)), float(expected_c(f, sc, 3, 2)));
    EXPECT_EQ(vti_value(vti, offset, at(empty_i, empty_j)), 0.0f);
    EXPECT_TRUE(std::isnan(vti_value(vti, offset, at(off_i, off_j))));
  }
  // h stays the active scalar array, the velocity the active vector.
  EXPECT_EQ(attribute(vti, "Scalars"), "h");
  EXPECT_EQ(attribute(vti, "Vectors"), "velocity");
}

TEST_F(ScalarOutputTest, GaugeCsvHasAColumnPerScalar) {
  run_scalars(scalar_settings({}));
  const std::vector<std::string> lines = split(slurp(dir_ / "gauges.csv"), '\n');
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "time,g1_h,g1_u,g1_v,g1_eta,g1_salt,g1_dye,dry_h,dry_u,dry_v,dry_eta,dry_salt,dry_dye,"
            "corner_h,corner_u,corner_v,corner_eta,corner_salt,corner_dye");
  const Fields f = scalar_fields(1);
  const std::vector<std::string> cells = split(lines[2], ',');
  ASSERT_EQ(cells.size(), 19u);
  const double expected[6] = {expected_c(f, 0, 1, 2),         expected_c(f, 1, 1, 2),
                              expected_c(f, 0, dry_i, dry_j), expected_c(f, 1, dry_i, dry_j),
                              expected_c(f, 0, 6, 3),         expected_c(f, 1, 6, 3)};
  const std::size_t columns[6] = {5, 6, 11, 12, 17, 18};
  for (int k = 0; k < 6; ++k)
    EXPECT_NEAR(std::strtod(cells[columns[k]].c_str(), nullptr), expected[k], 1e-9 * (1 + expected[k])) << k;
}

TEST_F(ScalarOutputTest, ScalarsMustMatchTheOutputs) {
  OutputWriter w(scalar_settings({}), make_grid(), make_bed(), h_dry);
  EXPECT_THROW(w.write(t0, make_fields(0)), std::invalid_argument);  // no h c for the two scalars
  Fields f = scalar_fields(0);
  f.hc[1].pop_back();
  EXPECT_THROW(w.write(t0, f), std::invalid_argument);
  OutputWriter plain(settings({}), make_grid(), make_bed(), h_dry);
  EXPECT_THROW(plain.write(t0, scalar_fields(0)), std::invalid_argument);
}

// ---------------------------------------------------------------------------
// PNG

#if defined(SHALLOWS_HAVE_PNG)

struct PngSize {
  std::uint32_t width = 0, height = 0;
};

PngSize png_size(const fs::path& p) {
  const std::string s = slurp(p);
  EXPECT_GE(s.size(), 24u) << p;
  if (s.size() < 24) return {};
  EXPECT_EQ(s.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << p;
  EXPECT_EQ(s.substr(12, 4), "IHDR") << p;
  auto be32 = [&](std::size_t o) {
    return std::uint32_t(std::uint8_t(s[o])) << 24 | std::uint32_t(std::uint8_t(s[o + 1])) << 16 |
           std::uint32_t(std::uint8_t(s[o + 2])) << 8 | std::uint32_t(std::uint8_t(s[o + 3]));
  };
  return {be32(16), be32(20)};
}

TEST_F(OutputTest, PngMapsHaveTheDocumentedSize) {
  run(settings({"png"}));
  EXPECT_TRUE(part_files(dir_).empty());
  // docs/outputs.md: the domain is 14 m x 7.5 m, so the map is 800 x round(800 * 7.5 / 14) = 429;
  // the image adds 184 px of width (margins, colour bar) and 52 px of height (title, margins).
  for (const char* name : {"depth_00000.png", "depth_00001.png", "max_depth.png"}) {
    const PngSize size = png_size(dir_ / "png" / name);
    EXPECT_EQ(size.width, 800u + 184u) << name;
    EXPECT_EQ(size.height, 429u + 52u) << name;
  }
  // A tall, thin domain: the map is 800 px high, the colour bar fits beside it.
  Grid tall = make_grid();
  tall.dx = 0.1;
  fs::remove_all(dir_);
  OutputSettings s = settings({"png"});
  s.gauges.clear();
  OutputWriter w(s, tall, make_bed(), h_dry);
  w.write(t0, make_fields(0));
  const PngSize size = png_size(dir_ / "png" / "depth_00000.png");
  EXPECT_EQ(size.width, 75u + 184u);  // 0.7 m x 7.5 m: map 800 * 0.7 / 7.5 = 74.7 -> 75 px wide
  EXPECT_EQ(size.height, 800u + 52u);
}

#else

TEST_F(OutputTest, PngWithoutSupportFailsClearly) {
  try {
    OutputWriter w(settings({"png"}), make_grid(), make_bed(), h_dry);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("this build has no PNG support"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_));  // failed before making anything
}

#endif

}  // namespace
