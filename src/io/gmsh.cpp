// SPDX-License-Identifier: MIT
// Gmsh MSH files: a reader for 2.2 and 4.1 (ASCII and binary) and a 4.1
// writer. The reader holds the whole file in memory and checks every count
// it takes from the file against the bytes left before it allocates or loops
// on it, so a damaged file ends in an InputError, never in a crash or a hang.
#include "shallows/io/gmsh.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "output_detail.hpp"
#include "shallows/io/case.hpp"

namespace shallows::io {
namespace {

namespace fs = std::filesystem;

constexpr int type_line = 1;
constexpr int type_triangle = 2;
constexpr int type_quad = 3;
constexpr int type_point = 15;

// Nodes per element for the types we read; 0 for every other type.
int nodes_of(std::int64_t type) {
  switch (type) {
    case type_line: return 2;
    case type_triangle: return 3;
    case type_quad: return 4;
    case type_point: return 1;
    default: return 0;
  }
}

std::string type_name(std::int64_t type) {
  switch (type) {
    case 4: return " (4-node tetrahedron)";
    case 5: return " (8-node hexahedron)";
    case 6: return " (6-node prism)";
    case 7: return " (5-node pyramid)";
    case 8: return " (3-node second-order line)";
    case 9: return " (6-node second-order triangle)";
    case 10: return " (9-node second-order quadrangle)";
    case 11: return " (10-node second-order tetrahedron)";
    case 16: return " (8-node second-order quadrangle)";
    case 20: return " (9-node third-order triangle)";
    case 21: return " (10-node third-order triangle)";
    default: return "";
  }
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

// A token for a message: short, printable (binary files give garbage).
std::string shown(std::string_view tok) {
  constexpr std::size_t max_len = 40;
  std::string s;
  for (char c : tok.substr(0, max_len)) s += (c >= 32 && c < 127) ? c : '?';
  if (tok.size() > max_len) s += "...";
  return "'" + s + "'";
}

enum class Version { v22, v41 };

// 4.1 line elements whose block is not on a curve get no physical group.
constexpr int no_curve = INT_MIN;

class GmshReader {
 public:
  GmshReader(const fs::path& file, std::string_view data) : file_(file), data_(data) {}

  GmshMesh read() {
    read_format();
    for (;;) {
      skip_space();
      if (pos_ >= data_.size()) break;
      const std::size_t at = pos_;
      const std::string_view t = token("a section");
      if (t.size() < 2 || t.front() != '$')
        fail_at(at, "expected a section such as $Nodes, found " + shown(t));
      const std::string name(t.substr(1));
      if (name.starts_with("End")) fail_at(at, shown(t) + " without a matching $" + name.substr(3));
      if (name == "MeshFormat") fail_at(at, "second $MeshFormat section");
      section_ = name;
      section_pos_ = at;
      end_of_line();
      if (name == "PhysicalNames") read_physical_names();
      else if (name == "Entities" && version_ == Version::v41) read_entities();
      else if (name == "Nodes") read_nodes();
      else if (name == "Elements") read_elements();
      else skip_section();  // $Periodic, $NodeData, $Comments, ...
    }
    return finish();
  }

 private:
  // ---- errors: "file:line: what" (ASCII) or "file (byte N): what" (binary)

  [[noreturn]] void fail_at(std::size_t pos, const std::string& what) const {
    std::string msg = file_.string();
    if (binary_) msg += " (byte " + std::to_string(pos) + ")";
    else msg += ":" + std::to_string(line_of(pos));
    throw InputError(msg + ": " + what);
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(mark_, what); }
  [[noreturn]] void fail_eof(const std::string& expected) const {
    fail_at(data_.size(),
            "unexpected end of file inside " + section_name() + " (expected " + expected + "; truncated file?)");
  }

  std::size_t line_of(std::size_t pos) const {
    std::size_t p = std::min(pos, data_.size());
    if (p == data_.size() && p > 0) --p;  // end of file: report the last line
    return 1 + static_cast<std::size_t>(std::count(data_.data(), data_.data() + p, '\n'));
  }

  std::size_t left() const { return data_.size() - pos_; }

  // "$Name" of the current section, printable (unknown sections come from the file).
  std::string section_name() const {
    const std::string q = shown("$" + section_);
    return q.substr(1, q.size() - 2);
  }

  // ---- ASCII

  void skip_space() {
    while (pos_ < data_.size() && is_space(data_[pos_])) ++pos_;
  }

  std::string_view token(const char* what) {
    skip_space();
    if (pos_ >= data_.size()) fail_eof(what);
    mark_ = pos_;
    std::size_t q = pos_;
    while (q < data_.size() && !is_space(data_[q])) ++q;
    const std::string_view t = data_.substr(pos_, q - pos_);
    pos_ = q;
    return t;
  }

  std::int64_t integer(const char* what) {
    const std::string_view t = token(what);
    std::string_view s = t;
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    std::int64_t v = 0;
    const char* end = s.data() + s.size();
    const auto [ptr, ec] = std::from_chars(s.data(), end, v);
    if (s.empty() || ec != std::errc() || ptr != end)
      fail("malformed integer " + shown(t) + " (expected " + what + ")");
    return v;
  }

  std::int64_t count(const char* what) {
    const std::int64_t v = integer(what);
    if (v < 0) fail("negative count " + std::to_string(v) + " (" + what + ")");
    return v;
  }

  double real(const char* what, bool finite = true) {
    const std::string_view t = token(what);
    std::string_view s = t;
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    double v = 0;
    const char* end = s.data() + s.size();
    const auto [ptr, ec] = std::from_chars(s.data(), end, v);
    if (s.empty() || ec != std::errc() || ptr != end)
      fail("malformed number " + shown(t) + " (expected " + what + ")");
    if (finite && !std::isfinite(v)) fail("not a finite number: " + shown(t) + " (" + what + ")");
    return v;
  }

  // Past the end of the current line. Binary data starts right after the
  // newline of a section marker or a count, so exactly one is taken.
  void end_of_line() {
    while (pos_ < data_.size() && (data_[pos_] == ' ' || data_[pos_] == '\t' || data_[pos_] == '\r')) ++pos_;
    if (pos_ >= data_.size()) return;  // the next read reports the end of file
    if (data_[pos_] != '\n') fail_at(pos_, "unexpected text at the end of a line: " + shown(data_.substr(pos_, 20)));
    ++pos_;
  }

  void expect_end() {
    const std::string want = "$End" + section_;
    const std::string_view t = token(want.c_str());
    if (t != want)
      fail("expected " + want + ", found " + shown(t) +
           (section_ == "MeshFormat" ? "" : " (do the counts in $" + section_ + " match its contents?)"));
  }

  // ---- binary

  template <class T>
  T raw(const char* what) {
    if (left() < sizeof(T)) fail_eof(what);
    mark_ = pos_;
    unsigned char b[sizeof(T)];
    std::memcpy(b, data_.data() + pos_, sizeof(T));
    if (swap_) std::reverse(b, b + sizeof(T));
    T v;
    std::memcpy(&v, b, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  // Fails unless count items of `each` bytes fit in what is left of the file.
  void need(std::int64_t count, std::uint64_t each, const char* what) {
    const std::uint64_t n = static_cast<std::uint64_t>(count);
    if (each != 0 && n > left() / each)
      fail_at(pos_, "unexpected end of file inside " + section_name() + ": " + std::to_string(n) + " " + what + " of " +
                        std::to_string(each) + " bytes need more than the " + std::to_string(left()) +
                        " bytes left (truncated file?)");
  }

  // ---- fields whose form depends on the file type

  std::int64_t int_field(const char* what) { return binary_ ? raw<std::int32_t>(what) : integer(what); }

  // 4.1: counts and tags are size_t (data-size bytes) in binary files.
  std::int64_t size_field(const char* what) {
    if (!binary_) return count(what);
    std::uint64_t v = 0;
    if (size_bytes_ == 4) v = raw<std::uint32_t>(what);
    else v = raw<std::uint64_t>(what);
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail("value " + std::to_string(v) + " too large (" + what + ")");
    return static_cast<std::int64_t>(v);
  }

  double double_field(const char* what, bool finite = true) {
    if (!binary_) return real(what, finite);
    const double v = raw<double>(what);
    if (finite && !std::isfinite(v)) fail(std::string("not a finite number (") + what + ")");
    return v;
  }

  void skip_doubles(int n, const char* what) {
    if (binary_) {
      need(n, 8, what);
      pos_ += 8 * static_cast<std::size_t>(n);
    } else {
      for (int i = 0; i < n; ++i) real(what, false);
    }
  }

  int to_int(std::int64_t v, const char* what) {
    if (v < INT_MIN || v > INT_MAX) fail(std::string(what) + " " + std::to_string(v) + " out of range");
    return static_cast<int>(v);
  }

  // How many items to reserve: no more than the rest of the file can hold.
  std::size_t hint(std::int64_t count, std::size_t min_bytes) const {
    return static_cast<std::size_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(count), left() / min_bytes));
  }

  // ---- sections

  void read_format() {
    if (data_.starts_with("\xEF\xBB\xBF")) pos_ = 3;  // UTF-8 byte order mark
    skip_space();
    if (pos_ >= data_.size()) fail_at(0, "empty file, not a Gmsh MSH file");
    const std::size_t at = pos_;
    const std::string_view first = token("$MeshFormat");
    if (first == "$NOD" || first == "$NOE")
      fail_at(at, "MSH version 1.0 is not supported (supported: 2.2 and 4.1; re-save the mesh from Gmsh, e.g. "
                  "gmsh in.msh -save -format msh41 -o out.msh)");
    if (first != "$MeshFormat")
      fail_at(at, "not a Gmsh MSH file (expected $MeshFormat, found " + shown(first) + ")");
    section_pos_ = at;
    end_of_line();

    const std::string_view vt = token("the format version");
    double v = 0;
    const auto [ptr, ec] = std::from_chars(vt.data(), vt.data() + vt.size(), v);
    if (ec != std::errc() || ptr != vt.data() + vt.size()) fail("malformed MSH version " + shown(vt));
    if (std::abs(v - 2.2) < 1e-9) version_ = Version::v22;
    else if (std::abs(v - 4.1) < 1e-9) version_ = Version::v41;
    else
      fail("MSH version " + std::string(vt) +
           " is not supported (supported: 2.2 and 4.1; re-save the mesh from Gmsh, e.g. "
           "gmsh in.msh -save -format msh41 -o out.msh)");
    const std::int64_t file_type = integer("the file type (0: ASCII, 1: binary)");
    if (file_type != 0 && file_type != 1)
      fail("file type must be 0 (ASCII) or 1 (binary), found " + std::to_string(file_type));
    const std::int64_t data_size = integer("the data size");
    binary_ = file_type == 1;
    if (binary_) {
      // 2.2: the size of a double. 4.1: the size of size_t, the type of tags and counts.
      if (version_ == Version::v22 && data_size != 8)
        fail("data size " + std::to_string(data_size) + " not supported (MSH 2.2 binary needs 8)");
      if (version_ == Version::v41 && data_size != 4 && data_size != 8)
        fail("data size " + std::to_string(data_size) + " not supported (MSH 4.1 binary needs 4 or 8)");
      size_bytes_ = static_cast<std::size_t>(data_size);
      end_of_line();
      const std::uint32_t one = raw<std::uint32_t>("the endianness marker (the integer 1)");
      if (one == 0x01000000u) swap_ = true;  // written on a machine of the other byte order
      else if (one != 1) fail("bad endianness marker " + std::to_string(one) + " (expected the integer 1)");
    }
    expect_end();
  }

  void read_physical_names() {
    const std::int64_t n = count("the number of physical names");
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t dim = integer("a physical group dimension");
      if (dim < 0 || dim > 3) fail("physical group dimension must be 0 to 3, found " + std::to_string(dim));
      const int tag = to_int(integer("a physical tag"), "physical tag");
      while (pos_ < data_.size() && (data_[pos_] == ' ' || data_[pos_] == '\t')) ++pos_;
      if (pos_ >= data_.size()) fail_eof("a double-quoted physical name");
      if (data_[pos_] != '"')
        fail_at(pos_, "expected a double-quoted physical name, found " + shown(data_.substr(pos_, 20)));
      const std::size_t close = data_.find_first_of("\"\n", pos_ + 1);
      if (close == std::string_view::npos) fail_eof("the closing quote of a physical name");
      if (data_[close] != '"') fail_at(pos_, "physical name without a closing quote on its line");
      if (dim == 1) names_1d_[tag] = std::string(data_.substr(pos_ + 1, close - pos_ - 1));
      pos_ = close + 1;
    }
    expect_end();
  }

  // 4.1: only the first physical tag of each curve is kept (line groups);
  // the rest is read to move past it.
  void read_entities() {
    std::int64_t counts[4];
    for (auto& c : counts) c = size_field("an entity count");
    for (int dim = 0; dim < 4; ++dim) {
      for (std::int64_t i = 0; i < counts[dim]; ++i) {
        const std::int64_t tag = int_field("an entity tag");
        skip_doubles(dim == 0 ? 3 : 6, "bounding box coordinates");
        const std::int64_t nphys = size_field("the number of physical tags");
        if (binary_) need(nphys, 4, "physical tags");
        for (std::int64_t j = 0; j < nphys; ++j) {
          const int phys = to_int(int_field("a physical tag"), "physical tag");
          if (dim == 1 && j == 0) curve_physical_[to_int(tag, "entity tag")] = phys;
        }
        if (dim == 0) continue;
        const std::int64_t nbound = size_field("the number of bounding entities");
        if (binary_) need(nbound, 4, "bounding entity tags");
        for (std::int64_t j = 0; j < nbound; ++j) int_field("a bounding entity tag");
      }
    }
    expect_end();
  }

  void add_node(std::int64_t tag, double x, double y, double z) {
    mesh_.node_tag.push_back(tag);
    mesh_.node_x.push_back(x);
    mesh_.node_y.push_back(y);
    mesh_.node_z.push_back(z);
  }

  void reserve_nodes(std::size_t n) {
    mesh_.node_tag.reserve(n);
    mesh_.node_x.reserve(n);
    mesh_.node_y.reserve(n);
    mesh_.node_z.reserve(n);
  }

  void read_nodes() {
    if (have_nodes_) fail_at(section_pos_, "second $Nodes section (only one is supported)");
    have_nodes_ = true;
    if (version_ == Version::v41) read_nodes_41();
    else read_nodes_22();
    expect_end();
    index_nodes();
  }

  void read_nodes_22() {
    const std::int64_t n = count("the number of nodes");
    if (binary_) {
      end_of_line();
      need(n, 4 + 3 * 8, "nodes");
    }
    reserve_nodes(hint(n, binary_ ? 28 : 8));
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t tag = int_field("a node tag");
      const double x = double_field("a node x coordinate");
      const double y = double_field("a node y coordinate");
      const double z = double_field("a node z coordinate");
      add_node(tag, x, y, z);
    }
  }

  void read_nodes_41() {
    const std::int64_t blocks = size_field("the number of node blocks");
    const std::int64_t total = size_field("the number of nodes");
    size_field("the smallest node tag");
    size_field("the largest node tag");
    if (binary_) need(total, size_bytes_ + 3 * 8, "nodes");
    reserve_nodes(hint(total, binary_ ? size_bytes_ + 3 * 8 : 8));
    std::int64_t done = 0;
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::int64_t dim = int_field("an entity dimension");
      if (dim < 0 || dim > 3) fail("entity dimension must be 0 to 3, found " + std::to_string(dim));
      int_field("an entity tag");
      const std::int64_t parametric = int_field("the parametric flag");
      if (parametric != 0 && parametric != 1)
        fail("parametric flag must be 0 or 1, found " + std::to_string(parametric));
      const std::int64_t n = size_field("the number of nodes in the block");
      if (n > total - done)
        fail("node blocks hold more than the " + std::to_string(total) + " nodes the $Nodes header declares");
      // Parametric nodes carry u (curve), u v (surface) or u v w (volume) after x y z.
      const int extra = parametric ? static_cast<int>(dim) : 0;
      if (binary_) need(n, size_bytes_ + 8 * static_cast<std::uint64_t>(3 + extra), "nodes");
      for (std::int64_t j = 0; j < n; ++j) mesh_.node_tag.push_back(size_field("a node tag"));
      for (std::int64_t j = 0; j < n; ++j) {
        mesh_.node_x.push_back(double_field("a node x coordinate"));
        mesh_.node_y.push_back(double_field("a node y coordinate"));
        mesh_.node_z.push_back(double_field("a node z coordinate"));
        for (int k = 0; k < extra; ++k) double_field("a parametric coordinate", false);
      }
      done += n;
    }
    if (done != total)
      fail("the $Nodes header declares " + std::to_string(total) + " nodes, its blocks hold " + std::to_string(done));
  }

  // Dense tags (the usual 1..n) index through a vector, others through a hash map.
  void index_nodes() {
    const auto& tags = mesh_.node_tag;
    if (tags.empty()) return;
    const auto [lo, hi] = std::minmax_element(tags.begin(), tags.end());
    tag_min_ = *lo;
    const std::uint64_t span = static_cast<std::uint64_t>(*hi) - static_cast<std::uint64_t>(*lo);
    dense_ = span < 4 * static_cast<std::uint64_t>(tags.size()) + 1024;
    auto duplicate = [&](std::int64_t t) {
      fail_at(section_pos_, "node tag " + std::to_string(t) + " appears more than once in $Nodes");
    };
    if (dense_) {
      dense_index_.assign(static_cast<std::size_t>(span) + 1, -1);
      for (std::size_t i = 0; i < tags.size(); ++i) {
        auto& slot = dense_index_[offset(tags[i])];
        if (slot >= 0) duplicate(tags[i]);
        slot = static_cast<std::int64_t>(i);
      }
    } else {
      sparse_index_.reserve(tags.size());
      for (std::size_t i = 0; i < tags.size(); ++i)
        if (!sparse_index_.emplace(tags[i], static_cast<std::int64_t>(i)).second) duplicate(tags[i]);
    }
  }

  // tag - tag_min_ without signed overflow (tags may span the int64 range).
  std::size_t offset(std::int64_t tag) const {
    return static_cast<std::size_t>(static_cast<std::uint64_t>(tag) - static_cast<std::uint64_t>(tag_min_));
  }

  std::int64_t find_node(std::int64_t tag) const {
    if (dense_) {
      if (dense_index_.empty() || tag < tag_min_) return -1;
      const std::size_t slot = offset(tag);
      return slot < dense_index_.size() ? dense_index_[slot] : -1;
    }
    const auto it = sparse_index_.find(tag);
    return it == sparse_index_.end() ? -1 : it->second;
  }

  [[noreturn]] void unsupported(std::size_t at, std::int64_t tag, std::int64_t type) const {
    fail_at(at, "element " + std::to_string(tag) + " has type " + std::to_string(type) + type_name(type) +
                    ", which is not supported (only 2-node lines (1), 3-node triangles (2), 4-node quadrangles (3) "
                    "and points (15, skipped))");
  }

  // at: where the element starts, for messages. physical: 2.2; curve: 4.1.
  void add_element(std::size_t at, std::int64_t tag, std::int64_t type, const std::int64_t* nodes, int physical,
                   int curve) {
    std::array<std::int64_t, 4> idx{-1, -1, -1, -1};
    const int nn = nodes_of(type);
    for (int k = 0; k < nn; ++k) {
      idx[k] = find_node(nodes[k]);
      if (idx[k] < 0)
        fail_at(at, "element " + std::to_string(tag) + " names node " + std::to_string(nodes[k]) +
                        ", which is not in $Nodes");
    }
    if (type == type_point) return;  // neither a cell nor a boundary segment
    if (type == type_line) {
      mesh_.line_nodes.push_back({idx[0], idx[1]});
      mesh_.line_physical.push_back(physical);
      line_curve_.push_back(curve);
      return;
    }
    mesh_.cell_nodes.push_back(idx);
    mesh_.cell_tag.push_back(tag);
  }

  void read_elements() {
    if (have_elements_) fail_at(section_pos_, "second $Elements section (only one is supported)");
    if (!have_nodes_) fail_at(section_pos_, "$Elements before $Nodes (the nodes must come first)");
    have_elements_ = true;
    elements_pos_ = section_pos_;
    if (version_ == Version::v41) read_elements_41();
    else if (binary_) read_elements_22_binary();
    else read_elements_22_ascii();
    expect_end();
  }

  // 2.2 ASCII: tag type ntags tag... node..., the first tag is the physical one.
  void read_elements_22_ascii() {
    const std::int64_t n = count("the number of elements");
    std::int64_t nodes[4];
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t tag = integer("an element tag");
      const std::size_t at = mark_;
      const std::int64_t type = integer("an element type");
      const int nn = nodes_of(type);
      if (nn == 0) unsupported(at, tag, type);
      const std::int64_t ntags = count("the number of element tags");
      int physical = 0;
      for (std::int64_t j = 0; j < ntags; ++j) {
        const std::int64_t v = integer("an element tag value");
        if (j == 0) physical = to_int(v, "physical tag");
      }
      for (int k = 0; k < nn; ++k) nodes[k] = integer("a node tag");
      add_element(at, tag, type, nodes, physical, 0);
    }
  }

  // 2.2 binary: blocks headed by (type, count, ntags), then per element
  // tag, ntags tags and the nodes, all 4-byte ints.
  void read_elements_22_binary() {
    const std::int64_t n = count("the number of elements");
    end_of_line();
    std::int64_t nodes[4];
    std::int64_t done = 0;
    while (done < n) {
      const std::int64_t type = raw<std::int32_t>("an element block header");
      const std::size_t header_at = mark_;
      const std::int64_t in_block = raw<std::int32_t>("an element block header");
      const std::int64_t ntags = raw<std::int32_t>("an element block header");
      if (in_block < 0 || in_block > n - done)
        fail_at(header_at, "element block of " + std::to_string(in_block) + " elements, but " +
                               std::to_string(n - done) + " of the " + std::to_string(n) + " declared are left");
      if (ntags < 0) fail_at(header_at, "element block with " + std::to_string(ntags) + " tags");
      const int nn = nodes_of(type);
      if (nn == 0) {
        if (in_block == 0) continue;
        const std::int64_t tag = raw<std::int32_t>("an element tag");
        unsupported(mark_, tag, type);
      }
      need(in_block, 4 * static_cast<std::uint64_t>(1 + ntags + nn), "elements");
      for (std::int64_t j = 0; j < in_block; ++j) {
        const std::int64_t tag = raw<std::int32_t>("an element tag");
        const std::size_t at = mark_;
        int physical = 0;
        for (std::int64_t t = 0; t < ntags; ++t) {
          const std::int32_t v = raw<std::int32_t>("an element tag value");
          if (t == 0) physical = v;
        }
        for (int k = 0; k < nn; ++k) nodes[k] = raw<std::int32_t>("a node tag");
        add_element(at, tag, type, nodes, physical, 0);
      }
      done += in_block;
    }
  }

  void read_elements_41() {
    const std::int64_t blocks = size_field("the number of element blocks");
    const std::int64_t total = size_field("the number of elements");
    size_field("the smallest element tag");
    size_field("the largest element tag");
    std::int64_t nodes[4];
    std::int64_t done = 0;
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::int64_t dim = int_field("an entity dimension");
      const std::int64_t entity = int_field("an entity tag");
      const std::int64_t type = int_field("an element type");
      const std::int64_t n = size_field("the number of elements in the block");
      if (n > total - done)
        fail("element blocks hold more than the " + std::to_string(total) + " elements the $Elements header declares");
      const int nn = nodes_of(type);
      if (nn == 0) {
        if (n == 0) continue;
        const std::int64_t tag = size_field("an element tag");
        unsupported(mark_, tag, type);
      }
      if (binary_) need(n, size_bytes_ * static_cast<std::uint64_t>(1 + nn), "elements");
      const int curve = dim == 1 ? to_int(entity, "entity tag") : no_curve;
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t tag = size_field("an element tag");
        const std::size_t at = mark_;
        for (int k = 0; k < nn; ++k) nodes[k] = size_field("a node tag");
        add_element(at, tag, type, nodes, 0, curve);
      }
      done += n;
    }
    if (done != total)
      fail("the $Elements header declares " + std::to_string(total) + " elements, its blocks hold " +
           std::to_string(done));
  }

  // Unknown sections end at a line starting with $End<name>.
  void skip_section() {
    const std::string end = "$End" + section_;
    for (std::size_t p = pos_;; ++p) {
      p = data_.find(end, p);
      if (p == std::string_view::npos)
        fail_at(data_.size(), "unexpected end of file inside " + section_name() + ": no $End" +
                                  section_name().substr(1) + " (truncated file?)");
      const std::size_t after = p + end.size();
      if ((p == 0 || is_space(data_[p - 1])) && (after == data_.size() || is_space(data_[after]))) {
        pos_ = after;
        return;
      }
    }
  }

  GmshMesh finish() {
    if (version_ == Version::v41) {
      for (std::size_t i = 0; i < line_curve_.size(); ++i) {
        const auto it = curve_physical_.find(line_curve_[i]);
        mesh_.line_physical[i] = it == curve_physical_.end() ? 0 : it->second;
      }
    }
    for (int p : mesh_.line_physical)
      if (p != 0) names_1d_.try_emplace(p, "");
    mesh_.line_physical_names = std::move(names_1d_);
    if (!have_elements_) fail_at(data_.size(), "no $Elements section: the file holds no mesh");
    if (mesh_.cell_nodes.empty())
      fail_at(elements_pos_, "no triangles or quadrangles (element types 2 and 3): a 2D mesh is needed");
    return std::move(mesh_);
  }

  const fs::path& file_;
  std::string_view data_;
  std::size_t pos_ = 0;
  std::size_t mark_ = 0;  // start of the last item read, for messages
  std::string section_ = "MeshFormat";
  std::size_t section_pos_ = 0;
  Version version_ = Version::v41;
  bool binary_ = false;
  bool swap_ = false;
  std::size_t size_bytes_ = 8;

  GmshMesh mesh_;
  bool have_nodes_ = false;
  bool have_elements_ = false;
  std::size_t elements_pos_ = 0;
  bool dense_ = true;
  std::int64_t tag_min_ = 0;
  std::vector<std::int64_t> dense_index_;
  std::unordered_map<std::int64_t, std::int64_t> sparse_index_;
  std::vector<int> line_curve_;                 // 4.1: curve entity of each line
  std::unordered_map<int, int> curve_physical_;  // 4.1: curve entity -> first physical tag
  std::map<int, std::string> names_1d_;
};

std::string read_all(const fs::path& file) {
  std::error_code ec;
  if (fs::is_directory(file, ec)) throw InputError(file.string() + ": is a directory, not a Gmsh MSH file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string() + ": cannot open Gmsh MSH file (" + std::strerror(errno) + ")");
  std::string data;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size > 0) {
    data.resize(static_cast<std::size_t>(size));
    in.read(data.data(), size);
    data.resize(static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad() || size < 0) throw InputError(file.string() + ": read error");
  return data;
}

// ---------------------------------------------------------------------------
// Writing

// Values in ASCII ("v v v\n") or binary (native byte order, announced by the
// endianness marker): int -> int32, size -> uint64 (data-size 8), double.
class Emitter {
 public:
  explicit Emitter(bool binary) : binary_(binary) {}

  void text(std::string_view s) { out_ += s; }
  void int32(std::int64_t v) {
    if (binary_) put_raw(static_cast<std::int32_t>(v));
    else put_text(v);
  }
  void size(std::uint64_t v) {
    if (binary_) put_raw(v);
    else put_text(v);
  }
  void real(double v) {
    if (binary_) return put_raw(v);
    char buf[40];
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 17);  // "%.17g"
    out_.append(buf, r.ptr);
    out_ += ' ';
  }
  void eol() {
    if (binary_) return;
    if (!out_.empty() && out_.back() == ' ') out_.back() = '\n';
    else out_ += '\n';
  }
  void begin(std::string_view name) {
    out_ += '$';
    out_ += name;
    out_ += '\n';
  }
  void end(std::string_view name) {
    if (binary_) out_ += '\n';
    out_ += "$End";
    out_ += name;
    out_ += '\n';
  }
  std::string& str() { return out_; }

 private:
  template <class T>
  void put_raw(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out_.append(b, sizeof(T));
  }
  template <class T>
  void put_text(T v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
    out_ += ' ';
  }
  bool binary_;
  std::string out_;
};

struct Bounds3 {
  double lo[3] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
                  std::numeric_limits<double>::infinity()};
  double hi[3] = {-std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                  -std::numeric_limits<double>::infinity()};
  void add(double x, double y, double z) {
    const double p[3] = {x, y, z};
    for (int k = 0; k < 3; ++k) {
      lo[k] = std::min(lo[k], p[k]);
      hi[k] = std::max(hi[k], p[k]);
    }
  }
  void emit(Emitter& e) const {
    const bool empty = lo[0] > hi[0];
    for (int k = 0; k < 3; ++k) e.real(empty ? 0.0 : lo[k]);
    for (int k = 0; k < 3; ++k) e.real(empty ? 0.0 : hi[k]);
  }
};

// Tags as given if there are any (positive and unique), else 1, 2, 3, ...
std::vector<std::int64_t> tags_or_sequence(const std::vector<std::int64_t>& given, std::size_t n,
                                           const std::string& where, const char* what) {
  if (given.empty()) {
    std::vector<std::int64_t> t(n);
    for (std::size_t i = 0; i < n; ++i) t[i] = static_cast<std::int64_t>(i) + 1;
    return t;
  }
  if (given.size() != n)
    throw std::invalid_argument(where + ": " + what + " has " + std::to_string(given.size()) + " entries for " +
                                std::to_string(n) + " items");
  std::vector<std::int64_t> sorted = given;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.front() <= 0) throw std::invalid_argument(where + ": " + what + " must be positive");
  const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) throw std::invalid_argument(where + ": " + what + " " + std::to_string(*dup) + " repeated");
  return given;
}

} // namespace

GmshMesh read_gmsh(const fs::path& file) {
  const std::string data = read_all(file);
  return GmshReader(file, data).read();
}

void write_gmsh(const fs::path& file, const GmshMesh& mesh, bool binary) {
  const std::string where = "write_gmsh " + file.string();
  auto bad = [&](const std::string& what) { throw std::invalid_argument(where + ": " + what); };

  // ---- check what we are given, so that the file reads back
  const std::size_t n = mesh.node_x.size();
  if (mesh.node_y.size() != n || (mesh.node_z.size() != n && !mesh.node_z.empty()))
    bad("node_x, node_y, node_z differ in size");
  auto z_of = [&](std::size_t i) { return mesh.node_z.empty() ? 0.0 : mesh.node_z[i]; };
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(mesh.node_x[i]) || !std::isfinite(mesh.node_y[i]) || !std::isfinite(z_of(i)))
      bad("node " + std::to_string(i) + " has a non-finite coordinate");
  const std::vector<std::int64_t> node_tag = tags_or_sequence(mesh.node_tag, n, where, "node_tag");
  const auto valid = [&](std::int64_t k) { return k >= 0 && static_cast<std::uint64_t>(k) < n; };
  for (std::size_t c = 0; c < mesh.cell_nodes.size(); ++c) {
    const auto& cn = mesh.cell_nodes[c];
    if (!valid(cn[0]) || !valid(cn[1]) || !valid(cn[2]) || !(cn[3] == -1 || valid(cn[3])))
      bad("cell " + std::to_string(c) + " names a node index out of range");
  }
  for (std::size_t l = 0; l < mesh.line_nodes.size(); ++l)
    if (!valid(mesh.line_nodes[l][0]) || !valid(mesh.line_nodes[l][1]))
      bad("line " + std::to_string(l) + " names a node index out of range");
  const std::vector<std::int64_t> cell_tag =
      tags_or_sequence(mesh.cell_tag, mesh.cell_nodes.size(), where, "cell_tag");
  if (!mesh.line_physical.empty() && mesh.line_physical.size() != mesh.line_nodes.size())
    bad("line_physical and line_nodes differ in size");
  auto physical_of = [&](std::size_t l) { return mesh.line_physical.empty() ? 0 : mesh.line_physical[l]; };
  for (std::size_t l = 0; l < mesh.line_nodes.size(); ++l)
    if (physical_of(l) < 0) bad("line " + std::to_string(l) + " has a negative physical tag");
  for (const auto& [tag, name] : mesh.line_physical_names) {
    if (tag <= 0) bad("physical tag " + std::to_string(tag) + " is not positive");
    if (name.find_first_of("\"\n\r") != std::string::npos)
      bad("physical name '" + name + "' holds a quote or a line break");
  }

  // ---- one curve entity per physical group of lines (group 0: none)
  std::set<int> groups;
  for (std::size_t l = 0; l < mesh.line_nodes.size(); ++l) groups.insert(physical_of(l));
  std::map<int, int> curve_of;  // physical -> curve entity tag
  std::map<int, Bounds3> curve_box;
  int next_curve = 1;
  for (int p : groups) curve_of[p] = next_curve++;
  for (std::size_t l = 0; l < mesh.line_nodes.size(); ++l)
    for (std::int64_t k : mesh.line_nodes[l]) {
      const auto i = static_cast<std::size_t>(k);
      curve_box[physical_of(l)].add(mesh.node_x[i], mesh.node_y[i], z_of(i));
    }
  Bounds3 surface_box;
  for (std::size_t i = 0; i < n; ++i) surface_box.add(mesh.node_x[i], mesh.node_y[i], z_of(i));

  // Element blocks over runs of the same entity and type keep the file order.
  struct Run {
    std::size_t begin, end;
  };
  std::vector<Run> line_runs, cell_runs;
  for (std::size_t l = 0; l < mesh.line_nodes.size(); ++l)
    if (l == 0 || physical_of(l) != physical_of(l - 1)) line_runs.push_back({l, l + 1});
    else line_runs.back().end = l + 1;
  auto is_tri = [&](std::size_t c) { return mesh.cell_nodes[c][3] == -1; };
  for (std::size_t c = 0; c < mesh.cell_nodes.size(); ++c)
    if (c == 0 || is_tri(c) != is_tri(c - 1)) cell_runs.push_back({c, c + 1});
    else cell_runs.back().end = c + 1;

  // Line element tags follow the largest cell tag, so all are unique.
  const std::int64_t first_line_tag =
      (cell_tag.empty() ? 0 : *std::max_element(cell_tag.begin(), cell_tag.end())) + 1;
  const std::size_t n_elements = mesh.cell_nodes.size() + mesh.line_nodes.size();
  std::int64_t min_elem = 0, max_elem = 0;
  if (n_elements > 0) {
    min_elem = mesh.line_nodes.empty() ? std::numeric_limits<std::int64_t>::max() : first_line_tag;
    max_elem = mesh.line_nodes.empty() ? 0 : first_line_tag + static_cast<std::int64_t>(mesh.line_nodes.size()) - 1;
    for (std::int64_t t : cell_tag) {
      min_elem = std::min(min_elem, t);
      max_elem = std::max(max_elem, t);
    }
  }

  Emitter e(binary);
  e.text(binary ? "$MeshFormat\n4.1 1 8\n" : "$MeshFormat\n4.1 0 8\n");
  if (binary) {
    e.int32(1);  // endianness marker
    e.text("\n");
  }
  e.text("$EndMeshFormat\n");

  if (!mesh.line_physical_names.empty()) {  // always ASCII
    std::string s = "$PhysicalNames\n" + std::to_string(mesh.line_physical_names.size()) + "\n";
    for (const auto& [tag, name] : mesh.line_physical_names) s += "1 " + std::to_string(tag) + " \"" + name + "\"\n";
    e.text(s + "$EndPhysicalNames\n");
  }

  e.begin("Entities");
  e.size(0);
  e.size(curve_of.size());
  e.size(1);
  e.size(0);
  e.eol();
  for (const auto& [phys, curve] : curve_of) {
    e.int32(curve);
    curve_box[phys].emit(e);
    e.size(phys != 0 ? 1 : 0);
    if (phys != 0) e.int32(phys);
    e.size(0);  // no bounding points
    e.eol();
  }
  e.int32(1);  // the surface holding all cells, and all nodes
  surface_box.emit(e);
  e.size(0);
  e.size(0);
  e.eol();
  e.end("Entities");

  e.begin("Nodes");
  const auto [tag_lo, tag_hi] = std::minmax_element(node_tag.begin(), node_tag.end());
  e.size(n > 0 ? 1 : 0);
  e.size(n);
  e.size(n > 0 ? static_cast<std::uint64_t>(*tag_lo) : 0);
  e.size(n > 0 ? static_cast<std::uint64_t>(*tag_hi) : 0);
  e.eol();
  if (n > 0) {
    e.int32(2);
    e.int32(1);
    e.int32(0);
    e.size(n);
    e.eol();
    for (std::int64_t t : node_tag) {
      e.size(static_cast<std::uint64_t>(t));
      e.eol();
    }
    for (std::size_t i = 0; i < n; ++i) {
      e.real(mesh.node_x[i]);
      e.real(mesh.node_y[i]);
      e.real(z_of(i));
      e.eol();
    }
  }
  e.end("Nodes");

  auto node = [&](std::int64_t k) { return static_cast<std::uint64_t>(node_tag[static_cast<std::size_t>(k)]); };
  e.begin("Elements");
  e.size(line_runs.size() + cell_runs.size());
  e.size(n_elements);
  e.size(static_cast<std::uint64_t>(min_elem));
  e.size(static_cast<std::uint64_t>(max_elem));
  e.eol();
  for (const Run& r : line_runs) {
    e.int32(1);
    e.int32(curve_of[physical_of(r.begin)]);
    e.int32(type_line);
    e.size(r.end - r.begin);
    e.eol();
    for (std::size_t l = r.begin; l < r.end; ++l) {
      e.size(static_cast<std::uint64_t>(first_line_tag) + l);
      e.size(node(mesh.line_nodes[l][0]));
      e.size(node(mesh.line_nodes[l][1]));
      e.eol();
    }
  }
  for (const Run& r : cell_runs) {
    const bool tri = is_tri(r.begin);
    e.int32(2);
    e.int32(1);
    e.int32(tri ? type_triangle : type_quad);
    e.size(r.end - r.begin);
    e.eol();
    for (std::size_t c = r.begin; c < r.end; ++c) {
      e.size(static_cast<std::uint64_t>(cell_tag[c]));
      for (int k = 0; k < (tri ? 3 : 4); ++k) e.size(node(mesh.cell_nodes[c][k]));
      e.eol();
    }
  }
  e.end("Elements");

  detail::write_file_atomic(file, e.str());
}

} // namespace shallows::io
