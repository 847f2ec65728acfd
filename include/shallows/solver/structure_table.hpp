// SPDX-License-Identifier: MIT
#pragma once
// Forcing::structures as apply_structures (physics/structures.hpp) takes
// them, over a cell layout (cell_layout.hpp): each structure's parameters,
// its ends and the crossings of the weirs and walls; and the tallies as
// ForcingState::structures holds them. Built once on the host by every
// executor, CPU and GPU, so that both hand apply_structures the same values.
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
          work.mass.data()};
}

// The table of `structures` over `cells` (areas readable on the host), z the
// problem's bed by problem cell. `structures` must outlive the table's views.
template <class Cells>
StructureTable structure_table(const std::vector<Structure>& structures, const Cells& cells,
                               const std::vector<double>& z) {
  StructureTable t;
  const auto end = [&](index_t cell) {
    return StructureEnd{cells.state_index(cell), cells.area(cell), z[static_cast<std::size_t>(cell)]};
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
    const bool ends = !st.on_line() && spec.kind != StructureKind::breach;
    t.inlets.push_back(ends ? end(st.inlet) : StructureEnd{});
    t.outlets.push_back(ends ? end(st.outlet) : StructureEnd{});
  }
  // A breach senses a crossing of its weir: an index into all the crossings.
  for (StructureSpec& spec : t.specs)
    if (spec.kind == StructureKind::breach) spec.sensor += first[static_cast<std::size_t>(spec.weir)];
  // Each weir cell's entries in crossing order, and its share of its area for each of them.
  for (auto& [state, entries] : on_weirs) {
    std::sort(entries.begin(), entries.end());
    WeirCell w;
    w.first = static_cast<int>(t.weir_entries.size());
    w.count = static_cast<int>(entries.size());
    for (int e : entries) {
      WeirCrossing& x = t.crossings[static_cast<std::size_t>(e >> 1)];
      StructureEnd& side = (e & 1) != 0 ? x.right : x.left;
      w.end = side;
      side.area = w.end.area / w.count;
      t.weir_entries.push_back(e);
    }
    t.weir_cells.push_back(w);
  }
  return t;
}

// Whether a line of a weir or a wall crosses the cells (a weir or wall on them).
inline bool has_crossings(const std::vector<Structure>& structures) {
  for (const Structure& st : structures)
    if (!st.crossings.empty()) return true;
  return false;
}

// Which faces of a grid's cells the lines of weirs and walls cross, per
// padded cell (grid.index): bit 0 its west face, 1 east, 2 south, 3 north.
// A crossing joins two cells of one row (an x-face) or of one column (a
// y-face), by problem cell (j nx + i). Empty where no line crosses the grid.
inline std::vector<unsigned char> grid_wall_faces(const std::vector<Structure>& structures, const Grid& grid) {
  std::vector<unsigned char> bits;
  for (const Structure& st : structures) {
    for (const LineCrossing& c : st.crossings) {
      if (bits.empty()) bits.assign(static_cast<std::size_t>(grid.padded_size()), 0);
      const index_t lo = c.left < c.right ? c.left : c.right, hi = c.left < c.right ? c.right : c.left;
      const index_t i = lo % grid.nx, j = lo / grid.nx;
      const bool across_x = hi - lo == 1 && hi / grid.nx == j;
      bits[static_cast<std::size_t>(grid.index(i, j))] |= across_x ? 2 : 8;
      bits[static_cast<std::size_t>(across_x ? grid.index(i + 1, j) : grid.index(i, j + 1))] |= across_x ? 1 : 4;
    }
  }
  return bits;
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
