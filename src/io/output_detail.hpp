// SPDX-License-Identifier: MIT
#pragma once
// Private to src/io/output*.cpp: the pieces OutputWriter is made of.
// Each output format is a FormatWriter; OutputWriter owns a Context (grid or
// mesh, bed, dry threshold) that outlives them, derives the per-frame fields
// once and hands them to every writer.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/mesh/structured/grid.hpp"
#include "shallows/mesh/unstructured/locate.hpp"
#include "shallows/mesh/unstructured/mesh.hpp"
#include "shallows/physics/scalar_transport.hpp"
#include "shallows/solver/fields.hpp"
#include "text_tokens.hpp"

namespace shallows::io::detail {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// Atomic files (atomic_file.cpp)

// "<name>.part" next to the final name.
fs::path part_path(const fs::path& final_path);

// Renames part over final (atomic within one file system); throws
// std::runtime_error naming both on failure.
void commit_part(const fs::path& part, const fs::path& final_path);

// Removes a file if present (stale output of an earlier run); ignores absence,
// throws std::runtime_error if it exists and cannot be removed.
void remove_stale(const fs::path& p);

// A file written as "<final>.part" through stdio and renamed over <final> by
// commit(). Destroyed without commit(): closed, left as .part, never renamed.
class AtomicFile {
 public:
  // append: goes on at the end of an existing .part file (a restart).
  explicit AtomicFile(fs::path final_path, bool append = false);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  void flush();   // pushes buffered data to the OS (readers can follow)
  void commit();  // flush, close, rename; throws on any error

  const fs::path& final_path() const { return final_; }
  const fs::path& part() const { return part_; }

 private:
  [[noreturn]] void fail(const char* what) const;
  fs::path final_;
  fs::path part_;
  std::FILE* file_ = nullptr;
};

// A restart: the .part file of an interrupted run's output, renamed back
// from its final name if the run had closed its outputs (a signal); throws
// std::runtime_error when neither exists.
fs::path reopen_part(const fs::path& final_path);

// A restart: keeps the header and the first `rows` rows of the .part file of
// an interrupted run's CSV (gauges.csv, structures.csv).
void cut_csv_rows(const fs::path& part, std::size_t rows);

// A restart: throws std::runtime_error when a frame file the interrupted run
// wrote before its checkpoint is missing (another output folder?).
void require_earlier_frame(const fs::path& file);

// Whole file in one go: writes <final>.part then renames it.
void write_file_atomic(const fs::path& final_path, std::string_view bytes);

// ---------------------------------------------------------------------------
// Shared state and derived values

// A run on a grid (mesh null) or on an unstructured mesh (grid unused); the
// fields are then per cell in the mesh's cell order.
struct Context {
  OutputSettings settings;
  Grid grid;
  std::shared_ptr<const UnstructuredMesh> mesh;
  std::vector<double> z;       // interior bed, NaN = inactive
  std::vector<bool> inactive;  // z is NaN
  double h_dry = 0;
  // A restart: times of the frames the interrupted run wrote (OutputResume).
  std::vector<double> resume_times;

  bool resuming() const { return !resume_times.empty(); }
  std::size_t cells() const { return static_cast<std::size_t>(mesh ? mesh->cells() : grid.cells()); }
};

// Values written for one cell (the rules of docs/outputs.md): inactive -> all
// NaN; h <= h_dry -> dry (h = hu = hv = u = v = 0, eta = z); else u = hu/h,
// v = hv/h, eta = h + z. A NaN depth on an active cell stays NaN.
struct CellValues {
  double h, hu, hv, u, v, eta;
};

inline CellValues cell_values(double h, double hu, double hv, double z, double h_dry) {
  if (std::isnan(z)) {
    const double nan = std::nan("");
    return {nan, nan, nan, nan, nan, nan};
  }
  if (h <= h_dry) return {0.0, 0.0, 0.0, 0.0, 0.0, z};
  return {h, hu, hv, hu / h, hv / h, h + z};
}

// The concentration written for one cell: NaN where inactive, else
// concentration(hc, h). The dry rule does not apply: the transport keeps a
// concentration within the range of its neighbours', however shallow the water.
inline double cell_concentration(double hc, double h, double z) {
  return std::isnan(z) ? std::nan("") : concentration(hc, h);
}

// One output time. The float fields are the cell_values of every cell
// (NaN on inactive cells) and the cell_concentration of every scalar (c, in
// OutputSettings::scalars order), filled only when a writer asked for them.
struct Frame {
  double time = 0;
  std::size_t index = 0;  // 0, 1, 2, ... (file numbering)
  const Fields* raw = nullptr;
  std::vector<float> h, hu, hv, u, v, eta;
  std::vector<std::vector<float>> c;
  VolumeAccount account;
};

class FormatWriter {
 public:
  virtual ~FormatWriter() = default;
  virtual bool needs_derived() const { return true; }
  virtual void write(const Frame& frame) = 0;
  virtual void finish(const Maxima& maxima) = 0;
};

// Factories; each throws InputError ("this build has no ... support") when
// the library was not available at build time.
std::unique_ptr<FormatWriter> make_netcdf_writer(const Context& ctx);
std::unique_ptr<FormatWriter> make_vtk_writer(const Context& ctx);
std::unique_ptr<FormatWriter> make_png_writer(const Context& ctx);
std::unique_ptr<FormatWriter> make_geotiff_writer(const Context& ctx);
// A map of one value per grid cell as a GeoTIFF (north up, the case's coordinate system; inactive -> NoData);
// depth: values at or below the dry threshold are written 0.
void write_geotiff_map(const Context& ctx, const fs::path& final_path, const std::vector<double>& values, bool depth);
// A PNG map of one value per cell over the hill-shaded bed (cells at or below the dry threshold show the bed),
// its colour bar labelled `label` from 0 to the largest value.
void write_png_map(const Context& ctx, const fs::path& final_path, const std::vector<double>& values,
                   const std::string& title, const std::string& label);
// cells: gauge_cells(ctx), found once (a pass over a large mesh).
// sparse: the frames hold the gauges' cells alone, in gauge order (OutputWriter::gauge_cells).
std::unique_ptr<FormatWriter> make_gauge_writer(const Context& ctx, std::vector<std::size_t> cells, bool sparse);

// Index of the cell holding each gauge; throws InputError naming a gauge that
// is outside the domain, unnamed, named twice or named with CSV separators.
std::vector<std::size_t> gauge_cells(const Context& ctx);

// NetCDF-C is not thread-safe: every use of it holds this lock, so that runs side by side in one process (an
// ensemble's members) may write their files.
std::recursive_mutex& netcdf_mutex();

// Now in UTC, ISO 8601, for the files' history; SOURCE_DATE_EPOCH (reproducible-builds.org), where set, stands
// for now: two runs then write the same bytes.
std::string utc_now();

}  // namespace shallows::io::detail
