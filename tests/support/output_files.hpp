// SPDX-License-Identifier: MIT
#pragma once
// Reading back what the output writers wrote: whole files, XML attributes,
// CSV fields, leftover .part files, NetCDF attributes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#if defined(SHALLOWS_HAVE_NETCDF)
#include <netcdf.h>
#endif

namespace shallows::test_support {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The value of the first XML attribute `name="..."`, or "<missing>".
inline std::string attribute(const std::string& xml, const std::string& name) {
  const std::string key = name + "=\"";
  const auto a = xml.find(key);
  if (a == std::string::npos) return "<missing>";
  const auto b = xml.find('"', a + key.size());
  return xml.substr(a + key.size(), b - a - key.size());
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

// Files named *.part below dir (outputs not completed).
inline std::vector<std::filesystem::path> part_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> parts;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.path().extension() == ".part") parts.push_back(e.path());
  return parts;
}

#if defined(SHALLOWS_HAVE_NETCDF)
inline void nc_ok(int status) { ASSERT_EQ(status, NC_NOERR) << nc_strerror(status); }

// A text attribute of a variable (NC_GLOBAL for the file's), or "<missing>".
inline std::string nc_text(int nc, int var, const char* name) {
  std::size_t len = 0;
  if (nc_inq_attlen(nc, var, name, &len) != NC_NOERR) return "<missing>";
  std::string s(len, '\0');
  nc_get_att_text(nc, var, name, s.data());
  return s;
}
#endif

} // namespace shallows::test_support
