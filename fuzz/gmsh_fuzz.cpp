// SPDX-License-Identifier: MIT
// libFuzzer harness of the Gmsh reader and the mesh build behind it: any
// bytes either read and build, or raise io::InputError; never a crash, a
// hang, a sanitizer report or another exception. Run by tools/fuzz.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "shallows/io/case.hpp"
#include "shallows/io/gmsh.hpp"
#include "shallows/mesh/unstructured/build.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // read_gmsh takes a path: one file per process, rewritten for every input.
  static const std::string path = "/tmp/shallows-fuzz-" + std::to_string(getpid()) + ".msh";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const shallows::io::GmshMesh m = shallows::io::read_gmsh(path);
    if (m.cell_nodes.size() <= 100000) (void)shallows::build_mesh(m, path);
  } catch (const shallows::io::InputError&) {
  }
  return 0;
}
