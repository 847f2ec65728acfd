// SPDX-License-Identifier: MIT
// libFuzzer harness of the ESRI ASCII raster reader: any bytes either read
// (then the grid they describe is built) or raise io::InputError; never a
// crash, a hang, a sanitizer report, another exception or an allocation the
// file cannot fill. Run by tools/fuzz.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "shallows/io/case.hpp"
#include "shallows/io/raster.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // read_ascii_raster takes a path: one file per process, rewritten for every input.
  static const std::string path = "/tmp/shallows-fuzz-" + std::to_string(getpid()) + ".asc";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const shallows::io::Raster r = shallows::io::read_ascii_raster(path);
    (void)r.grid();
    shallows::io::check_raster_size(r, r.ncols, r.nrows);
  } catch (const shallows::io::InputError&) {
  }
  return 0;
}
