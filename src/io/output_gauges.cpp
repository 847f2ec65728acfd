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

namespace {

// The cell containing the point; the east/north edges belong to the last cell.
// x0 + nx dx may round below the x1 a case gave: a point on the edge, within
// 1e-9 of the extent, is inside.
std::size_t grid_cell(const Grid& g, const Gauge& gauge) {
  const double sx = 1e-9 * (g.x1() - g.x0), sy = 1e-9 * (g.y1() - g.y0);
  const bool inside =
      gauge.x >= g.x0 - sx && gauge.x <= g.x1() + sx && gauge.y >= g.y0 - sy && gauge.y <= g.y1() + sy;
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

// The mesh cell holding each gauge (cells_holding).
std::vector<std::size_t> mesh_cells(const UnstructuredMesh& m, const std::vector<Gauge>& gauges) {
  std::vector<double> x, y;
  for (const Gauge& g : gauges) {
    x.push_back(g.x);
    y.push_back(g.y);
  }
  const std::vector<index_t> found = cells_holding(m, x, y);
  std::vector<std::size_t> cells;
  for (std::size_t g = 0; g < gauges.size(); ++g) {
    if (found[g] < 0) {
      const Box b = mesh_box(m);
      throw InputError("output.gauges: gauge \"" + gauges[g].name + "\" at (" + format_number(gauges[g].x) + ", " +
                       format_number(gauges[g].y) + ") is outside the mesh" +
                       (m.source.empty() ? std::string() : " " + m.source) + " (in no cell; bounding box [" +
                       format_number(b.x0) + ", " + format_number(b.x1) + "] x [" + format_number(b.y0) + ", " +
                       format_number(b.y1) + "])");
    }
    cells.push_back(static_cast<std::size_t>(found[g]));
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
  GaugeWriter(const Context& ctx, std::vector<std::size_t> cells, bool sparse)
      : ctx_(ctx), cells_(std::move(cells)), sparse_(sparse) {
    const fs::path final_path = ctx.settings.dir / "gauges.csv";
    if (ctx.resuming()) {
      cut_csv_rows(reopen_part(final_path), ctx.resume_times.size());
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
    for (std::size_t g = 0; g < cells_.size(); ++g) {
      const std::size_t k = cells_[g], at = sparse_ ? g : k;  // the cell; its values in the frame
      const CellValues c = cell_values(f.h[at], f.hu[at], f.hv[at], ctx_.z[k], ctx_.h_dry);
      for (double v : {c.h, c.u, c.v, c.eta}) {
        row += ',';
        row += format_number(v);
      }
      for (const std::vector<double>& hc : f.hc) {
        row += ',';
        row += format_number(cell_concentration(hc[at], f.h[at], ctx_.z[k]));
      }
    }
    row += '\n';
    file_->write(row);
    file_->flush();
  }

  void finish(const Maxima&) override { file_->commit(); }

 private:
  const Context& ctx_;
  std::vector<std::size_t> cells_;
  bool sparse_;
  std::unique_ptr<AtomicFile> file_;
};

}  // namespace

std::unique_ptr<FormatWriter> make_gauge_writer(const Context& ctx, std::vector<std::size_t> cells, bool sparse) {
  return std::make_unique<GaugeWriter>(ctx, std::move(cells), sparse);
}

}  // namespace shallows::io::detail

namespace shallows::io {

std::vector<std::size_t> gauge_cells(const Problem& p, const OutputSettings& settings) {
  detail::Context ctx;
  ctx.settings = settings;
  ctx.grid = p.grid;
  ctx.mesh = p.mesh;
  return detail::gauge_cells(ctx);
}

}  // namespace shallows::io
