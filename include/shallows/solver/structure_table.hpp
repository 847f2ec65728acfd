// SPDX-License-Identifier: MIT
#pragma once
// Forcing::structures as apply_structures (physics/structures.hpp) takes
// them, over a cell layout (cell_layout.hpp): each structure's parameters,
// its ends and the crossings of the weirs and walls; and the tallies as
// ForcingState::structures holds them. Built once on the host by every
// executor, CPU and GPU, so that both hand apply_structures the same values.
// On a rank of a distributed run, the replica of the structures' cells
// (StructureReplica) that the structures run on.
#include <algorithm>
#include <cstddef>
#include <map>
#include <vector>

#include "shallows/mesh/structured/grid.hpp"
#include "shallows/physics/structures.hpp"
#include "shallows/solver/forcing.hpp"

namespace shallows {

struct StructureTable {
  // The series views point at the Structures the table was made from
  // (discharge, width): a device copy points them at its own arrays.
  std::vector<StructureSpec> specs;
  std::vector<StructureEnd> inlets, outlets;  // empty ends for weirs, walls and breaches
  std::vector<WeirCrossing> crossings;        // the weirs' and walls' crossings, in structure order
  std::vector<WeirCell> weir_cells;           // the cells on weirs' lines, by state index
  std::vector<int> weir_entries;              // their crossings (WeirCell)
  int end_rounds = 0;                         // StructureView::end_rounds

  bool empty() const { return specs.empty(); }
  int count() const { return static_cast<int>(specs.size()); }
};

// The weirs' work arrays of a StructureView, on the host.
struct WeirWork {
  std::vector<double> volume, mass;
  std::vector<int> breach;

  WeirWork() = default;
  WeirWork(const StructureTable& t, int scalars)
      : volume(t.crossings.size()), mass(t.crossings.size() * static_cast<std::size_t>(scalars)),
        breach(t.crossings.size()) {}
};

// The view of a table, its tallies and its work arrays on the host.
inline StructureView host_view(const StructureTable& t, std::vector<StructureTally>& tallies, WeirWork& work) {
  return {t.specs.data(),
          t.inlets.data(),
          t.outlets.data(),
          tallies.data(),
          t.count(),
          t.crossings.data(),
          static_cast<int>(t.crossings.size()),
          t.weir_cells.data(),
          t.weir_entries.data(),
          static_cast<int>(t.weir_cells.size()),
          work.volume.data(),
          work.breach.data(),
          work.mass.data(),
          t.end_rounds};
}

// The table of `structures` over `cells` (areas readable on the host), z the
// problem's bed by problem cell. `structures` must outlive the table's views.
// On a rank (replica not empty) the ends index the replica's cells, with
// their beds from it (a rank's cells are a grid's, all of its first cell's area).
template <class Cells>
StructureTable structure_table(const std::vector<Structure>& structures, const StructureReplica& replica,
                               const Cells& cells, const std::vector<double>& z) {
  StructureTable t;
  const auto end = [&](index_t cell) {
    const auto k = static_cast<std::size_t>(cell);
    if (!replica.empty()) return StructureEnd{cell, cells.area(0), replica.z[k]};
    return StructureEnd{cells.state_index(cell), cells.area(cell), z[k]};
  };
  std::vector<int> first;  // each structure's first crossing
  std::map<index_t, std::vector<int>> on_weirs;  // by state index: the weir crossings' entries (WeirCell)
  for (const Structure& st : structures) {
    StructureSpec spec = st.spec;
    spec.discharge = st.discharge.view();
    spec.breach_width = st.width.view();
    first.push_back(static_cast<int>(t.crossings.size()));
    spec.first_crossing = first.back();
    spec.crossings = static_cast<int>(st.crossings.size());
    for (const LineCrossing& x : st.crossings) {
      const int c = static_cast<int>(t.crossings.size());
      t.crossings.push_back({end(x.left), end(x.right), x.length, x.crest, x.s, t.count()});
      if (spec.kind != StructureKind::weir) continue;
      on_weirs[t.crossings.back().left.state].push_back(2 * c);
      on_weirs[t.crossings.back().right.state].push_back(2 * c + 1);
    }
    t.specs.push_back(spec);
    t.inlets.push_back(st.has_ends() ? end(st.inlet) : StructureEnd{});
    t.outlets.push_back(st.has_ends() ? end(st.outlet) : StructureEnd{});
  }
  // A breach senses a crossing of its weir: an index into all the crossings.
  for (StructureSpec& spec : t.specs)
    if (spec.kind == StructureKind::breach) spec.sensor += first[static_cast<std::size_t>(spec.weir)];
  // The pumps', gates' and culverts' rounds: after the last round of any of their cells.
  std::map<index_t, int> next_round;  // by state index: the first round free for a structure on the cell
  int rounds = 0;
  for (std::size_t k = 0; k < t.specs.size(); ++k) {
    if (!joins_ends(t.specs[k].kind)) continue;
    const index_t in = t.inlets[k].state, out = t.outlets[k].state;
    const int round = std::max(next_round[in], next_round[out]);
    t.specs[k].end_round = round;
    next_round[in] = next_round[out] = round + 1;
    rounds = std::max(rounds, round + 1);
  }
  t.end_rounds = rounds;
  // Each weir cell's entries in crossing order, and its share of its area for each of them.
  const auto side = [&](int e) -> StructureEnd& {
    WeirCrossing& x = t.crossings[static_cast<std::size_t>(e >> 1)];
    return (e & 1) != 0 ? x.right : x.left;
  };
  for (auto& [state, entries] : on_weirs) {
    std::sort(entries.begin(), entries.end());
    const WeirCell w{side(entries.front()), static_cast<int>(t.weir_entries.size()), static_cast<int>(entries.size())};
    for (int e : entries) side(e).area = w.end.area / w.count;
    t.weir_entries.insert(t.weir_entries.end(), entries.begin(), entries.end());
    t.weir_cells.push_back(w);
  }
  return t;
}

// Each face of a grid of nx columns that a line of a weir or a wall
// crosses, as f(lo, hi, across_x): its two cells by problem cell (j nx + i),
// lo < hi, and whether it is an x-face (the two share a row). On a rank (a
// replica), those whose two cells lie in the rank's block, its halo's
// included.
template <class F>
void for_each_line_face(const Forcing& forcing, index_t nx, F&& f) {
  const StructureReplica& replica = forcing.replica;
  const auto cell = [&](index_t c) { return replica.empty() ? c : replica.cells[static_cast<std::size_t>(c)]; };
  for (const Structure& st : forcing.structures) {
    for (const LineCrossing& x : st.crossings) {
      const index_t l = cell(x.left), r = cell(x.right);
      if (l < 0 || r < 0) continue;
      const index_t lo = std::min(l, r), hi = std::max(l, r);
      f(lo, hi, hi - lo == 1 && lo / nx == hi / nx);
    }
  }
}

// Which faces of a grid's cells are lines' (for_each_line_face), per padded
// cell (grid.index): bit 0 its west face, 1 east, 2 south, 3 north. Empty
// where no line crosses the grid.
inline std::vector<unsigned char> grid_wall_faces(const Forcing& forcing, const Grid& grid) {
  std::vector<unsigned char> bits;
  for_each_line_face(forcing, grid.nx, [&](index_t lo, index_t, bool across_x) {
    if (bits.empty()) bits.assign(static_cast<std::size_t>(grid.padded_size()), 0);
    const index_t i = lo % grid.nx, j = lo / grid.nx;
    bits[static_cast<std::size_t>(grid.index(i, j))] |= across_x ? 2 : 8;
    bits[static_cast<std::size_t>(across_x ? grid.index(i + 1, j) : grid.index(i, j + 1))] |= across_x ? 1 : 4;
  });
  return bits;
}

// A rank's state of the replica's cells (StructureReplica): h, hu, hv and
// each scalar's h c per replica cell, which the structures run on, and the
// rank's shares of them for the all-reduce (replica_pack).
template <class Real>
struct ReplicaState {
  std::vector<Real> h, hu, hv;
  std::vector<std::vector<Real>> hc;
  std::vector<Real*> hc_views;
  std::vector<double> shares;

  ReplicaState(index_t cells, int scalars)
      : h(static_cast<std::size_t>(cells)), hu(h.size()), hv(h.size()),
        hc(static_cast<std::size_t>(scalars), std::vector<Real>(h.size())),
        shares((3 + static_cast<std::size_t>(scalars)) * h.size()) {}

  StructureCells<Real> arrays(Real h_dry) {
    hc_views.clear();
    for (std::vector<Real>& v : hc) hc_views.push_back(v.data());
    return {h.data(), hu.data(), hv.data(), hc_views.data(), static_cast<int>(hc.size()), h_dry};
  }
};

// A rank's share of value v of a replica cell: v where the rank owns the cell,
// else -0.0. Each cell has one owner, so the sum of all ranks' shares (in any
// order) is the owner's v bit for bit: x + -0.0 is x for every x, +0.0, -0.0
// and NaN included (a +0.0 share would turn an owner's -0.0 into +0.0).
template <class Real>
SHALLOWS_HD double replica_share(bool owned, Real v) {
  return owned ? static_cast<double>(v) : -0.0;
}

// The rank's shares of the replica of state a (by the layout's state index):
// replica[k] is replica cell k's problem cell (StructureReplica::cells, -1
// outside the block), shares holds h, hu, hv, then each scalar's h c, n values
// each. Host or device (one thread).
template <class Cells, class Real>
SHALLOWS_HD void replica_pack(const index_t* replica, index_t n, const Cells& cells, const StructureCells<Real>& a,
                              double* shares) {
  for (index_t k = 0; k < n; ++k) {
    const bool owned = cells.owns(replica[k]);  // false outside the block (-1)
    const index_t c = owned ? cells.state_index(replica[k]) : 0;
    shares[k] = replica_share(owned, a.h[c]);
    shares[n + k] = replica_share(owned, a.hu[c]);
    shares[2 * n + k] = replica_share(owned, a.hv[c]);
    for (int m = 0; m < a.scalars; ++m) shares[(3 + m) * n + k] = replica_share(owned, a.hc[m][c]);
  }
}

// The summed shares of n replica cells (every owner's values, exactly
// representable in Real) into the replica's arrays.
template <class Real>
SHALLOWS_HD void replica_unpack(const double* sums, index_t n, const StructureCells<Real>& replica) {
  for (index_t k = 0; k < n; ++k) {
    replica.h[k] = static_cast<Real>(sums[k]);
    replica.hu[k] = static_cast<Real>(sums[n + k]);
    replica.hv[k] = static_cast<Real>(sums[2 * n + k]);
    for (int m = 0; m < replica.scalars; ++m) replica.hc[m][k] = static_cast<Real>(sums[(3 + m) * n + k]);
  }
}

// The replica's state back into state a, on every replica cell of the rank's
// block, its halo's included: a halo cell steps beside its owner until the
// next exchange and must see what the structures did to it.
template <class Cells, class Real>
SHALLOWS_HD void replica_write_back(const index_t* replica, index_t n, const Cells& cells,
                                    const StructureCells<Real>& from, const StructureCells<Real>& a) {
  for (index_t k = 0; k < n; ++k) {
    if (replica[k] < 0) continue;
    const index_t c = cells.state_index(replica[k]);
    a.h[c] = from.h[k];
    a.hu[c] = from.hu[k];
    a.hv[c] = from.hv[k];
    for (int m = 0; m < a.scalars; ++m) a.hc[m][c] = from.hc[m][k];
  }
}

// Tallies as ForcingState::structures (kTallyValues each, in StructureTally's order), and back.
inline std::vector<double> tally_values(const std::vector<StructureTally>& tallies) {
  std::vector<double> out;
  out.reserve(kTallyValues * tallies.size());
  for (const StructureTally& k : tallies)
    out.insert(out.end(), {k.discharge, k.volume, k.running, k.width, k.timer, k.since});
  return out;
}

// values: kTallyValues per tally (the caller checks the size).
inline std::vector<StructureTally> tallies_of(const std::vector<double>& values) {
  std::vector<StructureTally> out(values.size() / kTallyValues);
  for (std::size_t k = 0; k < out.size(); ++k) {
    const double* v = values.data() + kTallyValues * k;
    out[k] = {v[0], v[1], v[2], v[3], v[4], v[5]};
  }
  return out;
}

}  // namespace shallows
