// SPDX-License-Identifier: MIT
// png/depth_NNNNN.png and png/max_depth.png: water depth over a hillshade of
// the bed, with a title and a labelled colour bar. Layout: docs/outputs.md.
// A grid maps blocks of cells to pixels; a mesh is rasterised once (the cell
// under each pixel centre) and shares the colours, layout and encoding.
#include <stdexcept>

#include "output_detail.hpp"

#if defined(SHALLOWS_HAVE_PNG)
#include <png.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <regex>
#include <system_error>

#include "output_png.hpp"
#endif

namespace shallows::io::detail {

#if !defined(SHALLOWS_HAVE_PNG)

std::unique_ptr<FormatWriter> make_png_writer(const Context&) {
  throw InputError(
      "output.format: \"png\" requested but this build has no PNG support "
      "(rebuild with libpng-dev installed, or choose netcdf/vtk)");
}

void write_png_map(const Context&, const fs::path& final_path, const std::vector<double>&, const std::string&,
                   const std::string&) {
  throw InputError("cannot write " + final_path.string() + ": this build has no PNG support");
}

#else

namespace {

// ---------------------------------------------------------------------------
// 5x7 bitmap font (plus 2 descender rows for g, j, p, q, y, ','), drawn in a
// 6-pixel-wide cell. Rows top to bottom, '#' = ink.
struct Glyph {
  char c;
  const char* rows;                 // 7 rows of 5: 35 characters
  const char* descender = nullptr;  // 2 rows of 5 below the baseline
};

constexpr Glyph font[] = {
    {'0', ".###." "#...#" "#..##" "#.#.#" "##..#" "#...#" ".###."},
    {'1', "..#.." ".##.." "..#.." "..#.." "..#.." "..#.." ".###."},
    {'2', ".###." "#...#" "....#" "...#." "..#.." ".#..." "#####"},
    {'3', "#####" "...#." "..#.." "...#." "....#" "#...#" ".###."},
    {'4', "...#." "..##." ".#.#." "#..#." "#####" "...#." "...#."},
    {'5', "#####" "#...." "####." "....#" "....#" "#...#" ".###."},
    {'6', "..##." ".#..." "#...." "####." "#...#" "#...#" ".###."},
    {'7', "#####" "....#" "...#." "..#.." ".#..." ".#..." ".#..."},
    {'8', ".###." "#...#" "#...#" ".###." "#...#" "#...#" ".###."},
    {'9', ".###." "#...#" "#...#" ".####" "....#" "...#." ".##.."},
    {'a', "....." "....." ".###." "....#" ".####" "#...#" ".####"},
    {'b', "#...." "#...." "#.##." "##..#" "#...#" "#...#" "####."},
    {'c', "....." "....." ".###." "#...." "#...." "#...#" ".###."},
    {'d', "....#" "....#" ".##.#" "#..##" "#...#" "#...#" ".####"},
    {'e', "....." "....." ".###." "#...#" "#####" "#...." ".###."},
    {'f', "..##." ".#..#" ".#..." "###.." ".#..." ".#..." ".#..."},
    {'g', "....." "....." ".####" "#...#" "#...#" "#...#" ".####", "....#" ".###."},
    {'h', "#...." "#...." "#.##." "##..#" "#...#" "#...#" "#...#"},
    {'i', "..#.." "....." ".##.." "..#.." "..#.." "..#.." ".###."},
    {'j', "...#." "....." "..##." "...#." "...#." "...#." "...#.", "#..#." ".##.."},
    {'k', "#...." "#...." "#..#." "#.#.." "##..." "#.#.." "#..#."},
    {'l', ".##.." "..#.." "..#.." "..#.." "..#.." "..#.." ".###."},
    {'m', "....." "....." "##.#." "#.#.#" "#.#.#" "#...#" "#...#"},
    {'n', "....." "....." "#.##." "##..#" "#...#" "#...#" "#...#"},
    {'o', "....." "....." ".###." "#...#" "#...#" "#...#" ".###."},
    {'p', "....." "....." "####." "#...#" "#...#" "#...#" "####.", "#...." "#...."},
    {'q', "....." "....." ".####" "#...#" "#...#" "#...#" ".####", "....#" "....#"},
    {'r', "....." "....." "#.##." "##..#" "#...." "#...." "#...."},
    {'s', "....." "....." ".###." "#...." ".###." "....#" "####."},
    {'t', ".#..." ".#..." "###.." ".#..." ".#..." ".#..#" "..##."},
    {'u', "....." "....." "#...#" "#...#" "#...#" "#..##" ".##.#"},
    {'v', "....." "....." "#...#" "#...#" "#...#" ".#.#." "..#.."},
    {'w', "....." "....." "#...#" "#...#" "#.#.#" "#.#.#" ".#.#."},
    {'x', "....." "....." "#...#" ".#.#." "..#.." ".#.#." "#...#"},
    {'y', "....." "....." "#...#" "#...#" "#...#" "#...#" ".####", "....#" ".###."},
    {'z', "....." "....." "#####" "...#." "..#.." ".#..." "#####"},
    {'.', "....." "....." "....." "....." "....." ".##.." ".##.."},
    {',', "....." "....." "....." "....." "....." ".##.." ".##..", "..#.." ".#..."},
    {'=', "....." "....." "#####" "....." "#####" "....." "....."},
    {'(', "...#." "..#.." ".#..." ".#..." ".#..." "..#.." "...#."},
    {')', ".#..." "..#.." "...#." "...#." "...#." "..#.." ".#..."},
    {'-', "....." "....." "....." "#####" "....." "....." "....."},
    {'+', "....." "..#.." "..#.." "#####" "..#.." "..#.." "....."},
    {':', "....." ".##.." ".##.." "....." ".##.." ".##.." "....."},
    {'/', "....." "....#" "...#." "..#.." ".#..." "#...." "....."},
    {'_', "....." "....." "....." "....." "....." "....." "#####"},
    {'%', "##..." "##..#" "...#." "..#.." ".#..." "#..##" "...##"},
    {'?', ".###." "#...#" "....#" "...#." "..#.." "....." "..#.."},
};

const Glyph* find_glyph(char c) {
  if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');  // lower case only
  for (const Glyph& g : font)
    if (g.c == c) return &g;
  return c == ' ' ? nullptr : find_glyph('?');
}

// ---------------------------------------------------------------------------
// Canvas

struct Rgb {
  std::uint8_t r, g, b;
};

constexpr Rgb white{255, 255, 255};
constexpr Rgb ink{25, 25, 25};
constexpr Rgb frame_grey{90, 90, 90};

struct Canvas {
  int w = 0, h = 0;
  std::vector<std::uint8_t> px;  // RGB, top row first

  Canvas(int width, int height) : w(width), h(height), px(std::size_t(width) * std::size_t(height) * 3, 255) {}

  void set(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= w || y >= h) return;
    std::uint8_t* p = &px[(std::size_t(y) * std::size_t(w) + std::size_t(x)) * 3];
    p[0] = c.r;
    p[1] = c.g;
    p[2] = c.b;
  }
  void fill(int x, int y, int width, int height, Rgb c) {
    for (int yy = y; yy < y + height; ++yy)
      for (int xx = x; xx < x + width; ++xx) set(xx, yy, c);
  }
  void outline(int x, int y, int width, int height, Rgb c) {
    fill(x, y, width, 1, c);
    fill(x, y + height - 1, width, 1, c);
    fill(x, y, 1, height, c);
    fill(x + width - 1, y, 1, height, c);
  }
  // Text with its top-left corner at (x, y); 6 * scale pixels per character.
  void text(int x, int y, std::string_view s, Rgb c, int scale = text_scale) {
    for (char ch : s) {
      if (const Glyph* g = find_glyph(ch)) {
        for (int r = 0; r < 9; ++r)
          for (int col = 0; col < 5; ++col) {
            const char* rows = r < 7 ? g->rows : g->descender;
            if (rows && rows[(r % 7) * 5 + col] == '#') fill(x + col * scale, y + r * scale, scale, scale, c);
          }
      }
      x += 6 * scale;
    }
  }
};

// ---------------------------------------------------------------------------
// Colours

// Sequential blues (ColorBrewer "Blues" 3..9): lightness falls monotonically
// from shallow to deep; interpolated linearly in sRGB.
constexpr std::array<Rgb, 7> depth_ramp{{
    {198, 219, 239},
    {158, 202, 225},
    {107, 174, 214},
    {66, 146, 198},
    {33, 113, 181},
    {8, 81, 156},
    {8, 48, 107},
}};

Rgb depth_colour(double t) {
  t = std::clamp(t, 0.0, 1.0) * double(depth_ramp.size() - 1);
  const auto i = std::min(static_cast<std::size_t>(t), depth_ramp.size() - 2);
  const double f = t - double(i);
  auto mix = [f](std::uint8_t a, std::uint8_t b) {
    return static_cast<std::uint8_t>(std::lround(double(a) + f * (double(b) - double(a))));
  };
  const Rgb a = depth_ramp[i], b = depth_ramp[i + 1];
  return {mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)};
}

// Bed gradient per cell of a grid: central differences, one-sided where the
// neighbour is missing or inactive.
void grid_slopes(const Context& ctx, std::vector<float>& gx, std::vector<float>& gy) {
  const Grid& g = ctx.grid;
  const index_t nx = g.nx, ny = g.ny;
  const double nan = std::nan("");
  auto zat = [&](index_t i, index_t j) { return ctx.z[static_cast<std::size_t>(j * nx + i)]; };
  auto slope = [](double zm, double z0, double zp, double d) {
    const bool m = !std::isnan(zm), p = !std::isnan(zp);
    if (m && p) return (zp - zm) / (2 * d);
    if (p) return (zp - z0) / d;
    if (m) return (z0 - zm) / d;
    return 0.0;
  };
#pragma omp parallel for schedule(static)
  for (index_t j = 0; j < ny; ++j)
    for (index_t i = 0; i < nx; ++i) {
      const double z0 = zat(i, j);
      if (std::isnan(z0)) continue;
      const auto k = static_cast<std::size_t>(j * nx + i);
      gx[k] = static_cast<float>(slope(i > 0 ? zat(i - 1, j) : nan, z0, i + 1 < nx ? zat(i + 1, j) : nan, g.dx));
      gy[k] = static_cast<float>(slope(j > 0 ? zat(i, j - 1) : nan, z0, j + 1 < ny ? zat(i, j + 1) : nan, g.dy));
    }
}

// Bed gradient per cell of a mesh: least-squares plane through the centroids
// of the cell and its active neighbours; flat where they do not fix one (fewer
// than two neighbours, or a mesh given without cell_edges).
void mesh_slopes(const Context& ctx, std::vector<float>& gx, std::vector<float>& gy) {
  const UnstructuredMesh& m = *ctx.mesh;
  const auto n = static_cast<std::ptrdiff_t>(ctx.cells());
  if (m.cell_edges.size() != 4 * ctx.cells() || m.edge_left.size() != m.edge_right.size()) return;
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t ci = 0; ci < n; ++ci) {
    const auto c = static_cast<std::size_t>(ci);
    const double z0 = ctx.z[c];
    if (std::isnan(z0)) continue;
    double sxx = 0, sxy = 0, syy = 0, sxz = 0, syz = 0;
    for (std::size_t s = 0; s < 4; ++s) {
      const mesh_index e = m.cell_edges[4 * c + s];
      if (e < 0 || static_cast<std::size_t>(e) >= m.edge_left.size()) continue;
      const mesh_index l = m.edge_left[static_cast<std::size_t>(e)], r = m.edge_right[static_cast<std::size_t>(e)];
      const mesh_index other = static_cast<std::size_t>(l) == c ? r : l;
      if (other < 0 || static_cast<std::size_t>(other) == c) continue;  // boundary
      const auto o = static_cast<std::size_t>(other);
      const double dz = ctx.z[o] - z0;
      if (std::isnan(dz)) continue;
      const double dx = m.cell_x[o] - m.cell_x[c], dy = m.cell_y[o] - m.cell_y[c];
      sxx += dx * dx;
      sxy += dx * dy;
      syy += dy * dy;
      sxz += dx * dz;
      syz += dy * dz;
    }
    const double det = sxx * syy - sxy * sxy;
    if (!(det > 1e-12 * (sxx + syy) * (sxx + syy))) continue;
    gx[c] = static_cast<float>((syy * sxz - sxy * syz) / det);
    gy[c] = static_cast<float>((sxx * syz - sxy * sxz) / det);
  }
}

// Grey level of the bed lit from the north-west, 45 degrees above the horizon.
// Flood plains are nearly flat, so relief is exaggerated (1x to 10x) until the
// 95th percentile of the slope reaches 0.5 (about 27 degrees).
std::vector<std::uint8_t> hillshade(const Context& ctx) {
  std::vector<float> gx(ctx.cells(), 0.0f), gy(ctx.cells(), 0.0f);
  if (ctx.mesh) mesh_slopes(ctx, gx, gy);
  else grid_slopes(ctx, gx, gy);

  std::vector<float> mag;
  for (std::size_t k = 0; k < gx.size(); ++k)
    if (!ctx.inactive[k]) mag.push_back(std::hypot(gx[k], gy[k]));
  double exaggeration = 1;
  if (!mag.empty()) {
    const auto p95 = mag.begin() + static_cast<std::ptrdiff_t>(0.95 * double(mag.size() - 1));
    std::nth_element(mag.begin(), p95, mag.end());
    if (*p95 > 0 && std::isfinite(*p95)) exaggeration = std::clamp(0.5 / double(*p95), 1.0, 10.0);
  }

  const double s = std::sqrt(0.5);
  const double lx = -s * s, ly = s * s, lz = s;  // unit vector towards the light
  std::vector<std::uint8_t> shade(ctx.cells(), 255);
#pragma omp parallel for schedule(static)
  for (std::size_t k = 0; k < shade.size(); ++k) {
    if (ctx.inactive[k]) continue;
    const double ex = exaggeration * gx[k], ey = exaggeration * gy[k];
    const double lit = std::max(0.0, (-ex * lx - ey * ly + lz) / std::sqrt(ex * ex + ey * ey + 1));
    shade[k] = static_cast<std::uint8_t>(std::lround(255 * (0.25 + 0.65 * lit)));
  }
  return shade;
}

// The mesh cell under the centre of each map pixel, rows from the north, -1
// where there is none. A centre on a shared edge goes to the lower cell index.
std::vector<mesh_index> pixel_cells(const UnstructuredMesh& m, const Box& box, int mw, int mh) {
  std::vector<mesh_index> cell(std::size_t(mw) * std::size_t(mh), -1);
  const double dx = (box.x1 - box.x0) / mw, dy = (box.y1 - box.y0) / mh;
  const auto cells = static_cast<std::ptrdiff_t>(m.cells());
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::ptrdiff_t ci = 0; ci < cells; ++ci) {
    const auto c = static_cast<std::size_t>(ci);
    const auto index = static_cast<mesh_index>(c);
    const auto [x0, y0, x1, y1] = cell_box(m, c);
    // Pixel columns (rows from the south) whose centres lie in the cell's bounding box.
    constexpr double slack = 1e-9;
    const int i0 = std::max(0, static_cast<int>(std::ceil((x0 - box.x0) / dx - 0.5 - slack)));
    const int i1 = std::min(mw - 1, static_cast<int>(std::floor((x1 - box.x0) / dx - 0.5 + slack)));
    const int j0 = std::max(0, static_cast<int>(std::ceil((y0 - box.y0) / dy - 0.5 - slack)));
    const int j1 = std::min(mh - 1, static_cast<int>(std::floor((y1 - box.y0) / dy - 0.5 + slack)));
    for (int j = j0; j <= j1; ++j) {
      const double y = box.y0 + (j + 0.5) * dy;
      for (int i = i0; i <= i1; ++i) {
        if (!cell_contains(m, c, box.x0 + (i + 0.5) * dx, y)) continue;
        // Keep the lowest index whatever order the threads come in.
        std::atomic_ref<mesh_index> p(cell[std::size_t(mh - 1 - j) * std::size_t(mw) + std::size_t(i)]);
        mesh_index seen = p.load(std::memory_order_relaxed);
        while ((seen < 0 || seen > index) && !p.compare_exchange_weak(seen, index, std::memory_order_relaxed)) {
        }
      }
    }
  }
  return cell;
}

// Colour-bar ticks: 0, step, ..., top >= vmax with a 1/2/2.5/5 x 10^k step.
struct Ticks {
  double step = 0.2, top = 1;
  int decimals = 1;
};

Ticks nice_ticks(double vmax) {
  Ticks t;
  if (!(vmax > 0) || !std::isfinite(vmax)) return t;
  const double raw = vmax / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  t.step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10) * mag;
  t.top = std::ceil(vmax / t.step - 1e-9) * t.step;
  t.decimals = 0;
  while (t.decimals < 12) {
    const double scaled = t.step * std::pow(10.0, t.decimals);
    if (std::abs(scaled - std::round(scaled)) <= 1e-6 * scaled) break;
    ++t.decimals;
  }
  return t;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  return std::string(buf, r.ptr);
}

// ---------------------------------------------------------------------------
// Rendering

// depth: per cell; wet where depth > h_dry. title: the line at the top.
// pixel_cell: on a mesh, the cell under each map pixel (pixel_cells); empty on a grid.
Canvas render(const Context& ctx, const PngLayout& L, const std::vector<std::uint8_t>& shade,
              const std::vector<mesh_index>& pixel_cell, const std::vector<double>& depth, const std::string& title,
              const std::string& label = "depth (m)") {
  Canvas c(L.width, L.height);

  double vmax = 0;
  for (std::size_t k = 0; k < depth.size(); ++k)
    if (!ctx.inactive[k] && depth[k] > ctx.h_dry && std::isfinite(depth[k])) vmax = std::max(vmax, depth[k]);
  const Ticks ticks = nice_ticks(vmax);

  auto cell_colour = [&](std::size_t k) -> Rgb {
    if (ctx.inactive[k]) return white;
    const double d = depth[k];
    if (d > ctx.h_dry && std::isfinite(d)) return depth_colour(d / ticks.top);
    return {shade[k], shade[k], shade[k]};
  };

  if (ctx.mesh) {
    // Map: each pixel takes the colour of the cell under its centre.
#pragma omp parallel for schedule(static)
    for (int py = 0; py < L.map_h; ++py)
      for (int px = 0; px < L.map_w; ++px) {
        const mesh_index k = pixel_cell[std::size_t(py) * std::size_t(L.map_w) + std::size_t(px)];
        c.set(L.map_x + px, L.map_y + py, k < 0 ? white : cell_colour(static_cast<std::size_t>(k)));
      }
  } else {
    // Map: pixel (px, py) covers cells [i0, i1) x [j0, j1) (block average when
    // shrinking, nearest cell when enlarging); north up.
    const index_t nx = ctx.grid.nx, ny = ctx.grid.ny, mw = L.map_w, mh = L.map_h;
    auto range = [](index_t p, index_t n, index_t pixels, index_t& a, index_t& b) {
      a = p * n / pixels;
      b = (p + 1) * n / pixels;
      if (b <= a) {
        a = std::min((2 * p + 1) * n / (2 * pixels), n - 1);
        b = a + 1;
      }
    };
#pragma omp parallel for schedule(dynamic, 8)
    for (index_t py = 0; py < mh; ++py) {
      index_t r0 = 0, r1 = 0;  // rows counted from the north
      range(py, ny, mh, r0, r1);
      for (index_t px = 0; px < mw; ++px) {
        index_t i0 = 0, i1 = 0;
        range(px, nx, mw, i0, i1);
        double sr = 0, sg = 0, sb = 0;
        for (index_t r = r0; r < r1; ++r) {
          const index_t j = ny - 1 - r;
          for (index_t i = i0; i < i1; ++i) {
            const Rgb col = cell_colour(static_cast<std::size_t>(j * nx + i));
            sr += col.r;
            sg += col.g;
            sb += col.b;
          }
        }
        const double inv = 1.0 / double((r1 - r0) * (i1 - i0));
        c.set(int(L.map_x + px), int(L.map_y + py),
              {static_cast<std::uint8_t>(std::lround(sr * inv)), static_cast<std::uint8_t>(std::lround(sg * inv)),
               static_cast<std::uint8_t>(std::lround(sb * inv))});
      }
    }
  }
  c.outline(L.map_x - 1, L.map_y - 1, L.map_w + 2, L.map_h + 2, frame_grey);

  // Title and colour bar.
  c.text(L.map_x, L.title_y, title, ink);
  c.text(L.bar_x, L.map_y, label, ink);
  for (int y = L.bar_top; y < L.bar_bottom; ++y) {
    const double t = double(L.bar_bottom - 1 - y) / double(L.bar_bottom - 1 - L.bar_top);
    c.fill(L.bar_x, y, bar_width, 1, depth_colour(t));
  }
  c.outline(L.bar_x - 1, L.bar_top - 1, bar_width + 2, L.bar_bottom - L.bar_top + 2, frame_grey);
  const auto n_ticks = static_cast<int>(std::lround(ticks.top / ticks.step));
  for (int k = 0; k <= n_ticks; ++k) {
    const double v = k * ticks.step;
    const int y = L.bar_bottom - 1 -
                  static_cast<int>(std::lround(v / ticks.top * double(L.bar_bottom - 1 - L.bar_top)));
    c.fill(L.bar_x + bar_width, y, 6, 1, ink);
    c.text(L.bar_x + bar_width + 10, y - 7 * text_scale / 2, fixed(v, ticks.decimals), ink);
  }
  return c;
}

void write_png(const fs::path& path, const Canvas& c) {
  const fs::path part = part_path(path);
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(c.w);
  image.height = static_cast<png_uint_32>(c.h);
  image.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&image, part.c_str(), 0, c.px.data(), 0, nullptr)) {
    const std::string msg = image.message;
    png_image_free(&image);
    throw std::runtime_error("cannot write " + part.string() + ": " + msg);
  }
  commit_part(part, path);
}

class PngWriter final : public FormatWriter {
 public:
  explicit PngWriter(const Context& ctx)
      : ctx_(ctx), folder_(ctx.settings.dir / "png"), shade_(hillshade(ctx)), layout_(layout(ctx)) {
    if (ctx.mesh) pixel_cell_ = pixel_cells(*ctx.mesh, mesh_box(*ctx.mesh), layout_.map_w, layout_.map_h);
    std::error_code ec;
    fs::create_directories(folder_, ec);
    if (ec) throw std::runtime_error("cannot create output folder " + folder_.string() + ": " + ec.message());
    const std::regex stale(R"((depth_\d{5,}|max_depth)\.png(\.part)?)");
    if (ctx.resuming()) {  // frames of the interrupted run stay
      for (std::size_t k = 0; k < ctx.resume_times.size(); ++k) require_earlier_frame(folder_ / frame_name(k));
      return;
    }
    for (const auto& e : fs::directory_iterator(folder_, ec))
      if (std::regex_match(e.path().filename().string(), stale)) remove_stale(e.path());
  }

  bool needs_derived() const override { return false; }

  void write(const Frame& f) override {
    write_png(folder_ / frame_name(f.index),
              render(ctx_, layout_, shade_, pixel_cell_, f.raw->h, "t = " + fixed(f.time, 2) + " s"));
  }

  void finish(const Maxima& m) override {
    write_png(folder_ / "max_depth.png", render(ctx_, layout_, shade_, pixel_cell_, m.max_h, "max depth"));
  }

 private:
  static std::string frame_name(std::size_t index) {
    char name[32];
    std::snprintf(name, sizeof name, "depth_%05zu.png", index);
    return name;
  }

  static PngLayout layout(const Context& ctx) {
    if (!ctx.mesh) return png_layout(ctx.grid);
    const Box b = mesh_box(*ctx.mesh);
    return png_layout(b.x1 - b.x0, b.y1 - b.y0);
  }

  const Context& ctx_;
  fs::path folder_;
  std::vector<std::uint8_t> shade_;
  PngLayout layout_;
  std::vector<mesh_index> pixel_cell_;  // mesh runs only
};

}  // namespace

void write_png_map(const Context& ctx, const fs::path& final_path, const std::vector<double>& values,
                   const std::string& title, const std::string& label) {
  const PngLayout layout = ctx.mesh ? [&] {
    const Box b = mesh_box(*ctx.mesh);
    return png_layout(b.x1 - b.x0, b.y1 - b.y0);
  }()
                                    : png_layout(ctx.grid);
  std::vector<mesh_index> pixel_cell;
  if (ctx.mesh) pixel_cell = pixel_cells(*ctx.mesh, mesh_box(*ctx.mesh), layout.map_w, layout.map_h);
  write_png(final_path, render(ctx, layout, hillshade(ctx), pixel_cell, values, title, label));
}

PngLayout png_layout(const Grid& g) { return png_layout(double(g.nx) * g.dx, double(g.ny) * g.dy); }

PngLayout png_layout(double width, double height) {
  PngLayout L;
  const double aspect = width / height;
  const auto short_side = [](double v) { return std::max(png_min_side, static_cast<int>(std::lround(v))); };
  L.map_w = aspect >= 1 ? png_long_side : short_side(png_long_side * aspect);
  L.map_h = aspect >= 1 ? short_side(png_long_side / aspect) : png_long_side;
  const int content = std::max(L.map_h, png_min_content);
  L.map_x = png_margin;
  L.map_y = png_title_band;
  L.title_y = png_margin + 1;
  L.bar_x = png_margin + L.map_w + png_gap;
  L.bar_top = L.map_y + 30;
  L.bar_bottom = L.map_y + content - 8;
  L.width = L.map_w + 2 * png_margin + png_gap + png_panel;
  L.height = png_title_band + content + png_margin;
  return L;
}

std::unique_ptr<FormatWriter> make_png_writer(const Context& ctx) { return std::make_unique<PngWriter>(ctx); }

#endif

}  // namespace shallows::io::detail
