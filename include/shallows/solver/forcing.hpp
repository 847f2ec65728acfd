// SPDX-License-Identifier: MIT
#pragma once
// The forcing of a problem beyond its boundaries (seed 004): rain, infiltration,
// a Manning map, volume sources. Host data, one value per cell in the
// problem's cell order; the executors turn them into views
// (physics/forcing.hpp) and apply them after each step.
#include <array>
#include <limits>
#include <string>
#include <vector>

#include "shallows/core/config.hpp"
#include "shallows/physics/forcing.hpp"
#include "shallows/physics/structures.hpp"

namespace shallows {

// Values at increasing times, linear in between; one knot is a constant.
struct TimeSeries {
  std::vector<double> t, v;
  SeriesView view() const { return {t.data(), v.data(), static_cast<int>(t.size())}; }
  bool empty() const { return t.empty(); }
  static TimeSeries constant(double value) { return {{0.0}, {value}}; }
};

// A per-cell input as Forcing keeps it: v[k], or v[0] for a uniform value,
// or dflt where v is empty.
inline double per_cell(const std::vector<double>& v, std::size_t k, double dflt) {
  if (v.empty()) return dflt;
  return v.size() == 1 ? v[0] : v[k];
}

struct Rain {
  TimeSeries rate;            // m/s; empty: no rain
  std::vector<double> scale;  // per cell, times rate (a rain raster gives its rates here and rate = 1); empty: 1
  // A stack of rate rasters over time (radar rainfall), used instead of rate
  // and scale where it has frames: frame k's rates (m/s, one per cell) hold
  // on [frame_times[k], frame_times[k + 1]), the last frame's to the end of
  // the run (physics/rain_frames.hpp). frames[k * cells + cell], cells
  // row-major; frame_times increase and frame_times[0] <= 0.
  std::vector<double> frame_times;
  std::vector<double> frames;

  bool has_frames() const { return !frame_times.empty(); }
  bool active() const { return !rate.empty() || has_frames(); }
};

struct Infiltration {
  InfiltrationModel model = InfiltrationModel::none;
  // Per cell (or one value for every cell): Green-Ampt Ks (m/s), suction psi (m), moisture deficit (-);
  // initial + constant loss: initial loss (m), rate (m/s), p2 unused.
  std::vector<double> p0, p1, p2;
};

struct VolumeSource {
  std::string name;            // for messages and summary.json: "source 'well'", "segment west 120-380"
  std::vector<index_t> cells;  // the problem's cell indices (a point: one)
  TimeSeries discharge;        // m^3/s; > 0 brings water in
};

// A pair of the problem's cells across a weir's or a wall's line
// (WeirCrossing, by problem cell): on a grid the face between them, on a
// mesh the edge between them, made a wall on each side when the case is read.
struct LineCrossing {
  index_t left = 0, right = 0;  // the cells on the line's left and right
  double length = 0;            // of the face or edge (m)
  double crest = 0;             // weirs: the crest there (m)
  double s = 0;                 // the crossing's distance along the line (m)
};

// A hydraulic structure ([[structure]]: a pump, a gate, a culvert between two
// cells; a weir or a wall along a line; a breach of a weir;
// physics/structures.hpp). spec's series are left empty here: the executor
// points them at its own copies of `discharge` and `width`, and a weir's
// first_crossing and a breach's sensor (here an index into its weir's
// crossings) at its own array of all the crossings.
struct Structure {
  std::string name;             // as the case names it: summary.json, structures.csv, messages
  index_t inlet = 0, outlet = 0;  // pumps, gates, culverts: the problem's cells holding the ends
  StructureSpec spec;
  TimeSeries discharge;         // pumps and gates: m^3/s from the inlet to the outlet
  std::vector<LineCrossing> crossings;  // weirs and walls
  TimeSeries width;             // breaches growing by a series: m against the time since the start (s)

  bool on_line() const { return spec.kind == StructureKind::weir || spec.kind == StructureKind::wall; }
  // A pump, a gate or a culvert: an inlet and an outlet (the others act along a weir's or a wall's line).
  bool has_ends() const { return joins_ends(spec.kind); }
};

// A rank's replica of the cells the structures touch, made by local_problem
// for a rank of a distributed run (empty in one process): there, Structure's
// inlet, outlet and crossings' cells index it, each cell once. Per cell: its
// problem cell in the rank's block (-1: outside it) and its bed. Each step the
// forcing fills the replica from the ranks that own its cells (an all-reduce:
// replica_pack), runs the structures on it as every rank does alike, and
// writes it back to the cells of its block (replica_write_back), so that the
// structures see and leave the one-rank values (structure_table.hpp).
struct StructureReplica {
  std::vector<index_t> cells;
  std::vector<double> z;

  bool empty() const { return cells.empty(); }
  index_t size() const { return static_cast<index_t>(cells.size()); }
};

struct Forcing {
  Rain rain;
  Infiltration infiltration;
  std::vector<double> manning;  // per cell (s/m^(1/3)); empty: physics.n_manning everywhere
  std::vector<VolumeSource> sources;
  // Applied after the sources, in their order.
  std::vector<Structure> structures;
  StructureReplica replica;  // a rank's; empty in one process
  // Grid sides (indexed by Side) whose inflow discharge or level eta changes
  // over time; empty: the condition's constant value. A step takes the value
  // at its start time.
  std::array<TimeSeries, 4> boundary{};
  // The same for a mesh's boundary groups (Problem::mesh_boundary), by group; empty: none follows one.
  std::vector<TimeSeries> groups;

  bool has_boundary_series() const {
    for (const TimeSeries& s : boundary)
      if (!s.empty()) return true;
    for (const TimeSeries& s : groups)
      if (!s.empty()) return true;
    return false;
  }

  // Whether the executors' pass over the cells has work: rain, infiltration or a Manning map.
  bool forces_cells() const {
    return rain.active() || infiltration.model != InfiltrationModel::none || !manning.empty();
  }

  // Whether anything beyond the boundary conditions' constant values acts.
  bool active() const {
    return forces_cells() || !sources.empty() || !structures.empty() || has_boundary_series();
  }
};

// Throws std::invalid_argument, naming the input, where the forcing does not
// fit a layout of `cells` cells: a per-cell input (rain scale, Manning map,
// infiltration parameters) with neither 1 value nor one per cell, a rain stack
// without one rate per cell and frame or with frames out of time order, a
// series with as many times as values. Every executor checks with it.
void check_forcing_sizes(const Forcing& f, std::size_t cells);

// Water the forcing moved since the start of a run (m^3).
struct ForcingVolumes {
  double rain = 0;          // fallen on active cells
  double infiltration = 0;  // taken by the soil
  double sources = 0;       // net volume of the sources (sinks negative)
};

// Water that crossed the grid's sides since the start of a run (m^3); NaN
// where the executor keeps no such account.
struct BoundaryFlow {
  double in = std::numeric_limits<double>::quiet_NaN();
  double out = std::numeric_limits<double>::quiet_NaN();
  bool kept() const { return !(in != in) && !(out != out); }

  // The sum of an account kept as (in, out) pairs, one per side or boundary
  // group (ForcingState::boundary), in their order.
  static BoundaryFlow of_pairs(const double* in_out, std::size_t pairs) {
    BoundaryFlow f{0, 0};
    for (std::size_t s = 0; s < pairs; ++s) {
      f.in += in_out[2 * s];
      f.out += in_out[2 * s + 1];
    }
    return f;
  }
};

// What the forcing of a run carries from step to step: the cumulative
// infiltration of each cell and the accounts of the volumes moved, kept per
// grid row (depths summed over the row's cells and over the steps; on a mesh
// per block of cells, in m^3) and per source (m^3), so that a restarted run
// sums them in the same order as an uninterrupted one.
struct ForcingState {
  std::vector<double> infiltration;  // m, interior cells row-major; empty without infiltration
  std::vector<double> rain_rows, infiltration_rows;
  std::vector<double> sources;
  // Water in and out through each side (m^3; west in, west out, east in, ...;
  // a mesh: per boundary group), where the executor keeps that account
  // (Backend::boundary_flow).
  std::vector<double> boundary;
  // Per structure (Forcing::structures), its StructureTally (kTallyValues
  // values: discharge of the last step, volume so far, running, a breach's
  // width, trigger timer and start); empty without structures.
  std::vector<double> structures;

  // The volume structure k moved from its inlet to its outlet so far (m^3).
  double structure_volume(std::size_t k) const { return structures[kTallyValues * k + 1]; }
  double structure_discharge(std::size_t k) const { return structures[kTallyValues * k]; }
  double structure_width(std::size_t k) const { return structures[kTallyValues * k + 3]; }

  // The accounts summed in row and source order; area: a cell's area.
  ForcingVolumes volumes(double area) const {
    ForcingVolumes v;
    for (double r : rain_rows) v.rain += r;
    for (double r : infiltration_rows) v.infiltration += r;
    for (double s : sources) v.sources += s;
    v.rain *= area;
    v.infiltration *= area;
    return v;
  }
};

}  // namespace shallows
