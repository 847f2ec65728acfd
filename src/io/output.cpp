// SPDX-License-Identifier: MIT
// OutputWriter: validates the settings, owns one FormatWriter per requested
// format (plus gauges), derives the written fields once per output time.
// Grid and mesh runs differ only in the Context's geometry.
// File formats: docs/outputs.md.
#include "shallows/io/output.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <system_error>

#include "output_detail.hpp"

namespace shallows::io {

using detail::Context;
using detail::FormatWriter;
using detail::Frame;

struct OutputWriter::Impl {
  Context ctx;  // declared first: the writers hold references to it
  std::vector<std::unique_ptr<FormatWriter>> writers;
  std::size_t frames = 0;
  bool finished = false;
  bool derived = false;  // some writer needs the float fields
  bool maxima = false;   // some writer writes the maxima
  // Gauges alone: write() takes the values of these cells only (gauge_cells()).
  bool gauges_only = false;
  std::vector<std::size_t> gauge_cells;
  Frame frame;
};

namespace {

void check_size(const std::vector<double>& v, const Context& ctx, const char* what) {
  if (v.size() != ctx.cells())
    throw std::invalid_argument(std::string("OutputWriter: ") + what + " has " + std::to_string(v.size()) +
                                " values, the " + (ctx.mesh ? "mesh" : "grid") + " has " +
                                std::to_string(ctx.cells()) + " cells");
}

template <class T>
void check_mesh_size(const std::vector<T>& v, std::size_t expected, const char* what) {
  if (v.size() != expected)
    throw std::invalid_argument(std::string("OutputWriter: mesh ") + what + " has " + std::to_string(v.size()) +
                                " values, expected " + std::to_string(expected));
}

}  // namespace

OutputWriter::OutputWriter(const OutputSettings& settings, const Grid& grid, const std::vector<double>& z,
                           double h_dry, const OutputResume& resume)
    : impl_(std::make_unique<Impl>()) {
  if (grid.nx <= 0 || grid.ny <= 0 || !(grid.dx > 0) || !(grid.dy > 0))
    throw std::invalid_argument("OutputWriter: empty grid or non-positive spacing");
  impl_->ctx.grid = grid;
  open(settings, z, h_dry, resume);
}

OutputWriter::OutputWriter(const OutputSettings& settings, std::shared_ptr<const UnstructuredMesh> mesh,
                           const std::vector<double>& z, double h_dry, const OutputResume& resume)
    : impl_(std::make_unique<Impl>()) {
  if (!mesh || mesh->cells() <= 0) throw std::invalid_argument("OutputWriter: no mesh, or a mesh without cells");
  const auto cells = static_cast<std::size_t>(mesh->cells()), nodes = static_cast<std::size_t>(mesh->nodes());
  check_mesh_size(mesh->node_y, nodes, "node_y");
  check_mesh_size(mesh->cell_nodes, 4 * cells, "cell_nodes");
  check_mesh_size(mesh->cell_x, cells, "cell_x");
  check_mesh_size(mesh->cell_y, cells, "cell_y");
  for (std::size_t k = 0; k < mesh->cell_nodes.size(); ++k) {
    const mesh_index node = mesh->cell_nodes[k];
    const bool pad = k % 4 == 3 && node == -1;  // triangle
    if (!pad && (node < 0 || static_cast<std::size_t>(node) >= nodes))
      throw std::invalid_argument("OutputWriter: mesh cell " + std::to_string(k / 4) +
                                  " has a node index out of range");
  }
  impl_->ctx.mesh = std::move(mesh);
  open(settings, z, h_dry, resume);
}

void OutputWriter::open(const OutputSettings& settings, const std::vector<double>& z, double h_dry,
                        const OutputResume& resume) {
  Context& ctx = impl_->ctx;
  ctx.resume_times = resume.frame_times;
  impl_->frames = resume.frame_times.size();
  ctx.settings = settings;
  ctx.h_dry = h_dry;
  check_size(z, ctx, "the bed z");
  ctx.z = z;
  ctx.inactive.resize(ctx.cells());
  for (std::size_t k = 0; k < ctx.cells(); ++k) ctx.inactive[k] = std::isnan(z[k]);

  bool netcdf = false, vtk = false, png = false, geotiff = false;
  for (const std::string& f : settings.formats) {
    if (f == "netcdf") netcdf = true;
    else if (f == "vtk") vtk = true;
    else if (f == "png") png = true;
    else if (f == "geotiff") geotiff = true;
    else
      throw InputError("output.format: unknown format \"" + f + "\" (expected netcdf, vtk, png or geotiff)");
  }
#if !defined(SHALLOWS_HAVE_NETCDF)
  if (netcdf) (void)detail::make_netcdf_writer(ctx);  // throws: no NetCDF support
#endif
#if !defined(SHALLOWS_HAVE_PNG)
  if (png) (void)detail::make_png_writer(ctx);  // throws: no PNG support
#endif
#if !defined(SHALLOWS_HAVE_GDAL)
  if (geotiff) (void)detail::make_geotiff_writer(ctx);  // throws: no GDAL
#endif
  if (geotiff && ctx.mesh) throw InputError("output.format: geotiff writes Cartesian grids only, not meshes");
  const bool gauges = !settings.gauges.empty();
  std::vector<std::size_t> gauge_cells;
  if (gauges) gauge_cells = detail::gauge_cells(ctx);  // throws for a gauge outside the domain
  if (!(netcdf || vtk || png || geotiff || gauges)) return;  // nothing to write, no folder

  std::error_code ec;
  std::filesystem::create_directories(settings.dir, ec);
  if (ec) throw std::runtime_error("cannot create output folder " + settings.dir.string() + ": " + ec.message());

  if (gauges) {
    impl_->gauges_only = writes_gauges_only(settings) && gauge_cells.size() < ctx.cells();
    if (impl_->gauges_only) impl_->gauge_cells = gauge_cells;
    impl_->writers.push_back(detail::make_gauge_writer(ctx, std::move(gauge_cells), impl_->gauges_only));
  }
  if (netcdf) impl_->writers.push_back(detail::make_netcdf_writer(ctx));
  if (vtk) impl_->writers.push_back(detail::make_vtk_writer(ctx));
  if (png) impl_->writers.push_back(detail::make_png_writer(ctx));
  if (geotiff) impl_->writers.push_back(detail::make_geotiff_writer(ctx));
  for (const auto& w : impl_->writers) impl_->derived = impl_->derived || w->needs_derived();
  impl_->maxima = writes_maxima(settings);
}

OutputWriter::~OutputWriter() = default;  // writers close their files, leave .part names

void OutputWriter::write(double time, const Fields& fields, const VolumeAccount& account) {
  Impl& im = *impl_;
  if (im.finished) throw std::logic_error("OutputWriter::write after finish()");
  const std::size_t n = im.ctx.cells();
  if (im.gauges_only && fields.h.size() == n) {
    // The whole state: its gauges' cells.
    check_size(fields.hu, im.ctx, "fields.hu");
    check_size(fields.hv, im.ctx, "fields.hv");
    for (const std::vector<double>& hc : fields.hc) check_size(hc, im.ctx, "fields.hc");
    return write(time, cells_of(fields, im.gauge_cells), account);
  }
  const auto check = [&](const std::vector<double>& v, const char* what) {
    if (!im.gauges_only) return check_size(v, im.ctx, what);
    if (v.size() != im.gauge_cells.size())
      throw std::invalid_argument(std::string("OutputWriter: ") + what + " has " + std::to_string(v.size()) +
                                  " values, the gauges " + std::to_string(im.gauge_cells.size()));
  };
  check(fields.h, "fields.h");
  check(fields.hu, "fields.hu");
  check(fields.hv, "fields.hv");
  const std::size_t scalars = im.ctx.settings.scalars.size();
  if (fields.hc.size() != scalars)
    throw std::invalid_argument("OutputWriter: fields.hc holds " + std::to_string(fields.hc.size()) +
                                " passive scalars, the outputs " + std::to_string(scalars));
  for (const std::vector<double>& hc : fields.hc) check(hc, "fields.hc");
  if (im.writers.empty()) {
    ++im.frames;
    return;
  }

  Frame& fr = im.frame;
  fr.time = time;
  fr.index = im.frames;
  fr.raw = &fields;
  fr.account = account;
  if (im.derived) {
    for (auto* v : {&fr.h, &fr.hu, &fr.hv, &fr.u, &fr.v, &fr.eta}) v->resize(n);
    const double h_dry = im.ctx.h_dry;
    const std::vector<double>& z = im.ctx.z;
#pragma omp parallel for schedule(static)
    for (std::size_t k = 0; k < n; ++k) {
      const detail::CellValues c = detail::cell_values(fields.h[k], fields.hu[k], fields.hv[k], z[k], h_dry);
      fr.h[k] = static_cast<float>(c.h);
      fr.hu[k] = static_cast<float>(c.hu);
      fr.hv[k] = static_cast<float>(c.hv);
      fr.u[k] = static_cast<float>(c.u);
      fr.v[k] = static_cast<float>(c.v);
      fr.eta[k] = static_cast<float>(c.eta);
    }
    fr.c.resize(scalars);
    for (std::size_t s = 0; s < scalars; ++s) {
      fr.c[s].resize(n);
#pragma omp parallel for schedule(static)
      for (std::size_t k = 0; k < n; ++k)
        fr.c[s][k] = static_cast<float>(detail::cell_concentration(fields.hc[s][k], fields.h[k], z[k]));
    }
  }
  for (const auto& w : im.writers) w->write(fr);
  fr.raw = nullptr;
  ++im.frames;
}

bool OutputWriter::writes_fields(const OutputSettings& settings) {
  return !settings.formats.empty() || !settings.gauges.empty();
}

// Every format writes the maxima at the end; gauges do not.
bool OutputWriter::writes_maxima(const OutputSettings& settings) { return !settings.formats.empty(); }

bool OutputWriter::writes_gauges_only(const OutputSettings& settings) {
  return settings.formats.empty() && !settings.gauges.empty();
}

const std::vector<std::size_t>& OutputWriter::gauge_cells() const {
  static const std::vector<std::size_t> none;
  return impl_->gauges_only ? impl_->gauge_cells : none;
}

void OutputWriter::finish(const Maxima& maxima) {
  Impl& im = *impl_;
  if (im.finished) throw std::logic_error("OutputWriter::finish called twice");
  im.finished = true;
  if (im.writers.empty()) return;
  if (im.maxima) {
    check_size(maxima.max_h, im.ctx, "maxima.max_h");
    check_size(maxima.max_speed, im.ctx, "maxima.max_speed");
    check_size(maxima.arrival_time, im.ctx, "maxima.arrival_time");
  }
  for (const auto& w : im.writers) w->finish(maxima);
}

}  // namespace shallows::io
