// SPDX-License-Identifier: MIT
// libFuzzer harness of the case reader: TOML text, expressions (muParser)
// and --set overrides. An input is the case text, then optionally a line
// "%%" followed by one override per line ("section.key=value"). Any input
// either parses or raises io::InputError; never a crash, a hang, a sanitizer
// report or another exception. Rasters and meshes named by the text resolve
// against fuzz/corpus/case-files/. Run by tools/fuzz.sh.
#include <toml++/toml.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "shallows/io/case.hpp"

namespace {

// Grid cells the input asks for through [domain] nx, ny (text or
// overrides), as far as a quick look can tell: inputs asking for more than
// the harness's memory allows are skipped (the reader's own limit, 2^32
// cells, is for machines, not for fuzzing).
long long requested_cells(const std::string& text, const std::vector<std::string>& sets) {
  long long nx = 1, ny = 1;
  const auto from = [&](const toml::table& t) {
    // Integers only (the reader refuses other sizes): toml++'s conversion of
    // a float beyond long long's range to long long is undefined behaviour.
    if (const auto* v = t["domain"]["nx"].as_integer()) nx = v->get();
    if (const auto* v = t["domain"]["ny"].as_integer()) ny = v->get();
  };
  try {
    from(toml::parse(text));
  } catch (const toml::parse_error&) {
  }
  for (const std::string& s : sets) {
    try {
      from(toml::parse(s));  // "domain.nx=5" and "domain={nx=5}" are TOML key/value pairs
    } catch (const toml::parse_error&) {
    }
  }
  nx = nx > 0 ? nx : 1;
  ny = ny > 0 ? ny : 1;
  constexpr long long limit = 1 << 20;  // each side: no overflow of the product
  return nx > limit || ny > limit ? limit * limit : nx * ny;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::string text = input;
  std::vector<std::string> sets;
  if (const std::size_t split = input.find("\n%%\n"); split != std::string::npos) {
    text = input.substr(0, split + 1);
    std::size_t pos = split + 4;
    while (pos < input.size()) {
      std::size_t end = input.find('\n', pos);
      if (end == std::string::npos) end = input.size();
      if (end > pos) sets.push_back(input.substr(pos, end - pos));
      pos = end + 1;
    }
  }
  const long long cells = requested_cells(text, sets);
  if (cells > 4096) return 0;
  static const char* dir = std::getenv("SHALLOWS_FUZZ_FILES");
  try {
    (void)shallows::io::parse_case(text, "case.toml", dir ? dir : ".", sets);
  } catch (const shallows::io::InputError&) {
  }
  return 0;
}
