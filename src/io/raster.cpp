// SPDX-License-Identifier: MIT
#include "shallows/io/raster.hpp"

#include "text_tokens.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#if defined(SHALLOWS_HAVE_GDAL)
#include <cpl_error.h>
#include <gdal.h>
#endif

namespace shallows::io {
using detail::format_number;

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

namespace {

// point(k): the k-th point's (x, y).
template <class Point>
std::vector<double> sample_at(const Raster& r, std::size_t n, Point&& point) {
  std::vector<double> out(n);
  const double x1 = r.x0 + static_cast<double>(r.ncols) * r.cellsize;
  const double y1 = r.y0 + static_cast<double>(r.nrows) * r.cellsize;
  for (std::size_t k = 0; k < out.size(); ++k) {
    const auto [x, y] = point(k);
    if (x < r.x0 || x > x1 || y < r.y0 || y > y1)
      fail(r.path, 0,
           "at cell centre (x, y) = (" + format_number(x) + ", " + format_number(y) + ") lies outside the raster [" +
               format_number(r.x0) + ", " + format_number(x1) + "] x [" + format_number(r.y0) + ", " + format_number(y1) + "]");
    const auto axis = [&r](double v, double lo, index_t cells) {
      const double fv = std::clamp((v - lo) / r.cellsize - 0.5, 0.0, static_cast<double>(cells - 1));
      const auto i0 = std::min(static_cast<index_t>(fv), cells - 1);
      return std::pair{i0, fv - static_cast<double>(i0)};
    };
    const auto [i0, wx] = axis(x, r.x0, r.ncols);
    const auto [j0, wy] = axis(y, r.y0, r.nrows);
    const index_t i1 = std::min(i0 + 1, r.ncols - 1), j1 = std::min(j0 + 1, r.nrows - 1);
    double v = 0;
    for (const auto& [i, j, w] : {std::tuple{i0, j0, (1 - wx) * (1 - wy)}, std::tuple{i1, j0, wx * (1 - wy)},
                                  std::tuple{i0, j1, (1 - wx) * wy}, std::tuple{i1, j1, wx * wy}}) {
      if (w > 0) v += w * r.at(i, j);
    }
    out[k] = v;
  }
  return out;
}

}  // namespace

std::vector<double> sample_raster(const Raster& r, std::span<const double> x, std::span<const double> y) {
  return sample_at(r, x.size(), [&](std::size_t k) { return std::pair{x[k], y[k]}; });
}

std::vector<double> sample_raster(const Raster& r, const Grid& g) {
  return sample_at(r, static_cast<std::size_t>(g.cells()), [&](std::size_t k) {
    return std::pair{g.x_center(static_cast<index_t>(k) % g.nx), g.y_center(static_cast<index_t>(k) / g.nx)};
  });
}

std::vector<double> resample_raster(const Raster& r, const Grid& g, Resample method) {
  if (method == Resample::bilinear) return sample_raster(r, g);
  std::vector<double> out(static_cast<std::size_t>(g.cells()));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Cell edges in raster-cell units: exact integers when the resolutions divide.
  const auto fx = [&](double x) { return (x - r.x0) / r.cellsize; };
  const auto fy = [&](double y) { return (y - r.y0) / r.cellsize; };
  for (index_t j = 0; j < g.ny; ++j) {
    for (index_t i = 0; i < g.nx; ++i) {
      double& v = out[static_cast<std::size_t>(j * g.nx + i)];
      if (method == Resample::nearest) {
        const auto ci = std::clamp(static_cast<index_t>(std::floor(fx(g.x_center(i)))), index_t(0), r.ncols - 1);
        const auto cj = std::clamp(static_cast<index_t>(std::floor(fy(g.y_center(j)))), index_t(0), r.nrows - 1);
        v = r.at(ci, cj);
        continue;
      }
      const double a0 = fx(g.x0 + static_cast<double>(i) * g.dx), a1 = fx(g.x0 + static_cast<double>(i + 1) * g.dx);
      const double b0 = fy(g.y0 + static_cast<double>(j) * g.dy), b1 = fy(g.y0 + static_cast<double>(j + 1) * g.dy);
      const auto lo = [](double a, index_t n) { return std::clamp(static_cast<index_t>(std::floor(a)), index_t(0), n - 1); };
      double sum = 0, weight = 0, missing = 0;
      for (index_t cj = lo(b0, r.nrows); cj <= lo(b1, r.nrows); ++cj) {
        const double wy = std::min(b1, static_cast<double>(cj + 1)) - std::max(b0, static_cast<double>(cj));
        if (!(wy > 0)) continue;
        for (index_t ci = lo(a0, r.ncols); ci <= lo(a1, r.ncols); ++ci) {
          const double wx = std::min(a1, static_cast<double>(ci + 1)) - std::max(a0, static_cast<double>(ci));
          if (!(wx > 0)) continue;
          const double value = r.at(ci, cj);
          if (std::isnan(value)) {
            missing += wx * wy;
          } else {
            sum += wx * wy * value;
            weight += wx * wy;
          }
        }
      }
      v = (weight > missing) ? sum / weight : nan;
    }
  }
  return out;
}

std::vector<double> raster_on_grid(Raster&& r, const Grid& g, Resample method) {
  const Grid rg = r.grid();
  const auto differs = [](double a, double b, double scale) { return std::abs(a - b) > 1e-9 * scale; };
  if (!differs(rg.dx, g.dx, g.dx) || (rg.nx == g.nx && rg.ny == g.ny)) {
    check_raster_size(r, g.nx, g.ny);
    return std::move(r.values);
  }
  const double tol = 1e-9 * rg.dx;
  if (g.x0 < rg.x0 - tol || g.x1() > rg.x1() + tol || g.y0 < rg.y0 - tol || g.y1() > rg.y1() + tol)
    fail(r.path, 0,
         "the raster [" + format_number(rg.x0) + ", " + format_number(rg.x1()) + "] x [" + format_number(rg.y0) + ", " +
             format_number(rg.y1()) + "] does not cover the domain [" + format_number(g.x0) + ", " + format_number(g.x1()) +
             "] x [" + format_number(g.y0) + ", " + format_number(g.y1()) + "]");
  return resample_raster(r, g, method);
}

} // namespace shallows::io
