// SPDX-License-Identifier: MIT
// Rasters through GDAL (built only with GDAL): a GeoTIFF DEM with a CRS gives
// the grid, travels to the GeoTIFF and NetCDF outputs; rasters at another
// resolution are resampled onto a [domain]; bad rasters give clear errors.
// Fixtures are made here with GDAL itself.
#include <gtest/gtest.h>

#include <cpl_conv.h>
#include <gdal.h>
#include <ogr_srs_api.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/solver/run.hpp"

namespace fs = std::filesystem;
using shallows::io::Case;
using shallows::io::InputError;
using shallows::io::parse_case;

namespace {

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();

std::string wkt_of_epsg(int code) {
  OGRSpatialReferenceH srs = OSRNewSpatialReference(nullptr);
  OSRImportFromEPSG(srs, code);
  char* wkt = nullptr;
  OSRExportToWkt(srs, &wkt);
  std::string out(wkt);
  CPLFree(wkt);
  OSRDestroySpatialReference(srs);
  return out;
}

bool same_crs(const std::string& a, const std::string& b) {
  OGRSpatialReferenceH sa = OSRNewSpatialReference(a.c_str()), sb = OSRNewSpatialReference(b.c_str());
  const bool same = sa && sb && OSRIsSame(sa, sb);
  OSRDestroySpatialReference(sa);
  OSRDestroySpatialReference(sb);
  return same;
}

// A north-up float64 GeoTIFF; values row-major with j = 0 at the south (the solver's order).
void write_tif(const fs::path& p, int nx, int ny, double x0, double y0, double d, const std::vector<double>& v,
               int epsg, bool nodata = false) {
  GDALAllRegister();
  GDALDatasetH ds = GDALCreate(GDALGetDriverByName("GTiff"), p.c_str(), nx, ny, 1, GDT_Float64, nullptr);
  ASSERT_NE(ds, nullptr);
  double gt[6] = {x0, d, 0, y0 + ny * d, 0, -d};
  GDALSetGeoTransform(ds, gt);
  if (epsg) GDALSetProjection(ds, wkt_of_epsg(epsg).c_str());
  GDALRasterBandH band = GDALGetRasterBand(ds, 1);
  if (nodata) GDALSetRasterNoDataValue(band, -9999);
  std::vector<double> rows(v.size());
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) rows[static_cast<std::size_t>((ny - 1 - j) * nx + i)] = v[static_cast<std::size_t>(j * nx + i)];
  ASSERT_EQ(GDALRasterIO(band, GF_Write, 0, 0, nx, ny, rows.data(), nx, ny, GDT_Float64, 0, 0), CE_None);
  GDALClose(ds);
}

struct ReadBack {
  int nx = 0, ny = 0;
  double gt[6] = {};
  std::string wkt;
  std::vector<double> rows;  // as stored: north first
};

ReadBack read_back(const std::string& name) {
  ReadBack r;
  GDALDatasetH ds = GDALOpen(name.c_str(), GA_ReadOnly);
  if (!ds) return r;
  r.nx = GDALGetRasterXSize(ds);
  r.ny = GDALGetRasterYSize(ds);
  GDALGetGeoTransform(ds, r.gt);
  r.wkt = GDALGetProjectionRef(ds);
  r.rows.resize(static_cast<std::size_t>(r.nx * r.ny));
  if (GDALRasterIO(GDALGetRasterBand(ds, 1), GF_Read, 0, 0, r.nx, r.ny, r.rows.data(), r.nx, r.ny, GDT_Float64, 0,
                   0) != CE_None)
    r.rows.clear();
  GDALClose(ds);
  return r;
}

class GdalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / ("shallows_test_gdal_" + std::string(info->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Case parse(const std::string& text) const { return parse_case(text, "case.toml", dir_); }
  std::string error_of(const std::string& text) const {
    try {
      parse(text);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

const std::string kTail = "[initial]\neta = 1.0\n[time]\nend = 2.0\n";

// An 8 x 6 DEM of 10 m cells in UTM 33N, a bowl, one NoData cell at (i, j) = (0, 5) (north-west corner).
std::vector<double> bowl_dem() {
  std::vector<double> z(48);
  for (int j = 0; j < 6; ++j)
    for (int i = 0; i < 8; ++i) z[static_cast<std::size_t>(j * 8 + i)] = 0.05 * ((i - 3.5) * (i - 3.5) + (j - 2.5) * (j - 2.5));
  z[5 * 8 + 0] = -9999;
  return z;
}

TEST_F(GdalTest, GeotiffDemGivesTheGridAndItsCrsTravelsToTheOutputs) {
  const double x0 = 500000, y0 = 5000000;
  write_tif(dir_ / "dem.tif", 8, 6, x0, y0, 10, bowl_dem(), 32633, true);
  Case c = parse("[bathymetry]\nz = { file = \"dem.tif\" }\n" + kTail +
                 "[output]\nformat = [\"geotiff\", \"netcdf\"]\n");
  const auto& g = c.problem.grid;
  EXPECT_EQ(g.nx, 8);
  EXPECT_EQ(g.ny, 6);
  EXPECT_EQ(g.x0, x0);
  EXPECT_EQ(g.y0, y0);
  EXPECT_EQ(g.dx, 10.0);
  EXPECT_TRUE(std::isnan(c.problem.z[5 * 8 + 0]));  // NoData -> inactive, at the north-west corner
  EXPECT_EQ(c.problem.z[0], bowl_dem()[0]);
  EXPECT_TRUE(same_crs(c.output.crs_wkt, wkt_of_epsg(32633)));

  c.output.dir = dir_ / "out";
  shallows::RunOptions o;
  o.progress = false;
  o.quiet = true;
  shallows::run_case(c, o);
  for (const char* name : {"max_depth.tif", "max_speed.tif", "arrival_time.tif", "final_depth.tif"}) {
    const ReadBack r = read_back((c.output.dir / name).string());
    ASSERT_EQ(r.nx, 8) << name;
    ASSERT_EQ(r.ny, 6) << name;
    EXPECT_EQ(r.gt[0], x0) << name;
    EXPECT_EQ(r.gt[3], y0 + 60) << name;
    EXPECT_EQ(r.gt[1], 10.0) << name;
    EXPECT_EQ(r.gt[5], -10.0) << name;
    EXPECT_TRUE(same_crs(r.wkt, wkt_of_epsg(32633))) << name << ": " << r.wkt;
    ASSERT_EQ(r.rows.size(), 48u) << name;
    EXPECT_TRUE(std::isnan(r.rows[0])) << name;  // north-west: NoData
    EXPECT_FALSE(std::isnan(r.rows[47])) << name;
  }
  // The depth maps: water over a bowl under eta = 1 everywhere wet; final depth >= 0 and max depth >= final.
  const ReadBack max_h = read_back((c.output.dir / "max_depth.tif").string());
  const ReadBack final_h = read_back((c.output.dir / "final_depth.tif").string());
  for (std::size_t k = 1; k < 48; ++k) {
    EXPECT_GE(final_h.rows[k], 0.0);
    EXPECT_GE(max_h.rows[k] + 1e-6, final_h.rows[k]);
  }
#if defined(SHALLOWS_HAVE_NETCDF)
  // output.nc: GDAL's netCDF driver reads the CF grid_mapping.
  const ReadBack nc = read_back("NETCDF:\"" + (c.output.dir / "output.nc").string() + "\":max_h");
  ASSERT_EQ(nc.nx, 8);
  ASSERT_EQ(nc.ny, 6);
  EXPECT_NEAR(nc.gt[0], x0, 1e-6);
  EXPECT_NEAR(nc.gt[1], 10.0, 1e-9);
  EXPECT_TRUE(same_crs(nc.wkt, wkt_of_epsg(32633))) << nc.wkt;
#endif
}

TEST_F(GdalTest, AverageOfAFourTimesFinerRasterIsTheBlockMeans) {
  // 16 x 12 cells of 0.5 m onto a 4 x 3 grid of 2 m: values are integers, so
  // the block means (sums of 16 over 16) are exact in any order.
  std::vector<double> fine(16 * 12);
  for (std::size_t k = 0; k < fine.size(); ++k) fine[k] = static_cast<double>((k * 37) % 101);
  write_tif(dir_ / "fine.tif", 16, 12, 100, 200, 0.5, fine, 32633);
  const std::string domain = "[domain]\nnx = 4\nny = 3\nx = [100, 108]\ny = [200, 206]\n";
  for (const std::string method : {"", ", resample = \"average\""}) {
    const Case c = parse(domain + "[bathymetry]\nz = { file = \"fine.tif\"" + method + " }\n" + kTail);
    for (int j = 0; j < 3; ++j) {
      for (int i = 0; i < 4; ++i) {
        double sum = 0;
        for (int b = 0; b < 4; ++b)
          for (int a = 0; a < 4; ++a) sum += fine[static_cast<std::size_t>((4 * j + b) * 16 + 4 * i + a)];
        EXPECT_EQ(c.problem.z[static_cast<std::size_t>(j * 4 + i)], sum / 16) << method << " cell " << i << "," << j;
      }
    }
  }
  // Nearest: the fine cell holding the centre (its corner: the one to the north-east).
  const Case n = parse(domain + "[bathymetry]\nz = { file = \"fine.tif\", resample = \"nearest\" }\n" + kTail);
  EXPECT_EQ(n.problem.z[1 * 4 + 2], fine[(4 * 1 + 2) * 16 + 4 * 2 + 2]);
  // Bilinear: the centre lies on a corner of four fine cells: their mean.
  const Case b = parse(domain + "[bathymetry]\nz = { file = \"fine.tif\", resample = \"bilinear\" }\n" + kTail);
  const auto f = [&](int i, int j) { return fine[static_cast<std::size_t>(j * 16 + i)]; };
  EXPECT_DOUBLE_EQ(b.problem.z[1 * 4 + 2], 0.25 * (f(9, 5) + f(10, 5) + f(9, 6) + f(10, 6)));
}

TEST_F(GdalTest, AverageLeavesNodataOutAndMarksMostlyNodataCellsInactive) {
  std::vector<double> fine(8 * 4, 2.0);
  fine[0] = -9999;                             // one quarter of cell (0, 0): left out
  for (int j = 0; j < 2; ++j) fine[j * 8 + 4] = fine[j * 8 + 5] = -9999;  // half of cell (2, 0): inactive
  write_tif(dir_ / "fine.tif", 8, 4, 0, 0, 1, fine, 0, true);
  const Case c = parse("[domain]\nnx = 4\nny = 2\nx = [0, 8]\ny = [0, 4]\n[bathymetry]\nz = { file = \"fine.tif\" }\n" +
                       kTail);
  EXPECT_EQ(c.problem.z[0], 2.0);
  EXPECT_TRUE(std::isnan(c.problem.z[2]));
  EXPECT_EQ(c.problem.z[3], 2.0);
}

TEST_F(GdalTest, BadRastersGiveClearErrors) {
  const std::string dem = "[bathymetry]\nz = { file = \"dem.tif\" }\n";
  // Missing file.
  std::string e = error_of(dem + kTail);
  EXPECT_NE(e.find("bathymetry.z"), std::string::npos) << e;
  EXPECT_NE(e.find((dir_ / "dem.tif").string() + ": cannot open raster file"), std::string::npos) << e;
  // Not a raster.
  std::ofstream(dir_ / "dem.tif") << "not a tiff\n";
  e = error_of(dem + kTail);
  EXPECT_NE(e.find((dir_ / "dem.tif").string() + ": not a raster GDAL can read"), std::string::npos) << e;
  // Wrong size at the grid's resolution.
  write_tif(dir_ / "dem.tif", 5, 3, 0, 0, 1, std::vector<double>(15, 0.0), 32633);
  e = error_of("[domain]\nnx = 4\nny = 3\nx = [0, 4]\ny = [0, 3]\n" + dem + kTail);
  EXPECT_NE(e.find("ncols = 5 does not match the grid (nx = 4)"), std::string::npos) << e;
  // A raster that does not cover the domain.
  e = error_of("[domain]\nnx = 2\nny = 3\nx = [0, 8]\ny = [0, 3]\n" + dem + kTail);
  EXPECT_NE(e.find("does not cover the domain"), std::string::npos) << e;
  // CRS mismatch: both files named.
  write_tif(dir_ / "h.tif", 5, 3, 0, 0, 1, std::vector<double>(15, 1.0), 4326);
  e = error_of(dem + "[initial]\nh = { file = \"h.tif\" }\n[time]\nend = 1\n");
  EXPECT_NE(e.find("initial.h"), std::string::npos) << e;
  EXPECT_NE(e.find((dir_ / "h.tif").string() + " and " + (dir_ / "dem.tif").string() + " have different coordinate systems"),
            std::string::npos)
      << e;
  // Extent mismatch with no [domain]: both files named.
  write_tif(dir_ / "h.tif", 5, 3, 10, 0, 1, std::vector<double>(15, 1.0), 32633);
  e = error_of(dem + "[initial]\nh = { file = \"h.tif\" }\n[time]\nend = 1\n");
  EXPECT_NE(e.find((dir_ / "h.tif").string() + " and " + (dir_ / "dem.tif").string() + " have different extents"),
            std::string::npos)
      << e;
  // Unknown resampling method.
  e = error_of("[bathymetry]\nz = { file = \"dem.tif\", resample = \"cubic\" }\n" + kTail);
  EXPECT_NE(e.find("bathymetry.z.resample"), std::string::npos) << e;
}

}  // namespace
