// SPDX-License-Identifier: MIT
// GeoTIFF maps at the end of a run on a grid: max_depth.tif, max_speed.tif,
// arrival_time.tif and final_depth.tif, float32, north-up, with the case's
// coordinate system and the grid's geotransform; NoData (NaN) on inactive
// cells (and where the water never arrived). Layout: docs/outputs.md.
#include <stdexcept>

#include "output_detail.hpp"

#if defined(SHALLOWS_HAVE_GDAL)
#include <cpl_conv.h>
#include <cpl_error.h>
#include <gdal.h>

#include <limits>
#endif

namespace shallows::io::detail {

#if !defined(SHALLOWS_HAVE_GDAL)

std::unique_ptr<FormatWriter> make_geotiff_writer(const Context&) {
  throw InputError(
      "output.format: \"geotiff\" requested but this build has no GDAL (rebuild with libgdal-dev installed, or "
      "choose netcdf/vtk/png)");
}

void write_geotiff_map(const Context&, const fs::path& final_path, const std::vector<double>&, bool) {
  throw InputError("cannot write " + final_path.string() + ": this build has no GDAL");
}

#else

namespace {

constexpr const char* map_names[] = {"max_depth.tif", "max_speed.tif", "arrival_time.tif", "final_depth.tif"};

class GeotiffWriter final : public FormatWriter {
 public:
  explicit GeotiffWriter(const Context& ctx) : ctx_(ctx) {
    GDALAllRegister();
    for (const char* name : map_names) remove_stale(ctx.settings.dir / name);
  }

  bool needs_derived() const override { return false; }

  // Keeps the latest depth: final_depth.tif is the last output time's.
  void write(const Frame& f) override { last_h_ = f.raw->h; }

  void finish(const Maxima& m) override {
    const std::vector<double>* fields[] = {&m.max_h, &m.max_speed, &m.arrival_time, &last_h_};
    for (std::size_t k = 0; k < 4; ++k) {
      if (fields[k]->size() != ctx_.cells()) continue;  // no frame written (nothing to map)
      write_geotiff_map(ctx_, ctx_.settings.dir / map_names[k], *fields[k], k == 3);
    }
  }

 private:
  const Context& ctx_;
  std::vector<double> last_h_;
};

}  // namespace

// Rows north first, as GIS expects; inactive -> NaN; a depth at or below
// the dry threshold is written 0 in the final depth (docs/outputs.md).
void write_geotiff_map(const Context& ctx, const fs::path& final_path, const std::vector<double>& v, bool depth) {
  GDALAllRegister();  // idempotent; an ensemble writes maps without a run's writer
  const Grid& g = ctx.grid;
  const auto nx = static_cast<std::size_t>(g.nx), ny = static_cast<std::size_t>(g.ny);
  std::vector<float> rows(nx * ny);
  for (std::size_t j = 0; j < ny; ++j) {
    for (std::size_t i = 0; i < nx; ++i) {
      const std::size_t c = j * nx + i;
      double x = v[c];
      if (ctx.inactive[c]) x = std::numeric_limits<double>::quiet_NaN();
      else if (depth && x <= ctx.h_dry) x = 0;
      rows[(ny - 1 - j) * nx + i] = static_cast<float>(x);
    }
  }
  const fs::path part = part_path(final_path);
  GDALDriverH driver = GDALGetDriverByName("GTiff");
  if (!driver) throw std::runtime_error("GDAL has no GTiff driver");
  const char* options[] = {"COMPRESS=DEFLATE", nullptr};
  CPLErrorReset();
  GDALDatasetH ds = GDALCreate(driver, part.c_str(), static_cast<int>(g.nx), static_cast<int>(g.ny), 1,
                               GDT_Float32, const_cast<char**>(options));
  if (!ds) throw std::runtime_error("cannot create " + part.string() + ": " + CPLGetLastErrorMsg());
  double gt[6] = {g.x0, g.dx, 0, g.y1(), 0, -g.dy};
  bool ok = GDALSetGeoTransform(ds, gt) == CE_None;
  if (!ctx.settings.crs_wkt.empty()) ok = ok && GDALSetProjection(ds, ctx.settings.crs_wkt.c_str()) == CE_None;
  GDALRasterBandH band = GDALGetRasterBand(ds, 1);
  ok = ok && GDALSetRasterNoDataValue(band, std::numeric_limits<double>::quiet_NaN()) == CE_None;
  ok = ok && GDALRasterIO(band, GF_Write, 0, 0, static_cast<int>(g.nx), static_cast<int>(g.ny), rows.data(),
                          static_cast<int>(g.nx), static_cast<int>(g.ny), GDT_Float32, 0, 0) == CE_None;
  GDALClose(ds);  // flushes
  if (!ok || CPLGetLastErrorType() >= CE_Failure)
    throw std::runtime_error("cannot write " + part.string() + ": " + CPLGetLastErrorMsg());
  commit_part(part, final_path);
}

std::unique_ptr<FormatWriter> make_geotiff_writer(const Context& ctx) { return std::make_unique<GeotiffWriter>(ctx); }

#endif

}  // namespace shallows::io::detail
