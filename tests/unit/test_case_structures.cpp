// SPDX-License-Identifier: MIT
// [[structure]] in case files: pumps, gates and culverts read into their
// cells and parameters on grids and meshes, and the errors that name the
// structure and its key before anything runs.
#include <gtest/gtest.h>

#include <string>

#include "shallows/io/case.hpp"
#include "shallows/io/gmsh.hpp"
#include "shallows/mesh/unstructured/generator.hpp"
#include "shallows/mesh/unstructured/locate.hpp"
#include "support/case_fixture.hpp"

namespace shallows {
namespace {

// 20 x 10 cells of 10 m, a bed at 0 with an inactive corner cell (i, j) = (19, 9) (NODATA in bed.asc) and a 2 m
// mound west of x = 30.
const std::string kBase =
    "[domain]\nnx = 20\nny = 10\nx = [0.0, 200.0]\ny = [0.0, 100.0]\n"
    "[bathymetry]\nz = { file = \"bed.asc\" }\n"
    "[initial]\neta = 2.5\n[time]\nend = 100\n";

class StructureCase : public test_support::CaseFixture {
 protected:
  void SetUp() override {
    CaseFixture::SetUp();
    std::string bed = "ncols 20\nnrows 10\nxllcorner 0\nyllcorner 0\ncellsize 10\nNODATA_value -9999\n";
    for (int row = 0; row < 10; ++row) {
      for (int i = 0; i < 20; ++i) bed += row == 0 && i == 19 ? "-9999 " : i < 3 ? "2 " : "0 ";
      bed += "\n";
    }
    write("bed.asc", bed);
  }
};

const std::string kCulvert =
    "[[structure]]\nname = \"road\"\ntype = \"culvert\"\ninlet = [95.0, 50.0]\noutlet = [105.0, 50.0]\n"
    "shape = \"circular\"\ndiameter = 1.0\nlength = 10.0\ninvert = [1.0, 0.9]\nmanning = 0.013\n"
    "entrance_loss = 0.5\nexit_loss = 1.0\none_way = false\n";

const std::string kPump =
    "[[structure]]\nname = \"station\"\ntype = \"pump\"\ninlet = [10.0, 10.0]\noutlet = [150.0, 10.0]\n"
    "discharge = 2.0\non = 1.5\n";

TEST_F(StructureCase, CulvertAndPumpAreReadIntoTheirCells) {
  const Problem p = parse(kBase + kCulvert + kPump).problem;
  ASSERT_EQ(p.forcing.structures.size(), 2u);
  const Structure& c = p.forcing.structures[0];
  EXPECT_EQ(c.name, "road");
  EXPECT_EQ(c.spec.kind, StructureKind::culvert);
  EXPECT_EQ(c.inlet, 5 * 20 + 9);
  EXPECT_EQ(c.outlet, 5 * 20 + 10);
  EXPECT_EQ(c.spec.shape, CulvertShape::circular);
  EXPECT_EQ(c.spec.height, 1.0);
  EXPECT_EQ(c.spec.length, 10.0);
  EXPECT_EQ(c.spec.invert_in, 1.0);
  EXPECT_EQ(c.spec.invert_out, 0.9);
  EXPECT_EQ(c.spec.n_manning, 0.013);
  EXPECT_FALSE(c.spec.one_way);
  const Structure& s = p.forcing.structures[1];
  EXPECT_EQ(s.spec.kind, StructureKind::pump);
  EXPECT_EQ(s.inlet, 1 * 20 + 1);
  EXPECT_EQ(s.outlet, 1 * 20 + 15);
  EXPECT_EQ(s.discharge.v, std::vector<double>{2.0});
  EXPECT_TRUE(s.spec.controlled);
  EXPECT_EQ(s.spec.on, 1.5);
  EXPECT_EQ(s.spec.off, 1.5);  // no off: stops where it starts
  EXPECT_TRUE(p.forcing.active());
}

TEST_F(StructureCase, GateFollowsACsvSeriesAndBoxCulvertsTakeWidthAndHeight) {
  write("gate.csv", "time,discharge\n0,0\n50,3\n100,1\n");
  const Problem p = parse(kBase +
                          "[[structure]]\nname = \"sluice\"\ntype = \"gate\"\ninlet = [60.0, 50.0]\n"
                          "outlet = [150.0, 50.0]\ndischarge = \"gate.csv\"\non = 2.2\noff = 2.0\n"
                          "[[structure]]\nname = \"box\"\ntype = \"culvert\"\ninlet = [95.0, 50.0]\n"
                          "outlet = [105.0, 50.0]\nshape = \"box\"\nwidth = 2.0\nheight = 1.5\nlength = 8\n"
                          "invert = [0.0, 0.0]\nmanning = 0.015\none_way = true\n")
                        .problem;
  const Structure& g = p.forcing.structures[0];
  EXPECT_EQ(g.spec.kind, StructureKind::gate);
  EXPECT_EQ(g.discharge.t, (std::vector<double>{0, 50, 100}));
  EXPECT_EQ(g.discharge.v, (std::vector<double>{0, 3, 1}));
  EXPECT_EQ(g.spec.off, 2.0);
  const Structure& b = p.forcing.structures[1];
  EXPECT_EQ(b.spec.shape, CulvertShape::box);
  EXPECT_EQ(b.spec.width, 2.0);
  EXPECT_EQ(b.spec.height, 1.5);
  EXPECT_EQ(b.spec.entrance_loss, 0.5);  // the defaults
  EXPECT_EQ(b.spec.exit_loss, 1.0);
  EXPECT_TRUE(b.spec.one_way);
}

TEST_F(StructureCase, ErrorsNameTheStructureAndTheKey) {
  const auto err = [&](const std::string& structure) { return error_of(kBase + structure); };
  EXPECT_EQ(err("[[structure]]\nname = \"station\"\ntype = \"pump\"\ninlet = [10.0, 10.0]\noutlet = [250.0, 10.0]\n"
                "discharge = 2.0\n"),
            "case.toml: structure[0].outlet: structure 'station': outlet at (250, 10) is outside the domain [0, 200] "
            "x [0, 100]");
  EXPECT_EQ(err("[[structure]]\nname = \"station\"\ntype = \"pump\"\ninlet = [195.0, 95.0]\noutlet = [150.0, 10.0]\n"
                "discharge = 2.0\n"),
            "case.toml: structure[0].inlet: structure 'station': inlet at (195, 95) lies in the inactive cell (i, j) "
            "= (19, 9) (bathymetry.z is NODATA there)");
  EXPECT_EQ(err("[[structure]]\nname = \"station\"\ntype = \"pump\"\ninlet = [10.0, 10.0]\noutlet = [150.0, 10.0]\n"
                "dischrge = 2.0\n"),
            "case.toml: unknown key 'structure[0].dischrge' (did you mean 'structure[0].discharge'?)");
  EXPECT_EQ(err("[[structure]]\nname = \"station\"\ntype = \"pump\"\ninlet = [10.0, 10.0]\noutlet = [150.0, 10.0]\n"),
            "case.toml: structure[0].discharge: structure 'station': missing: the discharge from the inlet to the "
            "outlet (m^3/s, a number or a CSV file)");
  EXPECT_EQ(err("[[structure]]\nname = \"station\"\ntype = \"pump\"\ninlet = [10.0, 10.0]\noutlet = [150.0, 10.0]\n"
                "discharge = 2.0\non = 1.0\noff = 1.2\n"),
            "case.toml: structure[0].off: structure 'station': the level that stops it (1.2 m) is above the one that "
            "starts it (1 m)");
  EXPECT_EQ(err("[[structure]]\nname = \"station\"\ntype = \"pump\"\ninlet = [10.0, 10.0]\noutlet = [150.0, 10.0]\n"
                "discharge = -2.0\n"),
            "case.toml: structure[0].discharge: structure 'station': must be >= 0 (it flows from the inlet to the "
            "outlet), found -2");
  EXPECT_EQ(err("[[structure]]\nname = \"station\"\ntype = \"pump\"\ninlet = [10.0, 10.0]\noutlet = [12.0, 10.0]\n"
                "discharge = 2.0\n"),
            "case.toml: structure[0].outlet: structure 'station': the inlet and the outlet lie in the same cell");
  // The inlet's cell is on the 2 m mound: an invert at 1 m is below its bed.
  std::string low = kCulvert;
  low.replace(low.find("inlet = [95.0, 50.0]"), 20, "inlet = [25.0, 50.0]");
  EXPECT_EQ(err(low), "case.toml: structure[0].invert: structure 'road': the inlet's invert 1 m is below the bed of "
                      "the cell holding the inlet (2 m)");
  std::string no_length = kCulvert;
  no_length.erase(no_length.find("length = 10.0\n"), 14);
  EXPECT_EQ(err(no_length), "case.toml: structure[0].length: structure 'road': missing: the barrel's length (m)");
  std::string shape = kCulvert;
  shape.replace(shape.find("\"circular\""), 10, "\"oval\"");
  EXPECT_EQ(err(shape), "case.toml: structure[0].shape: structure 'road': unknown shape 'oval' (valid: circular, box)");
  EXPECT_EQ(err("[[structure]]\nname = \"road\"\ntype = \"weir\"\n"),
            "case.toml: structure[0].points: structure 'road': missing: the line's points [[x, y], ...] (m)");
  EXPECT_EQ(err("[[structure]]\ntype = \"pump\"\n"),
            "case.toml: structure[0].name: missing: every structure needs a name (for structures.csv and "
            "summary.json)");
  EXPECT_EQ(err(kPump + kPump),
            "case.toml: structure[1].name: structure name 'station' used twice");
  EXPECT_EQ(err("[[structure]]\nname = \"x\"\ntype = \"culvret\"\n"),
            "case.toml: structure[0].type: structure 'x': unknown type 'culvret' (did you mean 'culvert'?); valid: "
            "pump, gate, culvert, weir, wall, breach");
}

TEST_F(StructureCase, MeshesTakeTheCellsHoldingTheEnds) {
  RectangleMeshSpec spec;
  spec.x1 = 4;
  spec.y1 = 2;
  spec.nx = 4;
  spec.ny = 2;
  spec.shuffle = true;
  io::write_gmsh(dir_ / "m.msh", rectangle_mesh(spec), true);
  const std::string mesh = "[mesh]\nfile = \"m.msh\"\n[initial]\nh = 1\n[time]\nend = 1\n";
  const Problem p = parse(mesh + "[[structure]]\nname = \"p\"\ntype = \"pump\"\ninlet = [0.3, 0.6]\n"
                                 "outlet = [3.3, 1.6]\ndischarge = 0.1\n")
                        .problem;
  const Structure& s = p.forcing.structures.at(0);
  EXPECT_TRUE(cell_contains(*p.mesh, static_cast<std::size_t>(s.inlet), 0.3, 0.6));
  EXPECT_TRUE(cell_contains(*p.mesh, static_cast<std::size_t>(s.outlet), 3.3, 1.6));
  EXPECT_EQ(error_of(mesh + "[[structure]]\nname = \"p\"\ntype = \"pump\"\ninlet = [5.0, 1.0]\n"
                            "outlet = [3.3, 1.6]\ndischarge = 0.1\n"),
            "case.toml: structure[0].inlet: structure 'p': inlet at (5, 1) is outside the mesh " +
                (dir_ / "m.msh").string() + " (in no cell; bounding box [0, 4] x [0, 2])");
}

}  // namespace
}  // namespace shallows
