// SPDX-License-Identifier: MIT
#pragma once
// Run outputs: NetCDF (CF; UGRID on meshes), VTK image data or unstructured
// grid + .pvd, gauge CSV, PNG quick-looks. Every file is written under a
// temporary name and renamed when complete.
#include <memory>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/mesh/structured/grid.hpp"
#include "shallows/mesh/unstructured/mesh.hpp"
#include "shallows/solver/fields.hpp"

namespace shallows::io {

// Outputs of an interrupted run to go on with (a restart from a checkpoint):
// the times of the frames it had written, the one at t = 0 first. Empty:
// a fresh run, whose outputs replace those of any earlier run.
struct OutputResume {
  std::vector<double> frame_times;
};

// The cell of problem p holding each of settings.gauges, in their order (the
// cells gauges.csv samples); throws InputError naming a gauge outside the
// grid or mesh, or a bad or repeated name.
std::vector<std::size_t> gauge_cells(const Problem& p, const OutputSettings& settings);

// structures.csv: at each output time, each structure's discharge over its
// last step (m^3/s) and the volume it has moved so far (m^3), columns
// <name>_discharge, <name>_volume in the order of Problem::forcing.structures.
class StructureSeriesWriter {
 public:
  // resume_rows > 0: a restart, whose interrupted file is reopened and cut
  // back to its first resume_rows rows.
  StructureSeriesWriter(const std::filesystem::path& dir, const std::vector<Structure>& structures,
                        std::size_t resume_rows = 0);
  ~StructureSeriesWriter();
  StructureSeriesWriter(const StructureSeriesWriter&) = delete;
  StructureSeriesWriter& operator=(const StructureSeriesWriter&) = delete;

  // One row; state: ForcingState::structures.
  void write(double time, const std::vector<double>& state);
  // Closes and renames the file.
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class OutputWriter {
 public:
  // z: interior bed (NaN = inactive); h_dry: cells at or below it are written dry.
  // resume: output.nc and gauges.csv of the interrupted run are reopened and
  // cut back to its frames (frames after them are written again), VTK and PNG
  // frames before them are kept.
  OutputWriter(const OutputSettings& settings, const Grid& grid, const std::vector<double>& z,
               double h_dry, const OutputResume& resume = {});
  // On a mesh: z and the fields hold one value per cell, in the mesh's cell order.
  OutputWriter(const OutputSettings& settings, std::shared_ptr<const UnstructuredMesh> mesh,
               const std::vector<double>& z, double h_dry, const OutputResume& resume = {});
  ~OutputWriter();
  OutputWriter(const OutputWriter&) = delete;
  OutputWriter& operator=(const OutputWriter&) = delete;

  // One output time: appends to output.nc (with the volume account), writes .vti/.vtu and .png, samples gauges.
  void write(double time, const Fields& fields, const VolumeAccount& account = {});
  // Whether write() and finish() use their fields (a format or a gauge asks for them).
  static bool writes_fields(const OutputSettings& settings);
  // Whether finish() uses the maxima (a format does; gauges alone do not).
  static bool writes_maxima(const OutputSettings& settings);
  // Gauges and no format: write() may take the values of gauge_cells() alone,
  // in that order (Backend::read_cells), instead of the whole state.
  static bool writes_gauges_only(const OutputSettings& settings);
  // Empty unless gauges only (and fewer gauges than cells).
  const std::vector<std::size_t>& gauge_cells() const;
  // End of run: maxima fields (NetCDF, PNG of max depth), closes and renames files. With gauges
  // alone the maxima may be empty.
  void finish(const Maxima& maxima);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  void open(const OutputSettings& settings, const std::vector<double>& z, double h_dry, const OutputResume& resume);
};

} // namespace shallows::io
