// SPDX-License-Identifier: MIT
// gauges.csv: one row per output time, h/u/v/eta of the cell holding each gauge.
#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "output_detail.hpp"

namespace shallows::io::detail {

std::vector<std::size_t> gauge_cells(const Context& ctx) {
  std::vector<std::size_t> cells;
  const Grid& g = ctx.grid;
  std::set<std::string> names;
  for (const Gauge& gauge : ctx.settings.gauges) {
    if (gauge.name.empty() || gauge.name.find_first_of(",\"\r\n") != std::string::npos)
      throw InputError("output.gauges: gauge name \"" + gauge.name +
                       "\" must be non-empty and contain no comma, quote or line break");
    if (!names.insert(gauge.name).second)
      throw InputError("output.gauges: two gauges are named \"" + gauge.name + "\"");
    const bool inside = gauge.x >= g.x0 && gauge.x <= g.x1() && gauge.y >= g.y0 && gauge.y <= g.y1();
    if (!inside)
      throw InputError("output.gauges: gauge \"" + gauge.name + "\" at (" + format_number(gauge.x) + ", " +
                       format_number(gauge.y) + ") is outside the domain [" + format_number(g.x0) + ", " +
                       format_number(g.x1()) + "] x [" + format_number(g.y0) + ", " + format_number(g.y1()) +
                       "]");
    // The cell containing the point; the east/north edges belong to the last cell.
    auto cell = [](double p, double p0, double d, index_t n) {
      const auto c = static_cast<index_t>(std::floor((p - p0) / d));
      return std::clamp<index_t>(c, 0, n - 1);
    };
    const index_t i = cell(gauge.x, g.x0, g.dx, g.nx);
    const index_t j = cell(gauge.y, g.y0, g.dy, g.ny);
    cells.push_back(static_cast<std::size_t>(j * g.nx + i));
  }
  return cells;
}

namespace {

class GaugeWriter final : public FormatWriter {
 public:
  explicit GaugeWriter(const Context& ctx) : ctx_(ctx), cells_(gauge_cells(ctx)) {
    const fs::path final_path = ctx.settings.dir / "gauges.csv";
    remove_stale(final_path);
    file_ = std::make_unique<AtomicFile>(final_path);
    std::string header = "time";
    for (const Gauge& gauge : ctx.settings.gauges)
      for (const char* q : {"_h", "_u", "_v", "_eta"}) header += "," + gauge.name + q;
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
    }
    row += '\n';
    file_->write(row);
    file_->flush();
  }

  void finish(const Maxima&) override { file_->commit(); }

 private:
  const Context& ctx_;
  std::vector<std::size_t> cells_;
  std::unique_ptr<AtomicFile> file_;
};

}  // namespace

std::unique_ptr<FormatWriter> make_gauge_writer(const Context& ctx) { return std::make_unique<GaugeWriter>(ctx); }

}  // namespace shallows::io::detail
