// SPDX-License-Identifier: MIT
#include "shallows/io/raster.hpp"

#include "text_tokens.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

#if defined(SHALLOWS_HAVE_GDAL)
#include <cpl_error.h>
#include <gdal.h>
#endif

namespace shallows::io {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& file, int line, const std::string& what) {
  std::string msg = file.string();
  if (line > 0) msg += ":" + std::to_string(line);
  throw InputError(msg + ": " + what);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Splits a line into whitespace-separated tokens (views into the line).
template <class F>
void for_each_token(std::string_view line, F&& f) {
  std::size_t p = 0;
  while (p < line.size()) {
    while (p < line.size() && is_space(line[p])) ++p;
    if (p >= line.size()) break;
    std::size_t q = p;
    while (q < line.size() && !is_space(line[q])) ++q;
    f(line.substr(p, q - p));
    p = q;
  }
}

std::string_view first_token(std::string_view line) {
  std::string_view tok;
  bool got = false;
  for_each_token(line, [&](std::string_view t) {
    if (!got) tok = t;
    got = true;
  });
  return tok;
}

// A double from a whole token; false if the token is not exactly one finite number.
bool parse_double(std::string_view tok, double& out) { return detail::parse_token(tok, out) && std::isfinite(out); }

bool parse_int(std::string_view tok, index_t& out) { return detail::parse_token(tok, out); }

using detail::quoted;

bool looks_like_header(std::string_view tok) {
  if (tok.empty() || !std::isalpha(static_cast<unsigned char>(tok.front()))) return false;
  const std::string k = lower(tok);
  return k != "nan" && k != "inf" && k != "infinity";
}

struct HeaderValue {
  double value = 0;
  int line = 0;
  bool set = false;
};

} // namespace

Grid Raster::grid() const {
  Grid g;
  g.nx = ncols;
  g.ny = nrows;
  g.x0 = x0;
  g.y0 = y0;
  g.dx = cellsize;
  g.dy = cellsize;
  return g;
}

Raster read_ascii_raster(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(file, 0, std::string("cannot open raster file (") + std::strerror(errno) + ")");
  std::string text;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size > 0) {
    text.resize(static_cast<std::size_t>(size));
    in.read(text.data(), size);
    text.resize(static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) fail(file, 0, "read error");
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) fail(file, 1, "empty raster file");

  Raster r;
  r.path = file;

  // ---- header
  HeaderValue ncols, nrows, xcorner, xcenter, ycorner, ycenter, cellsize, nodata;
  std::size_t pos = 0;
  int line_no = 0;
  std::string_view line;
  bool have_line = false;
  auto next_line = [&]() -> bool {
    if (pos >= text.size()) return false;
    std::size_t e = text.find('\n', pos);
    if (e == std::string::npos) e = text.size();
    line = std::string_view(text).substr(pos, e - pos);
    pos = e + 1;
    ++line_no;
    return true;
  };

  while ((have_line = next_line())) {
    const std::string_view tok = first_token(line);
    if (tok.empty()) continue;  // blank line
    if (!looks_like_header(tok)) break;  // first data line
    const std::string key = lower(tok);
    HeaderValue* slot = nullptr;
    if (key == "ncols") slot = &ncols;
    else if (key == "nrows") slot = &nrows;
    else if (key == "xllcorner") slot = &xcorner;
    else if (key == "xllcenter") slot = &xcenter;
    else if (key == "yllcorner") slot = &ycorner;
    else if (key == "yllcenter") slot = &ycenter;
    else if (key == "cellsize") slot = &cellsize;
    else if (key == "nodata_value") slot = &nodata;
    else
      fail(file, line_no,
           "unknown header key " + quoted(tok) +
               " (expected ncols, nrows, xllcorner|xllcenter, yllcorner|yllcenter, cellsize, NODATA_value)");
    if (slot->set) fail(file, line_no, "header key " + quoted(tok) + " given twice");
    std::vector<std::string_view> rest;
    for_each_token(line, [&](std::string_view t) { rest.push_back(t); });
    if (rest.size() != 2)
      fail(file, line_no, "header key " + quoted(tok) + " needs exactly one value");
    if (key == "ncols" || key == "nrows") {
      index_t n = 0;
      if (!parse_int(rest[1], n) || n <= 0)
        fail(file, line_no, key + " must be a positive integer, found " + quoted(rest[1]));
      slot->value = static_cast<double>(n);
      (key == "ncols" ? r.ncols : r.nrows) = n;
    } else if (!parse_double(rest[1], slot->value)) {
      fail(file, line_no, key + " must be a number, found " + quoted(rest[1]));
    }
    slot->set = true;
    slot->line = line_no;
  }

  const int header_end_line = std::max(line_no, 1);
  auto require = [&](const HeaderValue& v, const char* name) {
    if (!v.set) fail(file, header_end_line, std::string("missing header key '") + name + "'");
  };
  require(ncols, "ncols");
  require(nrows, "nrows");
  if (xcorner.set && xcenter.set)
    fail(file, xcenter.line, "both xllcorner and xllcenter given");
  if (ycorner.set && ycenter.set)
    fail(file, ycenter.line, "both yllcorner and yllcenter given");
  if (!xcorner.set && !xcenter.set)
    fail(file, header_end_line, "missing header key 'xllcorner' (or 'xllcenter')");
  if (!ycorner.set && !ycenter.set)
    fail(file, header_end_line, "missing header key 'yllcorner' (or 'yllcenter')");
  require(cellsize, "cellsize");
  if (!(cellsize.value > 0)) fail(file, cellsize.line, "cellsize must be positive");

  r.ncols_line = ncols.line;
  r.nrows_line = nrows.line;
  r.cellsize = cellsize.value;
  r.x0 = xcorner.set ? xcorner.value : xcenter.value - 0.5 * r.cellsize;
  r.y0 = ycorner.set ? ycorner.value : ycenter.value - 0.5 * r.cellsize;
  if (nodata.set) r.nodata = nodata.value;

  // Bounds checked before the product is formed, so it cannot overflow.
  if (r.ncols > (index_t(1) << 31) || r.nrows > (index_t(1) << 31) || r.ncols * r.nrows > (index_t(1) << 34))
    fail(file, r.nrows_line, "raster too large (" + std::to_string(r.ncols) + " x " + std::to_string(r.nrows) + ")");
  const index_t expected = r.ncols * r.nrows;
  // A value takes at least two bytes with its separator: a header promising
  // more values than the file can hold gets no allocation of that size (it
  // fails as "too few values" once counted).
  const std::size_t data_bytes = have_line ? text.size() - static_cast<std::size_t>(line.data() - text.data()) : 0;
  const bool fits = expected <= static_cast<index_t>(data_bytes / 2 + 1);
  if (fits) r.values.assign(static_cast<std::size_t>(expected), std::numeric_limits<double>::quiet_NaN());

  // ---- values. Usually one row per line (GDAL, QGIS, ArcGIS); then a short
  // or long row is reported at its own line. Files that wrap rows over
  // several lines are accepted too, checked by their total count only.
  index_t count = 0;
  index_t first_line_count = -1;
  int first_bad_row_line = 0;  // first data line whose count != ncols
  index_t first_bad_row_count = 0;
  index_t data_lines = 0;
  int last_data_line = 0;
  int first_extra_line = 0;  // line holding value number ncols * nrows + 1
  const bool have_nodata = r.nodata.has_value();
  const double nodata_value = have_nodata ? *r.nodata : 0.0;
  const double nan = std::numeric_limits<double>::quiet_NaN();

  if (have_line) {
    do {
      index_t in_line = 0;
      for_each_token(line, [&](std::string_view tok) {
        double v = 0;
        if (!parse_double(tok, v)) fail(file, line_no, "not a finite number: " + quoted(tok));
        if (count < expected) {
          if (fits) {
            const index_t row = count / r.ncols;  // 0 = north
            const index_t col = count % r.ncols;
            const index_t j = r.nrows - 1 - row;
            r.values[static_cast<std::size_t>(j * r.ncols + col)] = (have_nodata && v == nodata_value) ? nan : v;
          }
        } else if (count == expected) {
          first_extra_line = line_no;
        }
        ++count;
        ++in_line;
      });
      if (in_line == 0) continue;
      if (first_line_count < 0) first_line_count = in_line;
      ++data_lines;
      last_data_line = line_no;
      if (in_line != r.ncols && first_bad_row_line == 0) {
        first_bad_row_line = line_no;
        first_bad_row_count = in_line;
      }
    } while (next_line());
  }

  const bool row_per_line = first_line_count == r.ncols;
  if (row_per_line && first_bad_row_line != 0)
    fail(file, first_bad_row_line,
         "expected " + std::to_string(r.ncols) + " values in this row (ncols), found " +
             std::to_string(first_bad_row_count));
  if (count > expected) {
    if (row_per_line)
      fail(file, first_extra_line,
           "too many rows: expected nrows = " + std::to_string(r.nrows) + ", found " + std::to_string(data_lines));
    fail(file, first_extra_line,
         "too many values: expected ncols * nrows = " + std::to_string(expected) + ", found " +
             std::to_string(count));
  }
  if (count < expected) {
    const int at = last_data_line > 0 ? last_data_line : header_end_line;
    if (row_per_line)
      fail(file, at,
           "too few rows: expected nrows = " + std::to_string(r.nrows) + ", found " + std::to_string(data_lines));
    fail(file, at,
         "too few values: expected ncols * nrows = " + std::to_string(expected) + " (" + std::to_string(r.nrows) +
             " rows of " + std::to_string(r.ncols) + "), found " + std::to_string(count));
  }
  return r;
}

bool have_gdal() {
#if defined(SHALLOWS_HAVE_GDAL)
  return true;
#else
  return false;
#endif
}

namespace {

bool is_ascii_grid(const fs::path& file) { return lower(file.extension().string()) == ".asc"; }

#if defined(SHALLOWS_HAVE_GDAL)
// GDAL's last error message, or a fallback.
std::string gdal_message(const char* fallback) {
  const char* m = CPLGetLastErrorMsg();
  return (m && *m) ? std::string(m) : std::string(fallback);
}

Raster read_gdal_raster(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) fail(file, 0, "cannot open raster file (No such file or directory)");
  GDALAllRegister();
  CPLPushErrorHandler(CPLQuietErrorHandler);  // errors become InputError messages, not stderr lines
  CPLErrorReset();
  GDALDatasetH ds = GDALOpenEx(file.c_str(), GDAL_OF_RASTER | GDAL_OF_READONLY, nullptr, nullptr, nullptr);
  CPLPopErrorHandler();
  if (!ds) fail(file, 0, "not a raster GDAL can read (" + gdal_message("unknown format") + ")");
  struct Close {
    GDALDatasetH ds;
    ~Close() { GDALClose(ds); }
  } close{ds};
  if (GDALGetRasterCount(ds) < 1) fail(file, 0, "the file holds no raster band");
  double gt[6];
  if (GDALGetGeoTransform(ds, gt) != CE_None)
    fail(file, 0, "no georeferencing (geotransform): the raster's position and cell size are unknown");
  if (gt[2] != 0 || gt[4] != 0) fail(file, 0, "rotated or sheared rasters are not supported");
  const double dx = gt[1], dy = std::abs(gt[5]);
  if (!(dx > 0) || !(dy > 0) || !std::isfinite(gt[0]) || !std::isfinite(gt[3]))
    fail(file, 0, "invalid geotransform (pixel size " + std::to_string(gt[1]) + " x " + std::to_string(gt[5]) + ")");
  if (std::abs(dx - dy) > 1e-9 * dx)
    fail(file, 0, "pixels are not square (" + std::to_string(dx) + " x " + std::to_string(dy) + ")");
  Raster r;
  r.path = file;
  r.ncols = GDALGetRasterXSize(ds);
  r.nrows = GDALGetRasterYSize(ds);
  r.cellsize = dx;
  r.x0 = gt[0];
  const bool north_up = gt[5] < 0;
  r.y0 = north_up ? gt[3] - static_cast<double>(r.nrows) * dy : gt[3];
  if (const char* wkt = GDALGetProjectionRef(ds)) r.crs_wkt = wkt;
  GDALRasterBandH band = GDALGetRasterBand(ds, 1);
  int has_nodata = 0;
  const double nodata = GDALGetRasterNoDataValue(band, &has_nodata);
  if (has_nodata) r.nodata = nodata;
  if (static_cast<std::int64_t>(r.ncols) * r.nrows > (std::int64_t(1) << 34))
    fail(file, 0, "raster too large (" + std::to_string(r.ncols) + " x " + std::to_string(r.nrows) + ")");
  r.values.resize(static_cast<std::size_t>(r.ncols * r.nrows));
  // Rows south first: read north-up rasters bottom-up with a negative line stride.
  const auto row_bytes = static_cast<GSpacing>(r.ncols) * static_cast<GSpacing>(sizeof(double));
  double* first = north_up ? r.values.data() + (r.nrows - 1) * r.ncols : r.values.data();
  CPLErrorReset();
  if (GDALRasterIOEx(band, GF_Read, 0, 0, static_cast<int>(r.ncols), static_cast<int>(r.nrows), first,
                     static_cast<int>(r.ncols), static_cast<int>(r.nrows), GDT_Float64, sizeof(double),
                     north_up ? -row_bytes : row_bytes, nullptr) != CE_None)
    fail(file, 0, "read error (" + gdal_message("unknown") + ")");
  for (double& v : r.values) {
    if ((has_nodata && v == nodata) || !std::isfinite(v)) v = std::numeric_limits<double>::quiet_NaN();
  }
  return r;
}
#endif

}  // namespace

Raster read_raster(const fs::path& file) {
  if (is_ascii_grid(file)) return read_ascii_raster(file);
#if defined(SHALLOWS_HAVE_GDAL)
  return read_gdal_raster(file);
#else
  fail(file, 0, "this build reads ESRI ASCII grids (.asc) only; other raster formats (GeoTIFF, ...) need a build "
                "with GDAL (libgdal-dev)");
#endif
}

void check_raster_size(const Raster& raster, index_t nx, index_t ny) {
  if (raster.ncols != nx)
    fail(raster.path, raster.ncols_line,
         "ncols = " + std::to_string(raster.ncols) + " does not match the grid (nx = " + std::to_string(nx) + ")");
  if (raster.nrows != ny)
    fail(raster.path, raster.nrows_line,
         "nrows = " + std::to_string(raster.nrows) + " does not match the grid (ny = " + std::to_string(ny) + ")");
}

} // namespace shallows::io
