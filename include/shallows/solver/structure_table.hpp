// SPDX-License-Identifier: MIT
#pragma once
// Forcing::structures as apply_structures (physics/structures.hpp) takes
// them, over a cell layout (cell_layout.hpp): each structure's parameters,
// its ends and the crossings of the weirs and walls; and the tallies as
// ForcingState::structures holds them. Built once on the host by every
// executor, CPU and GPU, so that both hand apply_structures the same values.
#include <cstddef>
#include <vector>

#include "shallows/physics/structures.hpp"
#include "shallows/solver/forcing.hpp"

namespace shallows {

struct StructureTable {
  // The series views point at the Structures the table was made from
  // (discharge, width): a device copy points them at its own arrays.
  std::vector<StructureSpec> specs;
  std::vector<StructureEnd> inlets, outlets;  // empty ends for weirs, walls and breaches
  std::vector<WeirCrossing> crossings;        // the weirs' and walls' crossings, in structure order

  bool empty() const { return specs.empty(); }
  int count() const { return static_cast<int>(specs.size()); }
};

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
  for (const Structure& st : structures) {
    StructureSpec spec = st.spec;
    spec.discharge = st.discharge.view();
    spec.breach_width = st.width.view();
    first.push_back(static_cast<int>(t.crossings.size()));
    spec.first_crossing = first.back();
    spec.crossings = static_cast<int>(st.crossings.size());
    for (const LineCrossing& x : st.crossings)
      t.crossings.push_back({end(x.left), end(x.right), x.length, x.crest, x.s});
    t.specs.push_back(spec);
    const bool ends = !st.on_line() && spec.kind != StructureKind::breach;
    t.inlets.push_back(ends ? end(st.inlet) : StructureEnd{});
    t.outlets.push_back(ends ? end(st.outlet) : StructureEnd{});
  }
  // A breach senses a crossing of its weir: an index into all the crossings.
  for (StructureSpec& spec : t.specs)
    if (spec.kind == StructureKind::breach) spec.sensor += first[static_cast<std::size_t>(spec.weir)];
  return t;
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
