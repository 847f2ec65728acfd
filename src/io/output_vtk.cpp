// SPDX-License-Identifier: MIT
// vtk/frame_NNNNN.vti (VTK XML ImageData, raw appended binary, UInt64 headers)
// and output.pvd (a collection listing every frame with its time).
#include <bit>
#include <cstdint>
#include <cstdio>
#include <regex>
#include <system_error>

#include "output_detail.hpp"

namespace shallows::io::detail {
namespace {

std::string frame_name(std::size_t index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "frame_%05zu.vti", index);
  return buf;
}

// Removes files of an earlier run whose names match pattern in folder.
void remove_matching(const fs::path& folder, const std::regex& pattern) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (std::regex_match(e.path().filename().string(), pattern)) remove_stale(e.path());
}

struct VtiArray {
  const char* name;
  int components;
  const float* data;  // components * cells values
};

const char* byte_order() { return std::endian::native == std::endian::little ? "LittleEndian" : "BigEndian"; }

// One ImageData file, points at the cell centres, raw appended Float32 arrays.
void write_vti(const fs::path& path, const Grid& g, const double* time, const std::vector<VtiArray>& arrays) {
  const auto n = static_cast<std::uint64_t>(g.cells());
  const std::string ext = "0 " + std::to_string(g.nx - 1) + " 0 " + std::to_string(g.ny - 1) + " 0 0";

  std::string xml;
  xml += "<?xml version=\"1.0\"?>\n";
  xml += "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"";
  xml += byte_order();
  xml += "\" header_type=\"UInt64\">\n";
  xml += "  <ImageData WholeExtent=\"" + ext + "\" Origin=\"" + format_number(g.x0 + 0.5 * g.dx, 17) + " " +
         format_number(g.y0 + 0.5 * g.dy, 17) + " 0\" Spacing=\"" + format_number(g.dx, 17) + " " +
         format_number(g.dy, 17) + " 1\">\n";
  if (time) {
    xml += "    <FieldData>\n";
    xml += "      <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" format=\"ascii\">" +
           format_number(*time, 17) + "</DataArray>\n";
    xml += "    </FieldData>\n";
  }
  xml += "    <Piece Extent=\"" + ext + "\">\n";
  xml += "      <PointData Scalars=\"";
  xml += arrays.front().name;
  xml += "\"";
  for (const VtiArray& a : arrays)
    if (a.components == 3) {
      xml += " Vectors=\"";
      xml += a.name;
      xml += "\"";
      break;
    }
  xml += ">\n";
  std::uint64_t offset = 0;
  for (const VtiArray& a : arrays) {
    xml += "        <DataArray type=\"Float32\" Name=\"";
    xml += a.name;
    xml += "\"";
    if (a.components != 1) xml += " NumberOfComponents=\"" + std::to_string(a.components) + "\"";
    xml += " format=\"appended\" offset=\"" + std::to_string(offset) + "\"/>\n";
    offset += sizeof(std::uint64_t) + n * static_cast<std::uint64_t>(a.components) * sizeof(float);
  }
  xml += "      </PointData>\n";
  xml += "    </Piece>\n";
  xml += "  </ImageData>\n";
  xml += "  <AppendedData encoding=\"raw\">\n   _";

  AtomicFile file(path);
  file.write(xml);
  for (const VtiArray& a : arrays) {
    const std::uint64_t bytes = n * static_cast<std::uint64_t>(a.components) * sizeof(float);
    file.write(&bytes, sizeof bytes);
    file.write(a.data, bytes);
  }
  file.write("\n  </AppendedData>\n</VTKFile>\n");
  file.commit();
}

class VtkWriter final : public FormatWriter {
 public:
  explicit VtkWriter(const Context& ctx) : ctx_(ctx), folder_(ctx.settings.dir / "vtk") {
    std::error_code ec;
    fs::create_directories(folder_, ec);
    if (ec) throw std::runtime_error("cannot create output folder " + folder_.string() + ": " + ec.message());
    remove_matching(folder_, std::regex(R"((frame_\d{5,}|maxima)\.vti(\.part)?)"));
    remove_stale(ctx.settings.dir / "output.pvd");
    z_.resize(ctx.cells());
    for (std::size_t k = 0; k < z_.size(); ++k) z_[k] = static_cast<float>(ctx.z[k]);
  }

  void write(const Frame& f) override {
    const std::size_t n = ctx_.cells();
    vel_.resize(3 * n);
    for (std::size_t k = 0; k < n; ++k) {
      vel_[3 * k] = f.u[k];
      vel_[3 * k + 1] = f.v[k];
      vel_[3 * k + 2] = ctx_.inactive[k] ? f.u[k] : 0.0f;  // NaN where inactive
    }
    const std::string name = frame_name(f.index);
    write_vti(folder_ / name, ctx_.grid, &f.time,
              {{"h", 1, f.h.data()}, {"eta", 1, f.eta.data()}, {"z", 1, z_.data()}, {"velocity", 3, vel_.data()}});

    entries_ += "    <DataSet timestep=\"" + format_number(f.time, 17) + "\" group=\"\" part=\"0\" file=\"vtk/" +
                name + "\"/>\n";
    std::string pvd;
    pvd += "<?xml version=\"1.0\"?>\n";
    pvd += "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"";
    pvd += byte_order();
    pvd += "\">\n  <Collection>\n";
    pvd += entries_;
    pvd += "  </Collection>\n</VTKFile>\n";
    write_file_atomic(ctx_.settings.dir / "output.pvd", pvd);
  }

  // vtk/maxima.vti: max_h, max_speed, arrival_time (NaN: inactive or never reached).
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
    write_vti(folder_ / "maxima.vti", ctx_.grid, nullptr,
              {{"max_h", 1, max_h.data()}, {"max_speed", 1, max_speed.data()}, {"arrival_time", 1, arrival.data()},
               {"z", 1, z_.data()}});
  }

 private:
  const Context& ctx_;
  fs::path folder_;
  std::string entries_;
  std::vector<float> z_, vel_;
};

}  // namespace

std::unique_ptr<FormatWriter> make_vtk_writer(const Context& ctx) { return std::make_unique<VtkWriter>(ctx); }

}  // namespace shallows::io::detail
