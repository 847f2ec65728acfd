// SPDX-License-Identifier: MIT
#pragma once
// Case files: TOML (toml++) with muParser expressions and ESRI ASCII rasters.
// Every key is documented in docs/case-file.md.
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "shallows/io/input_error.hpp"
#include "shallows/solver/problem.hpp"

namespace shallows::io {

struct Gauge {
  std::string name;
  double x = 0;
  double y = 0;
};

// The output variable of a passive scalar (one per Problem::scalars, in order).
struct ScalarOutput {
  std::string name;
  std::string units = "1";  // of the concentration (CF/UDUNITS text; "1": dimensionless)
};

struct OutputSettings {
  std::filesystem::path dir = "output";
  std::vector<std::string> formats{"netcdf"};  // any of netcdf, vtk, png, geotiff
  std::string crs_wkt;  // the rasters' coordinate system (WKT); empty: none
  std::vector<Gauge> gauges;
  std::vector<ScalarOutput> scalars;  // empty: a run without passive scalars
  double arrival_threshold = 0.01;  // depth (m) that defines arrival_time
  // Floating-point type of output.nc's fields; a case file's default is the run's precision.
  Precision precision = Precision::single_precision;
  // Checkpoints every so many simulated seconds and/or wall-clock seconds; 0: none.
  double checkpoint_every = 0;
  double checkpoint_wall = 0;
};

// [parallel]: the process grid and halo of a run on several MPI ranks (grids only; exec/mpi). 0: not given
// (the command line's --ranks-x, --ranks-y, --halo-steps, or the defaults, decide: see set_parallel in run.hpp).
struct ParallelSettings {
  int ranks_x = 0;     // process grid columns
  int ranks_y = 0;     // process grid rows
  int halo_steps = 0;  // steps between halo exchanges
};

struct Case {
  std::string name;     // file stem, or "default"
  std::string source;   // file path or "<built-in>", for messages
  std::string text;     // the TOML text as read (kept in checkpoints)
  Problem problem;
  OutputSettings output;
  ParallelSettings parallel;
  std::vector<std::string> notes;  // what the user should know but is no error (e.g. a mesh in pieces)
};

// Fields given as values per cell instead of a number, an expression or a
// raster, by their key ("bathymetry.z", "initial.h", "physics.manning",
// "rain.rate", ...): on a grid nx * ny values row-major from the southern row
// (j * nx + i, the order of Problem's fields and of output.nc), on a mesh one
// per element of the mesh file in the file's order, whatever mesh.ordering
// renumbers (UnstructuredMesh::cell_file_index). A key whose field
// the case lacks is added, as --set would; NaN in bathymetry.z marks an
// inactive cell, as NODATA in a raster.
using FieldArrays = std::map<std::string, std::vector<double>>;
// What parse_case puts in the tree at an array's key (its section is then there and its key known); an ensemble's
// member whose field is an array gives it as its value.
inline constexpr std::string_view array_placeholder = "<values per cell>";

// Parses a case file. overrides: "section.key=value" strings (from --set),
// applied before validation; value is parsed as a TOML value, or taken as a
// string if that fails; then arrays, which take the place of their keys'
// values. Throws InputError naming the key (a size that does not match the
// cells, a key that is no field).
Case load_case(const std::filesystem::path& file, const std::vector<std::string>& overrides = {},
               const FieldArrays& arrays = {});

// Same, from text; relative raster paths resolve against base_dir.
Case parse_case(std::string_view toml_text, const std::string& source_name,
                const std::filesystem::path& base_dir, const std::vector<std::string>& overrides = {},
                const FieldArrays& arrays = {});

// The built-in default case (a dam break over a bump with a dry floodplain).
std::string_view default_case_toml();

} // namespace shallows::io
