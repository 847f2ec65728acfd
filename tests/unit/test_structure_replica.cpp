// SPDX-License-Identifier: MIT
// A rank's replica of the cells the structures touch (StructureReplica,
// solver/structure_table.hpp): the ranks' shares add up to the owners' bits,
// whatever the value, and the blocks of a decomposition (local_problem) map
// the structures' cells to one replica that every rank holds alike.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "shallows/exec/mpi/decomposition.hpp"
#include "shallows/solver/cell_layout.hpp"
#include "shallows/solver/structure_table.hpp"
#include "support/problems.hpp"

namespace shallows {
namespace {

// The shares of one owner and two other ranks, summed in every order an
// all-reduce might take: the owner's value, bit for bit.
template <class Real>
void expect_owners_bits(Real v) {
  const double mine = replica_share(true, v), other = replica_share(false, v);
  const std::uint64_t want = std::bit_cast<std::uint64_t>(static_cast<double>(v));
  for (const double sum : {(mine + other) + other, (other + mine) + other, (other + other) + mine})
    EXPECT_EQ(std::bit_cast<std::uint64_t>(sum), want) << v;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(static_cast<double>(static_cast<Real>(mine + other))), want) << v;
}

TEST(StructureReplica, SharesAddUpToTheOwnersBits) {
  for (const double v : {0.0, -0.0, 1.5, -2.25e-300, 4.9e-324, std::numeric_limits<double>::infinity(),
                         std::numeric_limits<double>::quiet_NaN()})
    expect_owners_bits(v);
  for (const float v : {0.0f, -0.0f, 0.1f, -1e-45f}) expect_owners_bits(v);
  // What a +0.0 share would do: the owner's -0.0 would arrive as +0.0.
  EXPECT_FALSE(std::signbit(-0.0 + 0.0));
}

Structure pump(index_t inlet, index_t outlet) {
  Structure s;
  s.name = "station";
  s.inlet = inlet;
  s.outlet = outlet;
  return s;
}

// A weir along a column face and on along a row face, crossing the blocks' borders.
Structure weir(index_t nx) {
  Structure s;
  s.name = "levee";
  s.spec.kind = StructureKind::weir;
  for (index_t j = 0; j < 6; ++j) s.crossings.push_back({j * nx + 5, j * nx + 6, 1.0, 0.5, double(j)});
  for (index_t i = 6; i < 11; ++i) s.crossings.push_back({5 * nx + i, 6 * nx + i, 1.0, 0.5, double(i)});
  return s;
}

// Every rank of a 2 x 2 decomposition with halos of 2: its replica names the
// global cells in one order (the structures' ends and crossings, each once),
// its structures index that replica, and the ranks' shares of a state, added,
// are the state's bits at those cells (an hu of -0.0 included).
TEST(StructureReplica, BlocksShareOneReplicaOfTheOwnersValues) {
  const index_t nx = 12, ny = 10;
  Problem global = test_support::make_problem(nx, ny, 0, 12, 0, 10, [](double x, double y) { return 0.01 * (x + y); },
                                              [](double, double) { return 1.0; });
  global.forcing.structures = {pump(2 * nx + 1, 8 * nx + 10), weir(nx), pump(8 * nx + 10, 5 * nx + 5)};
  const std::vector<index_t> want{2 * nx + 1, 8 * nx + 10, 5, 6, nx + 5, nx + 6, 2 * nx + 5, 2 * nx + 6,
                                  3 * nx + 5, 3 * nx + 6, 4 * nx + 5, 4 * nx + 6, 5 * nx + 5, 5 * nx + 6,
                                  6 * nx + 6, 5 * nx + 7, 6 * nx + 7, 5 * nx + 8, 6 * nx + 8, 5 * nx + 9,
                                  6 * nx + 9, 5 * nx + 10, 6 * nx + 10};
  // A state with a value of its own in every cell and field.
  const auto value = [](index_t cell, int field) {
    return field == 1 && cell % 3 == 0 ? -0.0 : static_cast<double>(cell) + 0.25 * field;
  };
  const mpi::ProcessGrid pg{2, 2};
  std::vector<double> sums;
  for (int rank = 0; rank < 4; ++rank) {
    const mpi::Block b = mpi::make_block(pg, rank, nx, ny, 2);
    const Problem local = mpi::local_problem(global, b);
    const StructureReplica& r = local.forcing.replica;
    const std::string where = "rank " + std::to_string(rank);
    ASSERT_EQ(r.cells.size(), want.size()) << where;
    for (std::size_t k = 0; k < want.size(); ++k) {
      EXPECT_EQ(r.z[k], global.z[static_cast<std::size_t>(want[k])]) << where << ", replica cell " << k;
      const index_t i = want[k] % nx - b.local.i0, j = want[k] / nx - b.local.j0;
      const bool inside = i >= 0 && i < b.local.nx() && j >= 0 && j < b.local.ny();
      EXPECT_EQ(r.cells[k], inside ? j * b.local.nx() + i : -1) << where << ", replica cell " << k;
    }
    const std::vector<Structure>& s = local.forcing.structures;
    EXPECT_EQ(s[0].inlet, 0);
    EXPECT_EQ(s[0].outlet, 1);
    EXPECT_EQ(s[2].inlet, 1);
    EXPECT_EQ(s[2].outlet, 12);
    EXPECT_EQ(s[1].crossings[6].left, 13);
    EXPECT_EQ(s[1].crossings[6].right, 14);

    const GridCells cells{local.grid, local.owned};
    std::vector<double> f[3];
    for (std::vector<double>& v : f) v.assign(static_cast<std::size_t>(local.grid.padded_size()), 7.0);
    for (index_t j = 0; j < b.local.ny(); ++j) {
      for (index_t i = 0; i < b.local.nx(); ++i) {
        const index_t cell = (b.local.j0 + j) * nx + b.local.i0 + i;
        for (int field = 0; field < 3; ++field)
          f[field][static_cast<std::size_t>(local.grid.index(i, j))] = value(cell, field);
      }
    }
    const StructureCells<double> state{f[0].data(), f[1].data(), f[2].data(), nullptr, 0, 0.0};
    std::vector<double> shares(3 * r.cells.size());
    replica_pack(r.cells.data(), r.size(), cells, state, shares.data());
    if (sums.empty()) sums.assign(shares.size(), -0.0);
    ASSERT_EQ(shares.size(), sums.size());
    for (std::size_t k = 0; k < shares.size(); ++k) sums[k] += shares[k];
  }
  for (std::size_t k = 0; k < want.size(); ++k) {
    for (int field = 0; field < 3; ++field) {
      EXPECT_EQ(std::bit_cast<std::uint64_t>(sums[static_cast<std::size_t>(field) * want.size() + k]),
                std::bit_cast<std::uint64_t>(value(want[k], field)))
          << "replica cell " << k << ", field " << field;
    }
  }
}

} // namespace
} // namespace shallows
