// SPDX-License-Identifier: MIT
#pragma once
// Rasters: ESRI ASCII grids read by hand (always available), anything else
// (GeoTIFF, NetCDF, ...) through GDAL where the build has it.
//
// ESRI ASCII grids (.asc), as written by GDAL, QGIS and ArcGIS:
//
//     ncols         4
//     nrows         3
//     xllcorner     0.0      (or xllcenter: the centre of the south-west cell)
//     yllcorner     0.0      (or yllcenter)
//     cellsize      10.0
//     NODATA_value  -9999    (optional)
//     1 2 3 4                <- northernmost row first
//     ...
//
// Header keys are case-insensitive. Values are read in file order (north to
// south, west to east) and stored row-major with j = 0 at the south, like the
// solver's fields; NODATA cells become NaN. Every error throws io::InputError
// with "<file>:<line>: ..." (or "<file>: ..." where no line applies).
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "shallows/core/config.hpp"
#include "shallows/io/case.hpp"
#include "shallows/mesh/structured/grid.hpp"

namespace shallows::io {

struct Raster {
  std::filesystem::path path;  // as opened, for messages
  std::string crs_wkt;         // coordinate system (WKT); empty: none (ESRI ASCII, or none in the file)
  index_t ncols = 0;
  index_t nrows = 0;
  double x0 = 0;        // west edge (xllcorner, or xllcenter - cellsize / 2)
  double y0 = 0;        // south edge
  double cellsize = 1;
  std::optional<double> nodata;
  std::vector<double> values;  // ncols * nrows, index j * ncols + i, j = 0 south; NaN = NODATA
  int ncols_line = 0;          // header lines, for size-mismatch messages
  int nrows_line = 0;

  double at(index_t i, index_t j) const { return values[static_cast<std::size_t>(j * ncols + i)]; }
  // The grid the raster describes: one cell per value, dx = dy = cellsize.
  Grid grid() const;
};

// Reads an ESRI ASCII grid. Throws InputError: missing file, missing or
// repeated or unknown header keys, non-numbers, wrong value counts.
Raster read_ascii_raster(const std::filesystem::path& file);

// Any raster: ESRI ASCII (.asc, any case) by read_ascii_raster, anything
// else through GDAL (band 1; north-up, square pixels; NoData -> NaN). In a
// build without GDAL a file that is not .asc is an InputError naming it.
Raster read_raster(const std::filesystem::path& file);

// Whether this build reads rasters through GDAL and writes GeoTIFF.
bool have_gdal();

// Throws InputError "<file>:<line>: ncols = .. does not match ..." unless the
// raster has exactly nx columns and ny rows.
void check_raster_size(const Raster& raster, index_t nx, index_t ny);

// How a raster at another resolution than the grid is brought onto it
// (docs/case-file.md, "Rasters").
enum class Resample {
  average,   // each cell's exact area-weighted mean over the raster cells it covers
  bilinear,  // sample_raster at the cell's centre
  nearest,   // the raster cell holding the centre
};

// The raster at points (x[k], y[k]): bilinear between the centres of the
// raster cells around the point (the nearest row or column at the raster's
// edges); NaN where a raster cell with a non-zero weight is NODATA. Throws
// InputError "<file>: at cell centre (x, y) = (..) lies outside the raster ..."
std::vector<double> sample_raster(const Raster& r, std::span<const double> x, std::span<const double> y);
// The same at the centres of g's cells.
std::vector<double> sample_raster(const Raster& r, const Grid& g);

// The raster brought onto g, which it is taken to cover, by method. Average
// leaves NoData out, and gives NaN where NoData covers half the cell or more.
std::vector<double> resample_raster(const Raster& r, const Grid& g, Resample method);

// The raster onto g: its values as they are where it has g's cells (same
// resolution or same size; check_raster_size), else resampled by method.
// Throws InputError where it neither fits nor covers g.
std::vector<double> raster_on_grid(Raster&& r, const Grid& g, Resample method);

} // namespace shallows::io
