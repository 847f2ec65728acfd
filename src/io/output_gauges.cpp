// SPDX-License-Identifier: MIT
// gauges.csv: one row per output time, h/u/v/eta and the concentration of each
// passive scalar in the cell holding each gauge (grid cell, or mesh cell found
// by point-in-polygon).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <stdexcept>

#include "output_detail.hpp"

namespace shallows::io::detail {

Box mesh_box(const UnstructuredMesh& m) {
  const double inf = std::numeric_limits<double>::infinity();
  Box b{inf, inf, -inf, -inf};
  for (mesh_index node : m.cell_nodes) {
    if (node < 0) continue;
    const auto n = static_cast<std::size_t>(node);
    b.x0 = std::min(b.x0, m.node_x[n]);
    b.y0 = std::min(b.y0, m.node_y[n]);
    b.x1 = std::max(b.x1, m.node_x[n]);
    b.y1 = std::max(b.y1, m.node_y[n]);
  }
  return b;
}

namespace {

// The cell containing the point; the east/north edges belong to the last cell.
std::size_t grid_cell(const Grid& g, const Gauge& gauge) {
  const bool inside = gauge.x >= g.x0 && gauge.x <= g.x1() && gauge.y >= g.y0 && gauge.y <= g.y1();
  if (!inside)
    throw InputError("output.gauges: gauge \"" + gauge.name + "\" at (" + format_number(gauge.x) + ", " +
                     format_number(gauge.y) + ") is outside the domain [" + format_number(g.x0) + ", " +
                     format_number(g.x1()) + "] x [" + format_number(g.y0) + ", " + format_number(g.y1()) + "]");
  auto cell = [](double p, double p0, double d, index_t n) {
    const auto c = static_cast<index_t>(std::floor((p - p0) / d));
    return std::clamp<index_t>(c, 0, n - 1);
  };
  const index_t i = cell(gauge.x, g.x0, g.dx, g.nx);
  const index_t j = cell(gauge.y, g.y0, g.dy, g.ny);
  return static_cast<std::size_t>(j * g.nx + i);
}

// One pass over the cells for all gauges (a few points against up to ~10^7
// cells: cheaper than building a search structure over the cells). Gauges
// sorted by x; each cell tests those within its x range. A point on a shared
// edge or node goes to the lowest cell index holding it.
std::vector<std::size_t> mesh_cells(const UnstructuredMesh& m, const std::vector<Gauge>& gauges) {
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> order(gauges.size());
  for (std::size_t g = 0; g < order.size(); ++g) order[g] = g;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return gauges[a].x < gauges[b].x; });
  std::vector<double> xs(order.size());
  for (std::size_t g = 0; g < order.size(); ++g) xs[g] = gauges[order[g]].x;

  std::vector<std::size_t> cells(gauges.size(), none);
  const auto n_cells = static_cast<std::ptrdiff_t>(m.cells());
#pragma omp parallel
  {
    std::vector<std::size_t> mine(gauges.size(), none);  // lowest cell this thread found
#pragma omp for schedule(static)
    for (std::ptrdiff_t ci = 0; ci < n_cells; ++ci) {
      const auto c = static_cast<std::size_t>(ci);
      const auto [x0, y0, x1, y1] = cell_box(m, c);
      // Margin for the edge tolerance of cell_contains.
      const double pad = 1e-9 * std::max(x1 - x0, y1 - y0);
      for (auto it = std::lower_bound(xs.begin(), xs.end(), x0 - pad); it != xs.end() && *it <= x1 + pad; ++it) {
        const std::size_t g = order[static_cast<std::size_t>(it - xs.begin())];
        if (mine[g] != none || gauges[g].y < y0 - pad || gauges[g].y > y1 + pad) continue;
        if (cell_contains(m, c, gauges[g].x, gauges[g].y)) mine[g] = c;  // cells rise within a thread
      }
    }
#pragma omp critical(shallows_gauge_cells)
    for (std::size_t g = 0; g < gauges.size(); ++g) cells[g] = std::min(cells[g], mine[g]);
  }
  for (std::size_t g = 0; g < gauges.size(); ++g)
    if (cells[g] == none) {
      const Box b = mesh_box(m);
      throw InputError("output.gauges: gauge \"" + gauges[g].name + "\" at (" + format_number(gauges[g].x) + ", " +
                       format_number(gauges[g].y) + ") is outside the mesh" +
                       (m.source.empty() ? std::string() : " " + m.source) + " (in no cell; bounding box [" +
                       format_number(b.x0) + ", " + format_number(b.x1) + "] x [" + format_number(b.y0) + ", " +
                       format_number(b.y1) + "])");
    }
  return cells;
}

}  // namespace

std::vector<std::size_t> gauge_cells(const Context& ctx) {
  std::vector<std::size_t> cells;
  std::set<std::string> names;
  for (const Gauge& gauge : ctx.settings.gauges) {
    if (gauge.name.empty() || gauge.name.find_first_of(",\"\r\n") != std::string::npos)
      throw InputError("output.gauges: gauge name \"" + gauge.name +
                       "\" must be non-empty and contain no comma, quote or line break");
    if (!names.insert(gauge.name).second)
      throw InputError("output.gauges: two gauges are named \"" + gauge.name + "\"");
    if (!ctx.mesh) cells.push_back(grid_cell(ctx.grid, gauge));
  }
  if (ctx.mesh) cells = mesh_cells(*ctx.mesh, ctx.settings.gauges);
  return cells;
}

namespace {

class GaugeWriter final : public FormatWriter {
 public:
  GaugeWriter(const Context& ctx, std::vector<std::size_t> cells) : ctx_(ctx), cells_(std::move(cells)) {
    const fs::path final_path = ctx.settings.dir / "gauges.csv";
    if (ctx.resuming()) {
      cut_rows(reopen_part(final_path), ctx.resume_times.size());
      file_ = std::make_unique<AtomicFile>(final_path, true);
      return;
    }
    remove_stale(final_path);
    file_ = std::make_unique<AtomicFile>(final_path);
    std::string header = "time";
    for (const Gauge& gauge : ctx.settings.gauges) {
      for (const char* q : {"_h", "_u", "_v", "_eta"}) header += "," + gauge.name + q;
      for (const ScalarOutput& sc : ctx.settings.scalars) header += "," + gauge.name + "_" + sc.name;
    }
    header += '\n';
    file_->write(header);
    file_->flush();
  }

  bool needs_derived() const override { return false; }

  void write(const Frame& frame) override {
    const Fields& f = *frame.raw;
    std::string row = format_number(frame.time);
    for (std::size_t k : cells_) {
      const CellValues c = cell_values(f.h[k], f.hu[k], f.hv[k], ctx_.z[k], ctx_.h_dry);
      for (double v : {c.h, c.u, c.v, c.eta}) {
        row += ',';
        row += format_number(v);
      }
      for (const std::vector<double>& hc : f.hc) {
        row += ',';
        row += format_number(cell_concentration(hc[k], f.h[k], ctx_.z[k]));
      }
    }
    row += '\n';
    file_->write(row);
    file_->flush();
  }

  void finish(const Maxima&) override { file_->commit(); }

 private:
  // Keeps the header and the first `rows` rows of an interrupted run's file.
  static void cut_rows(const fs::path& part, std::size_t rows) {
    std::ifstream in(part, std::ios::binary);
    std::size_t lines = 0, offset = 0;
    for (char ch; lines < rows + 1 && in.get(ch); ++offset)
      if (ch == '\n') ++lines;
    if (lines < rows + 1)
      throw std::runtime_error("cannot restart: " + part.string() + " holds " +
                               std::to_string(lines == 0 ? 0 : lines - 1) + " rows, the checkpoint needs " +
                               std::to_string(rows));
    in.close();
    std::error_code ec;
    fs::resize_file(part, offset, ec);
    if (ec) throw std::runtime_error("cannot truncate " + part.string() + ": " + ec.message());
  }

  const Context& ctx_;
  std::vector<std::size_t> cells_;
  std::unique_ptr<AtomicFile> file_;
};

}  // namespace

std::unique_ptr<FormatWriter> make_gauge_writer(const Context& ctx, std::vector<std::size_t> cells) {
  return std::make_unique<GaugeWriter>(ctx, std::move(cells));
}

}  // namespace shallows::io::detail
