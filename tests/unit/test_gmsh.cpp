// SPDX-License-Identifier: MIT
// Gmsh MSH files: the four variants (2.2 / 4.1, ASCII / binary) read field by
// field, write -> read round trips, error messages, and damaged files.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "shallows/io/case.hpp"
#include "shallows/io/gmsh.hpp"

namespace fs = std::filesystem;
using shallows::io::GmshMesh;
using shallows::io::InputError;
using shallows::io::read_gmsh;
using shallows::io::write_gmsh;

namespace {

// ---------------------------------------------------------------------------
// The reference mesh every hand-written file below describes:
//   nodes (sparse tags) 10 (0,0,0), 20 (1,0,0), 30 (1,1,0), 40 (0,1,0), 50 (2,1/3,0.1)
//   point 1 on node 10 (physical 9, skipped)
//   lines 3: 10-20 (physical 5), 4: 20-50 (physical 6), 5: 40-10 (physical 5), 6: 30-40 (none)
//   triangle 7: 20 50 30; quadrangle 8: 10 20 30 40
//   names: 1/5 "wall", 1/6 "inflow side", 2/11 "domain" and 0/9 "corner" (not lines: ignored)

const double third = 1.0 / 3.0;  // "0.33333333333333331" in the ASCII files

struct RefNode {
  std::int32_t tag;
  double x, y, z;
};
const RefNode ref_nodes[] = {{10, 0, 0, 0}, {20, 1, 0, 0}, {30, 1, 1, 0}, {40, 0, 1, 0}, {50, 2, third, 0.1}};

const std::string physical_names = R"($PhysicalNames
4
1 5 "wall"
1 6 "inflow side"
2 11 "domain"
0 9 "corner"
$EndPhysicalNames
)";

const std::string msh22_ascii = R"($MeshFormat
2.2 0 8
$EndMeshFormat
)" + physical_names + R"($Comments
anything $EndComment here, even $EndCommentsX
$EndComments
$Nodes
5
10 0 0 0
20 1 0 0
30 1 1 0
40 0 1 0
50 2 0.33333333333333331 0.1
$EndNodes
$Elements
7
1 15 2 9 1 10
3 1 2 5 1 10 20
4 1 2 6 2 20 50
5 1 2 5 3 40 10
6 1 0 30 40
7 2 2 11 1 20 50 30
8 3 2 11 1 10 20 30 40
$EndElements
$NodeData
1
"h"
$EndNodeData
)";

// Curve 2 has two physical tags: the first (6) is the group of its lines.
// Nodes 30, 40, 50 are parametric (on a surface, a point, a curve).
const std::string msh41_ascii = R"($MeshFormat
4.1 0 8
$EndMeshFormat
)" + physical_names + R"($Entities
1 4 1 0
1 0 1 0 1 9
1 0 0 0 1 0 0 1 5 2 1 -2
2 1 0 0 2 0.5 0.1 2 6 7 0
3 0 0 0 0 1 0 1 5 0
4 0 1 0 1 1 0 0 0
1 0 0 0 2 1 0.1 1 11 4 1 2 3 4
$EndEntities
$Nodes
4 5 10 50
2 1 0 2
10
20
0 0 0
1 0 0
2 1 1 1
30
1 1 0 0.5 0.5
0 1 1 1
40
0 1 0
1 2 1 1
50
2 0.33333333333333331 0.1 0.25
$EndNodes
$Elements
7 7 1 8
0 1 15 1
1 10
1 1 1 1
3 10 20
1 2 1 1
4 20 50
1 3 1 1
5 40 10
1 4 1 1
6 30 40
2 1 2 1
7 20 50 30
2 1 3 1
8 10 20 30 40
$EndElements
$Periodic
0
$EndPeriodic
)";

// Bytes of a binary file, value by value as the MSH spec lays them out.
struct Bytes {
  std::string s;
  bool swap = false;  // write big-endian (the reader must swap)
  int size_t_bytes = 8;

  Bytes& text(std::string_view t) {
    s += t;
    return *this;
  }
  template <class T>
  Bytes& put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    if (swap) std::reverse(b, b + sizeof(T));
    s.append(b, sizeof(T));
    return *this;
  }
  Bytes& i32(std::int32_t v) { return put(v); }
  Bytes& f64(double v) { return put(v); }
  Bytes& size(std::uint64_t v) { return size_t_bytes == 8 ? put(v) : put(static_cast<std::uint32_t>(v)); }
  Bytes& ints(std::initializer_list<std::int32_t> v) {
    for (auto x : v) i32(x);
    return *this;
  }
  Bytes& sizes(std::initializer_list<std::uint64_t> v) {
    for (auto x : v) size(x);
    return *this;
  }
  Bytes& reals(std::initializer_list<double> v) {
    for (auto x : v) f64(x);
    return *this;
  }
};

// Binary junk holding end-marker look-alikes, in an unknown section.
std::string junk_section() {
  const char junk[] = "\0\xff$EndNodeDat\x01$EndNodeDataX\n";
  return "$NodeData\n" + std::string(junk, sizeof junk - 1) + "\n$EndNodeData\n";
}

std::string msh22_binary(bool swap = false) {
  Bytes b;
  b.swap = swap;
  b.text("$MeshFormat\n2.2 1 8\n").i32(1).text("\n$EndMeshFormat\n").text(physical_names);
  b.text("$Nodes\n5\n");
  for (const auto& n : ref_nodes) b.i32(n.tag).reals({n.x, n.y, n.z});
  b.text("\n$EndNodes\n");
  b.text("$Elements\n7\n");
  b.ints({15, 1, 2}).ints({1, 9, 1, 10});                  // type, count, ntags; point
  b.ints({1, 3, 2}).ints({3, 5, 1, 10, 20}).ints({4, 6, 2, 20, 50}).ints({5, 5, 3, 40, 10});
  b.ints({1, 1, 0}).ints({6, 30, 40});                     // a line without tags
  b.ints({2, 1, 2}).ints({7, 11, 1, 20, 50, 30});
  b.ints({3, 1, 2}).ints({8, 11, 1, 10, 20, 30, 40});
  b.text("\n$EndElements\n");
  b.text(junk_section());
  return b.s;
}

// element_8_at: where the record of element 8 starts (for error offsets).
std::string msh41_binary(bool swap = false, int size_t_bytes = 8, std::size_t* element_8_at = nullptr,
                         std::int32_t last_node = 40) {
  Bytes b;
  b.swap = swap;
  b.size_t_bytes = size_t_bytes;
  b.text("$MeshFormat\n4.1 1 " + std::to_string(size_t_bytes) + "\n").i32(1).text("\n$EndMeshFormat\n");
  b.text(physical_names);
  b.text("$Entities\n").sizes({1, 4, 1, 0});
  b.i32(1).reals({0, 1, 0}).size(1).i32(9);                                      // point
  b.i32(1).reals({0, 0, 0, 1, 0, 0}).size(1).i32(5).size(2).ints({1, -2});       // curves
  b.i32(2).reals({1, 0, 0, 2, 0.5, 0.1}).size(2).ints({6, 7}).size(0);
  b.i32(3).reals({0, 0, 0, 0, 1, 0}).size(1).i32(5).size(0);
  b.i32(4).reals({0, 1, 0, 1, 1, 0}).size(0).size(0);
  b.i32(1).reals({0, 0, 0, 2, 1, 0.1}).size(1).i32(11).size(4).ints({1, 2, 3, 4});  // surface
  b.text("\n$EndEntities\n");
  b.text("$Nodes\n").sizes({4, 5, 10, 50});
  b.ints({2, 1, 0}).size(2).sizes({10, 20}).reals({0, 0, 0, 1, 0, 0});
  b.ints({2, 1, 1}).size(1).size(30).reals({1, 1, 0, 0.5, 0.5});
  b.ints({0, 1, 1}).size(1).size(40).reals({0, 1, 0});
  b.ints({1, 2, 1}).size(1).size(50).reals({2, third, 0.1, 0.25});
  b.text("\n$EndNodes\n");
  b.text("$Elements\n").sizes({7, 7, 1, 8});
  b.ints({0, 1, 15}).size(1).sizes({1, 10});
  b.ints({1, 1, 1}).size(1).sizes({3, 10, 20});
  b.ints({1, 2, 1}).size(1).sizes({4, 20, 50});
  b.ints({1, 3, 1}).size(1).sizes({5, 40, 10});
  b.ints({1, 4, 1}).size(1).sizes({6, 30, 40});
  b.ints({2, 1, 2}).size(1).sizes({7, 20, 50, 30});
  b.ints({2, 1, 3}).size(1);
  if (element_8_at) *element_8_at = b.s.size();
  b.sizes({8, 10, 20, 30, static_cast<std::uint64_t>(last_node)});
  b.text("\n$EndElements\n");
  b.text(junk_section());
  return b.s;
}

void expect_reference(const GmshMesh& m) {
  ASSERT_EQ(m.node_tag.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE("node " + std::to_string(i));
    EXPECT_EQ(m.node_tag[i], ref_nodes[i].tag);
    EXPECT_EQ(m.node_x[i], ref_nodes[i].x);
    EXPECT_EQ(m.node_y[i], ref_nodes[i].y);
    EXPECT_EQ(m.node_z[i], ref_nodes[i].z);
  }
  ASSERT_EQ(m.node_x.size(), 5u);
  ASSERT_EQ(m.node_y.size(), 5u);
  ASSERT_EQ(m.node_z.size(), 5u);
  using Cell = std::array<std::int64_t, 4>;
  using Line = std::array<std::int64_t, 2>;
  EXPECT_EQ(m.cell_nodes, (std::vector<Cell>{{1, 4, 2, -1}, {0, 1, 2, 3}}));
  EXPECT_EQ(m.cell_tag, (std::vector<std::int64_t>{7, 8}));
  EXPECT_EQ(m.line_nodes, (std::vector<Line>{{0, 1}, {1, 4}, {3, 0}, {2, 3}}));
  EXPECT_EQ(m.line_physical, (std::vector<int>{5, 6, 5, 0}));
  EXPECT_EQ(m.line_physical_names, (std::map<int, std::string>{{5, "wall"}, {6, "inflow side"}}));
}

// 1-based line of the first occurrence of `what` in text.
int line_of(const std::string& text, std::string_view what) {
  const std::size_t p = text.find(what);
  EXPECT_NE(p, std::string::npos) << what;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(p), '\n'));
}

std::string replace(std::string text, std::string_view from, std::string_view to) {
  const std::size_t p = text.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  if (p != std::string::npos) text.replace(p, from.size(), to);
  return text;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

class GmshTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / ("shallows_test_gmsh_" + std::string(info->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& bytes) const {
    const fs::path p = dir_ / name;
    fs::remove(p);  // rewriting in place can make ext4 flush on close (auto_da_alloc): slow
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

  // The InputError message of reading these bytes, or "" when they read.
  std::string error_of(const std::string& name, const std::string& bytes) const {
    return error_of(write(name, bytes));
  }
  static std::string error_of(const fs::path& p) {
    try {
      read_gmsh(p);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  // Reads or throws InputError; anything else (or a crash) fails the test.
  void read_or_input_error(const fs::path& p, const std::string& what) const {
    try {
      read_gmsh(p);
    } catch (const InputError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": " << typeid(e).name() << ": " << e.what();
    }
  }

  fs::path dir_;
};

// A mesh with everything that must survive a round trip: sparse tags,
// triangles and quadrangles interleaved, line groups interleaved, a line
// without a group, a group named but unused, awkward coordinates.
GmshMesh round_trip_mesh() {
  GmshMesh m;
  const int nx = 5, ny = 4;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      m.node_x.push_back(0.1 * i + 1e-3 * std::sin(j + 0.5 * i) + 1e5);
      m.node_y.push_back(std::sqrt(2.0) * j - 1e-17 * i);
      m.node_z.push_back(i == 0 ? -0.0 : (j == 1 ? 1e-300 : std::exp(-0.3 * i * j)));
      m.node_tag.push_back(1000 + 7 * (j * nx + i));
    }
  auto id = [&](int i, int j) { return static_cast<std::int64_t>(j * nx + i); };
  std::int64_t tag = 50;
  for (int j = 0; j + 1 < ny; ++j)
    for (int i = 0; i + 1 < nx; ++i) {
      if ((i + j) % 3 == 0) {  // two triangles
        m.cell_nodes.push_back({id(i, j), id(i + 1, j), id(i + 1, j + 1), -1});
        m.cell_tag.push_back(tag += 3);
        m.cell_nodes.push_back({id(i, j), id(i + 1, j + 1), id(i, j + 1), -1});
        m.cell_tag.push_back(tag += 2);
      } else {
        m.cell_nodes.push_back({id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)});
        m.cell_tag.push_back(tag += 5);
      }
    }
  const int groups[] = {1, 1, 2, 0, 2, 1, 3};
  for (int i = 0; i + 1 < nx; ++i) {
    m.line_nodes.push_back({id(i, 0), id(i + 1, 0)});
    m.line_physical.push_back(groups[i % 7]);
  }
  for (int j = 0; j + 1 < ny; ++j) {
    m.line_nodes.push_back({id(nx - 1, j), id(nx - 1, j + 1)});
    m.line_physical.push_back(groups[(j + 4) % 7]);
  }
  m.node_z[1] = 0.1;  // "0.10000000000000001" in ASCII
  m.line_physical_names = {{1, "wall"}, {2, "open sea"}, {3, ""}, {17, "unused group"}};
  return m;
}

void expect_same(const GmshMesh& a, const GmshMesh& b) {
  EXPECT_EQ(a.node_tag, b.node_tag);
  EXPECT_TRUE(same_bits(a.node_x, b.node_x));
  EXPECT_TRUE(same_bits(a.node_y, b.node_y));
  EXPECT_TRUE(same_bits(a.node_z, b.node_z));
  EXPECT_EQ(a.cell_nodes, b.cell_nodes);
  EXPECT_EQ(a.cell_tag, b.cell_tag);
  EXPECT_EQ(a.line_nodes, b.line_nodes);
  EXPECT_EQ(a.line_physical, b.line_physical);
  EXPECT_EQ(a.line_physical_names, b.line_physical_names);
}

} // namespace

// ------------------------------------------------------------------ reading

TEST_F(GmshTest, Reads22Ascii) { expect_reference(read_gmsh(write("a22.msh", msh22_ascii))); }

TEST_F(GmshTest, Reads22Binary) { expect_reference(read_gmsh(write("b22.msh", msh22_binary()))); }

TEST_F(GmshTest, Reads41Ascii) { expect_reference(read_gmsh(write("a41.msh", msh41_ascii))); }

TEST_F(GmshTest, Reads41Binary) { expect_reference(read_gmsh(write("b41.msh", msh41_binary()))); }

TEST_F(GmshTest, ReadsBinaryOfTheOtherByteOrder) {
  expect_reference(read_gmsh(write("b22_swapped.msh", msh22_binary(true))));
  expect_reference(read_gmsh(write("b41_swapped.msh", msh41_binary(true))));
}

TEST_F(GmshTest, Reads41BinaryWithFourByteSizeT) {
  expect_reference(read_gmsh(write("b41_size4.msh", msh41_binary(false, 4))));
}

TEST_F(GmshTest, ReadsWindowsLineEnds) {
  std::string crlf;
  for (char c : msh41_ascii) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  expect_reference(read_gmsh(write("crlf.msh", crlf)));
}

TEST_F(GmshTest, UnnamedLineGroupsAppearWithEmptyNames) {
  const std::string text = replace(msh22_ascii, "1 6 \"inflow side\"\n", "2 6 \"a surface name\"\n");
  const GmshMesh m = read_gmsh(write("unnamed.msh", text));
  EXPECT_EQ(m.line_physical_names, (std::map<int, std::string>{{5, "wall"}, {6, ""}}));
}

TEST_F(GmshTest, SparseNodeTagsFarApart) {
  // Tags too far apart for a dense index: the hash-map path.
  std::string text = msh22_ascii;
  for (const char* t : {"10", "20", "30", "40", "50"}) {
    const std::string big = std::string(t) + "000000000000";
    text = replace(text, "\n" + std::string(t) + " ", "\n" + big + " ");
  }
  for (auto [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"9 1 10\n", "9 1 10000000000000\n"},
           {"1 10 20\n", "1 10000000000000 20000000000000\n"},
           {"2 20 50\n", "2 20000000000000 50000000000000\n"},
           {"3 40 10\n", "3 40000000000000 10000000000000\n"},
           {"0 30 40\n", "0 30000000000000 40000000000000\n"},
           {"1 20 50 30\n", "1 20000000000000 50000000000000 30000000000000\n"},
           {"1 10 20 30 40\n", "1 10000000000000 20000000000000 30000000000000 40000000000000\n"}})
    text = replace(text, from, to);
  const GmshMesh m = read_gmsh(write("sparse.msh", text));
  EXPECT_EQ(m.node_tag, (std::vector<std::int64_t>{10000000000000, 20000000000000, 30000000000000, 40000000000000,
                                                   50000000000000}));
  EXPECT_EQ(m.cell_nodes[0], (std::array<std::int64_t, 4>{1, 4, 2, -1}));
  EXPECT_EQ(m.line_nodes[3], (std::array<std::int64_t, 2>{2, 3}));
}

// ------------------------------------------------------------------ writing

TEST_F(GmshTest, RoundTripAscii) {
  const GmshMesh m = round_trip_mesh();
  const fs::path p = dir_ / "rt.msh";
  write_gmsh(p, m);
  EXPECT_FALSE(fs::exists(dir_ / "rt.msh.part"));
  std::ifstream in(p, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$PhysicalNames\n4\n", 0), 0u) << text.substr(0, 80);
  EXPECT_NE(text.find("\n$Entities\n0 4 1 0\n"), std::string::npos);  // curves for groups 0, 1, 2, 3
  EXPECT_NE(text.find("1 2 \"open sea\"\n"), std::string::npos);
  EXPECT_NE(text.find(" 0.10000000000000001\n"), std::string::npos);  // 17 significant digits
  expect_same(read_gmsh(p), m);
}

TEST_F(GmshTest, RoundTripBinary) {
  const GmshMesh m = round_trip_mesh();
  const fs::path p = dir_ / "rt.msh";
  write_gmsh(p, m, true);
  EXPECT_FALSE(fs::exists(dir_ / "rt.msh.part"));
  std::ifstream in(p, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.rfind("$MeshFormat\n4.1 1 8\n", 0), 0u);
  expect_same(read_gmsh(p), m);
}

TEST_F(GmshTest, RoundTripOfTheReadReference) {
  for (bool binary : {false, true}) {
    SCOPED_TRACE(binary ? "binary" : "ascii");
    const GmshMesh m = read_gmsh(write("ref.msh", msh41_ascii));
    write_gmsh(dir_ / "again.msh", m, binary);
    expect_reference(read_gmsh(dir_ / "again.msh"));
  }
}

TEST_F(GmshTest, WriteWithoutTagsNumbersFromOne) {
  GmshMesh m = round_trip_mesh();
  m.node_tag.clear();
  m.cell_tag.clear();
  m.node_z.clear();  // z = 0
  write_gmsh(dir_ / "plain.msh", m);
  const GmshMesh r = read_gmsh(dir_ / "plain.msh");
  ASSERT_EQ(r.node_tag.size(), m.node_x.size());
  for (std::size_t i = 0; i < r.node_tag.size(); ++i) EXPECT_EQ(r.node_tag[i], static_cast<std::int64_t>(i) + 1);
  for (double z : r.node_z) EXPECT_EQ(z, 0.0);
  ASSERT_EQ(r.cell_tag.size(), m.cell_nodes.size());
  for (std::size_t i = 0; i < r.cell_tag.size(); ++i) EXPECT_EQ(r.cell_tag[i], static_cast<std::int64_t>(i) + 1);
  EXPECT_EQ(r.cell_nodes, m.cell_nodes);
  EXPECT_EQ(r.line_nodes, m.line_nodes);
}

TEST_F(GmshTest, WriteRefusesInconsistentMeshes) {
  GmshMesh m = round_trip_mesh();
  m.cell_nodes[2][1] = 999;
  EXPECT_THROW(write_gmsh(dir_ / "bad.msh", m), std::invalid_argument);
  m = round_trip_mesh();
  m.node_tag[3] = m.node_tag[4];
  EXPECT_THROW(write_gmsh(dir_ / "bad.msh", m), std::invalid_argument);
  m = round_trip_mesh();
  m.line_physical_names[1] = "say \"hi\"";
  EXPECT_THROW(write_gmsh(dir_ / "bad.msh", m), std::invalid_argument);
  EXPECT_FALSE(fs::exists(dir_ / "bad.msh"));
}

// ------------------------------------------------------------------ errors

TEST_F(GmshTest, MissingFile) {
  const fs::path p = dir_ / "nowhere.msh";
  const std::string e = error_of(p);
  EXPECT_EQ(e.rfind(p.string() + ": cannot open", 0), 0u) << e;
}

TEST_F(GmshTest, NotAnMshFile) {
  std::string e = error_of("hello.msh", "hello world\n");
  EXPECT_NE(e.find("hello.msh:1: not a Gmsh MSH file"), std::string::npos) << e;
  e = error_of("empty.msh", "");
  EXPECT_NE(e.find("empty.msh:1: empty file"), std::string::npos) << e;
  e = error_of("png.msh", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  EXPECT_NE(e.find("png.msh:1: not a Gmsh MSH file"), std::string::npos) << e;
}

TEST_F(GmshTest, UnsupportedVersions) {
  for (const char* v : {"3.0", "4.0", "4", "2.1", "1.0"}) {
    SCOPED_TRACE(v);
    const std::string e = error_of("v.msh", "$MeshFormat\n" + std::string(v) + " 0 8\n$EndMeshFormat\n");
    EXPECT_NE(e.find("v.msh:2: MSH version " + std::string(v) + " is not supported"), std::string::npos) << e;
    EXPECT_NE(e.find("supported: 2.2 and 4.1"), std::string::npos) << e;
  }
  const std::string e = error_of("v1.msh", "$NOD\n1\n1 0 0 0\n$ENDNOD\n");
  EXPECT_NE(e.find("v1.msh:1: MSH version 1.0 is not supported"), std::string::npos) << e;
}

TEST_F(GmshTest, TruncatedAscii) {
  const std::string cut = msh41_ascii.substr(0, msh41_ascii.find("1 0 0\n2 1 1 1\n30"));  // inside $Nodes
  const int last_line = static_cast<int>(std::count(cut.begin(), cut.end(), '\n'));
  const std::string e = error_of("cut.msh", cut);
  EXPECT_NE(e.find("cut.msh:" + std::to_string(last_line) + ": unexpected end of file inside $Nodes"),
            std::string::npos)
      << e;
  // Unknown sections need their end marker too.
  const std::string e2 = error_of("cut2.msh", msh22_ascii.substr(0, msh22_ascii.size() - 14));
  EXPECT_NE(e2.find("unexpected end of file inside $NodeData: no $EndNodeData"), std::string::npos) << e2;
}

TEST_F(GmshTest, TruncatedBinary) {
  const std::string full = msh41_binary();
  const std::size_t nodes = full.find("$Nodes\n");
  const std::string e = error_of("cut.msh", full.substr(0, nodes + 7 + 4 * 8 + 50));
  EXPECT_NE(e.find("cut.msh (byte "), std::string::npos) << e;
  EXPECT_NE(e.find("unexpected end of file inside $Nodes"), std::string::npos) << e;

  const std::string full22 = msh22_binary();
  const std::string e2 = error_of("cut22.msh", full22.substr(0, full22.find("$Elements\n7\n") + 30));
  EXPECT_NE(e2.find("cut22.msh (byte "), std::string::npos) << e2;
  EXPECT_NE(e2.find("unexpected end of file inside $Elements"), std::string::npos) << e2;
}

TEST_F(GmshTest, MalformedNumbers) {
  std::string text = replace(msh22_ascii, "30 1 1 0\n", "30 1 x1 0\n");
  std::string e = error_of("num.msh", text);
  EXPECT_NE(e.find("num.msh:" + std::to_string(line_of(text, "30 1 x1")) + ": malformed number 'x1'"),
            std::string::npos)
      << e;
  text = replace(msh41_ascii, "4 20 50\n", "4 20 5O\n");
  e = error_of("int.msh", text);
  EXPECT_NE(e.find("int.msh:" + std::to_string(line_of(text, "4 20 5O")) + ": malformed integer '5O'"),
            std::string::npos)
      << e;
  text = replace(msh41_ascii, "2 0.33333333333333331 0.1 0.25", "2 nan 0.1 0.25");
  e = error_of("nan.msh", text);
  EXPECT_NE(e.find("nan.msh:" + std::to_string(line_of(text, "2 nan")) + ": not a finite number: 'nan'"),
            std::string::npos)
      << e;
}

TEST_F(GmshTest, ElementNamingAMissingNode) {
  std::string text = replace(msh22_ascii, "7 2 2 11 1 20 50 30\n", "7 2 2 11 1 20 99 30\n");
  std::string e = error_of("node.msh", text);
  EXPECT_NE(e.find("node.msh:" + std::to_string(line_of(text, "7 2 2 11 1 20 99")) +
                   ": element 7 names node 99, which is not in $Nodes"),
            std::string::npos)
      << e;
  text = replace(msh41_ascii, "3 10 20\n", "3 10 21\n");
  e = error_of("node41.msh", text);
  EXPECT_NE(e.find("node41.msh:" + std::to_string(line_of(text, "3 10 21")) + ": element 3 names node 21"),
            std::string::npos)
      << e;
  std::size_t at = 0;
  e = error_of("node41b.msh", msh41_binary(false, 8, &at, 77));
  EXPECT_NE(e.find("node41b.msh (byte " + std::to_string(at) + "): element 8 names node 77"), std::string::npos)
      << e;
}

TEST_F(GmshTest, UnsupportedElementTypes) {
  std::string text = replace(msh22_ascii, "8 3 2 11 1 10 20 30 40\n", "9 4 2 11 1 10 20 30 40\n");
  std::string e = error_of("tet.msh", text);
  EXPECT_NE(e.find("tet.msh:" + std::to_string(line_of(text, "9 4 2 11")) +
                   ": element 9 has type 4 (4-node tetrahedron), which is not supported"),
            std::string::npos)
      << e;
  text = replace(msh41_ascii, "2 1 2 1\n7 20 50 30\n", "2 1 9 1\n7 20 50 30 10 20 30\n");
  e = error_of("p2.msh", text);
  EXPECT_NE(e.find("p2.msh:" + std::to_string(line_of(text, "7 20 50 30 10")) + ": element 7 has type 9"),
            std::string::npos)
      << e;
}

TEST_F(GmshTest, No2DElements) {
  std::string text = replace(msh22_ascii, "7\n1 15", "5\n1 15");
  text = replace(text, "7 2 2 11 1 20 50 30\n8 3 2 11 1 10 20 30 40\n", "");
  const std::string e = error_of("lines.msh", text);
  EXPECT_NE(e.find("lines.msh:" + std::to_string(line_of(text, "$Elements")) + ": no triangles or quadrangles"),
            std::string::npos)
      << e;
  const std::string e2 = error_of("noelem.msh", msh22_ascii.substr(0, msh22_ascii.find("$Elements")));
  EXPECT_NE(e2.find("no $Elements section"), std::string::npos) << e2;
}

TEST_F(GmshTest, CountsThatDoNotMatch) {
  // More elements than declared: the end marker is not where it should be.
  std::string e = error_of("count.msh", replace(msh22_ascii, "$Elements\n7\n", "$Elements\n6\n"));
  EXPECT_NE(e.find("expected $EndElements, found '8'"), std::string::npos) << e;
  e = error_of("blocks.msh", replace(msh41_ascii, "4 5 10 50\n", "4 4 10 50\n"));
  EXPECT_NE(e.find("node blocks hold more than the 4 nodes"), std::string::npos) << e;
  e = error_of("dup.msh", replace(msh22_ascii, "40 0 1 0\n", "30 0 1 0\n"));
  EXPECT_NE(e.find("node tag 30 appears more than once"), std::string::npos) << e;
}

TEST_F(GmshTest, BadBinaryHeader) {
  std::string b = msh41_binary();
  b[b.find("4.1 1 8\n") + 8] = 2;  // endianness marker 2 instead of 1
  std::string e = error_of("endian.msh", b);
  EXPECT_NE(e.find("endian.msh (byte 20): bad endianness marker"), std::string::npos) << e;
  e = error_of("size.msh", replace(msh22_binary(), "2.2 1 8", "2.2 1 4"));
  EXPECT_NE(e.find("data size 4 not supported"), std::string::npos) << e;
}

TEST_F(GmshTest, AbsurdCountsFailWithoutAllocating) {
  const std::uint64_t huge = std::uint64_t(1) << 62;
  // 4.1 binary: a node count far beyond the file size.
  std::string b = msh41_binary();
  const std::size_t at = b.find("$Nodes\n") + 7 + 8;
  std::memcpy(b.data() + at, &huge, 8);
  std::string e = error_of("huge41.msh", b);
  EXPECT_NE(e.find("huge41.msh (byte "), std::string::npos) << e;
  EXPECT_NE(e.find("truncated file"), std::string::npos) << e;
  // ASCII, 4.1 and 2.2.
  read_or_input_error(write("huge41a.msh", replace(msh41_ascii, "4 5 10 50\n", "4 4611686018427387904 10 50\n")),
                      "4.1 ASCII");
  read_or_input_error(write("huge22a.msh", replace(msh22_ascii, "$Nodes\n5\n", "$Nodes\n4611686018427387904\n")),
                      "2.2 ASCII");
  e = error_of("huge22b.msh", replace(msh22_binary(), "$Nodes\n5\n", "$Nodes\n4611686018427387904\n"));
  EXPECT_NE(e.find("truncated file"), std::string::npos) << e;
  // Entity counts: each entity is read before the next, so these just run out of file.
  b = msh41_binary();
  std::memcpy(b.data() + b.find("$Entities\n") + 10, &huge, 8);
  e = error_of("hugeent.msh", b);
  EXPECT_NE(e.find("(byte "), std::string::npos) << e;
}

// Every 7th prefix of each file, and the files with bytes overwritten, either
// read or throw InputError: no crash, no hang, no other exception.
TEST_F(GmshTest, DamagedFilesNeverCrash) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"22a", msh22_ascii},    {"22b", msh22_binary()},        {"41a", msh41_ascii},
      {"41b", msh41_binary()}, {"41bs", msh41_binary(true)}, {"41b4", msh41_binary(false, 4)}};
  int failed = 0;
  for (const auto& [name, bytes] : files) {
    for (std::size_t cut = 0; cut < bytes.size(); cut += 7) {
      const fs::path p = write("cut_" + name + ".msh", bytes.substr(0, cut));
      try {
        read_gmsh(p);
      } catch (const InputError& e) {
        ++failed;
        EXPECT_EQ(std::string(e.what()).rfind(p.string(), 0), 0u) << e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << name << " cut at " << cut << ": " << e.what();
      }
    }
    for (std::size_t at = 0; at < bytes.size(); at += 7)
      for (char v : {'\xff', '\x7f', '\0', '9', '$', ' '}) {
        std::string damaged = bytes;
        damaged[at] = v;
        read_or_input_error(write("bad_" + name + ".msh", damaged), name + " byte " + std::to_string(at));
      }
  }
  EXPECT_GT(failed, 100);
}
