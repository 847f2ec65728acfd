// SPDX-License-Identifier: MIT
#pragma once
// Checkpoints: everything a run needs to go on from a moment as if it had not
// stopped (state in the run's precision, maxima, time, step count, output
// frames written), with the case text and a fingerprint of the inputs, so that
// a checkpoint of another case, version, precision, scheme or size is refused.
// Format and guarantees: docs/outputs.md#checkpoints.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/solver/fields.hpp"

namespace shallows::io {

struct Checkpoint {
  double t = 0;               // simulated time (s)
  index_t steps = 0;          // steps taken to reach t
  std::size_t frames = 0;     // output frames written, the one at t = 0 included
  double initial_volume = 0;  // water volume at t = 0 (summary.json's mass balance)
  double positivity_volume = 0;  // water the depth clamps added up to t (Backend::positivity_volume)
  Fields state;
  Maxima maxima;  // empty when the run does not track maxima
  ForcingState forcing;  // the forcing's infiltration and accounts up to t (empty vectors without forcing)
  std::vector<double> initial_scalar_mass;  // per passive scalar, at t = 0 (summary.json); state.hc holds h c
};

// The newest and the previous checkpoint of an output folder.
std::filesystem::path checkpoint_path(const std::filesystem::path& dir);
std::filesystem::path previous_checkpoint_path(const std::filesystem::path& dir);

// A 64-bit hash of what the run computes from: bed, initial state, grid or
// mesh, boundaries, physics, numerics, times and output settings (not the
// output folder). A changed raster, mesh file or --set changes it.
std::uint64_t case_fingerprint(const Case& c);

// Writes checkpoint_path(c.output.dir) as a .part file, fsync'ed and renamed;
// the one it replaces becomes previous_checkpoint_path. Throws
// std::runtime_error naming the file on an I/O error.
void write_checkpoint(const Case& c, const Checkpoint& k);

// Reads a checkpoint file, or from a folder the newest checkpoint that reads
// (the previous one when the newest is damaged, with a note on stderr), and
// checks it belongs to case c. Throws InputError naming the file and what is
// wrong: not a checkpoint, truncated, corrupted (checksum), another format or
// shallows version, precision, scheme, size or case.
Checkpoint read_checkpoint(const std::filesystem::path& file_or_dir, const Case& c);

}  // namespace shallows::io
