// SPDX-License-Identifier: MIT
// Grid: vtk/frame_NNNNN.vti (VTK XML ImageData). Mesh: vtk/frame_NNNNN.vtu
// (VTK XML UnstructuredGrid). Both raw appended binary with UInt64 headers,
// plus output.pvd (a collection listing every frame with its time).
#include <bit>
#include <cstdint>
#include <cstdio>
#include <regex>
#include <system_error>

#include "output_detail.hpp"

namespace shallows::io::detail {
namespace {

std::string frame_name(std::size_t index, const char* extension) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "frame_%05zu.%s", index, extension);
  return buf;
}

// Removes files of an earlier run whose names match pattern in folder.
void remove_matching(const fs::path& folder, const std::regex& pattern) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (std::regex_match(e.path().filename().string(), pattern)) remove_stale(e.path());
}

// One appended array: `count` tuples of `components` values of VTK type `type`.
struct VtkArray {
  const char* name;
  int components;
  const void* data;
  std::uint64_t count;
  const char* type = "Float32";
  std::uint64_t value_bytes = sizeof(float);

  std::uint64_t bytes() const { return count * static_cast<std::uint64_t>(components) * value_bytes; }
};

const char* byte_order() { return std::endian::native == std::endian::little ? "LittleEndian" : "BigEndian"; }

// The opening lines up to the dataset element's children: XML declaration, VTKFile.
std::string vtk_header(const char* type) {
  std::string xml;
  xml += "<?xml version=\"1.0\"?>\n";
  xml += "<VTKFile type=\"";
  xml += type;
  xml += "\" version=\"1.0\" byte_order=\"";
  xml += byte_order();
  xml += "\" header_type=\"UInt64\">\n";
  return xml;
}

// Field data TimeValue (ParaView reads the time of a lone file from it).
void time_value(std::string& xml, const double* time) {
  if (!time) return;
  xml += "    <FieldData>\n";
  xml += "      <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" format=\"ascii\">" +
         format_number(*time, 17) + "</DataArray>\n";
  xml += "    </FieldData>\n";
}

// "<DataArray .../>" lines for arrays appended at `offset` onwards (advanced past them).
void array_tags(std::string& xml, const std::vector<VtkArray>& arrays, std::uint64_t& offset) {
  for (const VtkArray& a : arrays) {
    xml += "        <DataArray type=\"";
    xml += a.type;
    xml += "\" Name=\"";
    xml += a.name;
    xml += "\"";
    if (a.components != 1) xml += " NumberOfComponents=\"" + std::to_string(a.components) + "\"";
    xml += " format=\"appended\" offset=\"" + std::to_string(offset) + "\"/>\n";
    offset += sizeof(std::uint64_t) + a.bytes();
  }
}

// <PointData> or <CellData>: the first array is the active scalar, the first 3-vector the active vector.
void attribute_data(std::string& xml, const char* section, const std::vector<VtkArray>& arrays,
                    std::uint64_t& offset) {
  xml += "      <";
  xml += section;
  xml += " Scalars=\"";
  xml += arrays.front().name;
  xml += "\"";
  for (const VtkArray& a : arrays)
    if (a.components == 3) {
      xml += " Vectors=\"";
      xml += a.name;
      xml += "\"";
      break;
    }
  xml += ">\n";
  array_tags(xml, arrays, offset);
  xml += "      </";
  xml += section;
  xml += ">\n";
}

// Ends the XML (whose dataset element is closed) and appends the arrays, in tag order.
void write_appended(const fs::path& path, std::string xml, const std::vector<const std::vector<VtkArray>*>& groups) {
  xml += "  <AppendedData encoding=\"raw\">\n   _";
  AtomicFile file(path);
  file.write(xml);
  for (const auto* arrays : groups)
    for (const VtkArray& a : *arrays) {
      const std::uint64_t bytes = a.bytes();
      file.write(&bytes, sizeof bytes);
      file.write(a.data, bytes);
    }
  file.write("\n  </AppendedData>\n</VTKFile>\n");
  file.commit();
}

// One ImageData file, points at the cell centres.
void write_vti(const fs::path& path, const Grid& g, const double* time, const std::vector<VtkArray>& arrays) {
  const std::string ext = "0 " + std::to_string(g.nx - 1) + " 0 " + std::to_string(g.ny - 1) + " 0 0";
  std::string xml = vtk_header("ImageData");
  xml += "  <ImageData WholeExtent=\"" + ext + "\" Origin=\"" + format_number(g.x0 + 0.5 * g.dx, 17) + " " +
         format_number(g.y0 + 0.5 * g.dy, 17) + " 0\" Spacing=\"" + format_number(g.dx, 17) + " " +
         format_number(g.dy, 17) + " 1\">\n";
  time_value(xml, time);
  xml += "    <Piece Extent=\"" + ext + "\">\n";
  std::uint64_t offset = 0;
  attribute_data(xml, "PointData", arrays, offset);
  xml += "    </Piece>\n";
  xml += "  </ImageData>\n";
  write_appended(path, std::move(xml), {&arrays});
}

constexpr std::uint8_t vtk_triangle = 5, vtk_quad = 9;

// Points (z = 0: a flat map; the bed is the cell field z) and cells of a mesh, built once.
struct VtuGeometry {
  std::vector<double> points;
  std::vector<std::int32_t> connectivity;
  std::vector<std::int64_t> offsets;
  std::vector<std::uint8_t> types;
  std::vector<VtkArray> point_arrays, cell_arrays;

  VtuGeometry(const VtuGeometry&) = delete;  // the arrays point into the vectors
  VtuGeometry& operator=(const VtuGeometry&) = delete;
  explicit VtuGeometry(const UnstructuredMesh& m) {
    const auto nodes = static_cast<std::size_t>(m.nodes()), cells = static_cast<std::size_t>(m.cells());
    points.resize(3 * nodes);
    for (std::size_t n = 0; n < nodes; ++n) {
      points[3 * n] = m.node_x[n];
      points[3 * n + 1] = m.node_y[n];
      points[3 * n + 2] = 0;
    }
    connectivity.reserve(4 * cells);
    offsets.resize(cells);
    types.resize(cells);
    for (std::size_t c = 0; c < cells; ++c) {
      const int sides = m.cell_nodes[4 * c + 3] < 0 ? 3 : 4;
      for (int s = 0; s < sides; ++s) connectivity.push_back(m.cell_nodes[4 * c + static_cast<std::size_t>(s)]);
      offsets[c] = static_cast<std::int64_t>(connectivity.size());
      types[c] = sides == 3 ? vtk_triangle : vtk_quad;
    }
    point_arrays = {{"Points", 3, points.data(), nodes, "Float64", sizeof(double)}};
    cell_arrays = {{"connectivity", 1, connectivity.data(), connectivity.size(), "Int32", sizeof(std::int32_t)},
                   {"offsets", 1, offsets.data(), cells, "Int64", sizeof(std::int64_t)},
                   {"types", 1, types.data(), cells, "UInt8", sizeof(std::uint8_t)}};
  }
};

// One UnstructuredGrid file, values per cell.
void write_vtu(const fs::path& path, const VtuGeometry& geo, const double* time, const std::vector<VtkArray>& arrays) {
  std::string xml = vtk_header("UnstructuredGrid");
  xml += "  <UnstructuredGrid>\n";
  time_value(xml, time);
  xml += "    <Piece NumberOfPoints=\"" + std::to_string(geo.point_arrays.front().count) + "\" NumberOfCells=\"" +
         std::to_string(geo.types.size()) + "\">\n";
  std::uint64_t offset = 0;
  xml += "      <Points>\n";
  array_tags(xml, geo.point_arrays, offset);
  xml += "      </Points>\n";
  xml += "      <Cells>\n";
  array_tags(xml, geo.cell_arrays, offset);
  xml += "      </Cells>\n";
  attribute_data(xml, "CellData", arrays, offset);
  xml += "    </Piece>\n";
  xml += "  </UnstructuredGrid>\n";
  write_appended(path, std::move(xml), {&geo.point_arrays, &geo.cell_arrays, &arrays});
}

class VtkWriter final : public FormatWriter {
 public:
  explicit VtkWriter(const Context& ctx)
      : ctx_(ctx), folder_(ctx.settings.dir / "vtk"), extension_(ctx.mesh ? "vtu" : "vti") {
    std::error_code ec;
    fs::create_directories(folder_, ec);
    if (ec) throw std::runtime_error("cannot create output folder " + folder_.string() + ": " + ec.message());
    if (ctx.resuming()) {
      // Frames of the interrupted run before the restart stay.
      for (std::size_t k = 0; k < ctx.resume_times.size(); ++k) {
        require_earlier_frame(folder_ / frame_name(k, extension_));
        add_entry(k, ctx.resume_times[k]);
      }
    } else {
      remove_matching(folder_, std::regex(std::string(R"((frame_\d{5,}|maxima)\.)") + extension_ + R"((\.part)?)"));
      remove_stale(ctx.settings.dir / "output.pvd");
    }
    z_.resize(ctx.cells());
    for (std::size_t k = 0; k < z_.size(); ++k) z_[k] = static_cast<float>(ctx.z[k]);
    if (ctx.mesh) geometry_ = std::make_unique<VtuGeometry>(*ctx.mesh);
  }

  void write(const Frame& f) override {
    const std::size_t n = ctx_.cells();
    vel_.resize(3 * n);
    for (std::size_t k = 0; k < n; ++k) {
      vel_[3 * k] = f.u[k];
      vel_[3 * k + 1] = f.v[k];
      vel_[3 * k + 2] = ctx_.inactive[k] ? f.u[k] : 0.0f;  // NaN where inactive
    }
    const std::string name = frame_name(f.index, extension_);
    if (geometry_) {
      std::vector<VtkArray> arrays{field("h", f.h),  field("hu", f.hu),   field("hv", f.hv), field("u", f.u),
                                   field("v", f.v),  field("eta", f.eta), field("z", z_)};
      for (std::size_t s = 0; s < f.c.size(); ++s)
        arrays.push_back(field(ctx_.settings.scalars[s].name.c_str(), f.c[s]));
      arrays.push_back({"velocity", 3, vel_.data(), n});
      write_vtu(folder_ / name, *geometry_, &f.time, arrays);
    } else {
      std::vector<VtkArray> arrays{field("h", f.h), field("eta", f.eta), field("z", z_)};
      for (std::size_t s = 0; s < f.c.size(); ++s)
        arrays.push_back(field(ctx_.settings.scalars[s].name.c_str(), f.c[s]));
      arrays.push_back({"velocity", 3, vel_.data(), n});
      write_vti(folder_ / name, ctx_.grid, &f.time, arrays);
    }

    add_entry(f.index, f.time);
    std::string pvd;
    pvd += "<?xml version=\"1.0\"?>\n";
    pvd += "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"";
    pvd += byte_order();
    pvd += "\">\n  <Collection>\n";
    pvd += entries_;
    pvd += "  </Collection>\n</VTKFile>\n";
    write_file_atomic(ctx_.settings.dir / "output.pvd", pvd);
  }

  // vtk/maxima.vti (.vtu): max_h, max_speed, arrival_time (NaN: inactive or never reached).
  void finish(const Maxima& m) override {
    const std::size_t n = ctx_.cells();
    std::vector<float> max_h(n), max_speed(n), arrival(n);
    const float nan = std::nanf("");
    for (std::size_t k = 0; k < n; ++k) {
      const bool off = ctx_.inactive[k];
      const bool dry = m.max_h[k] <= ctx_.h_dry;
      max_h[k] = off ? nan : dry ? 0.0f : static_cast<float>(m.max_h[k]);
      max_speed[k] = off ? nan : dry ? 0.0f : static_cast<float>(m.max_speed[k]);
      arrival[k] = off ? nan : static_cast<float>(m.arrival_time[k]);
    }
    const std::vector<VtkArray> arrays{field("max_h", max_h), field("max_speed", max_speed),
                                       field("arrival_time", arrival), field("z", z_)};
    const fs::path path = folder_ / (std::string("maxima.") + extension_);
    if (geometry_) write_vtu(path, *geometry_, nullptr, arrays);
    else write_vti(path, ctx_.grid, nullptr, arrays);
  }

 private:
  void add_entry(std::size_t index, double time) {
    entries_ += "    <DataSet timestep=\"" + format_number(time, 17) + "\" group=\"\" part=\"0\" file=\"vtk/" +
                frame_name(index, extension_) + "\"/>\n";
  }

  static VtkArray field(const char* name, const std::vector<float>& v) { return {name, 1, v.data(), v.size()}; }

  const Context& ctx_;
  fs::path folder_;
  const char* extension_;
  std::unique_ptr<VtuGeometry> geometry_;  // mesh runs only
  std::string entries_;
  std::vector<float> z_, vel_;
};

}  // namespace

std::unique_ptr<FormatWriter> make_vtk_writer(const Context& ctx) { return std::make_unique<VtkWriter>(ctx); }

}  // namespace shallows::io::detail
