// SPDX-License-Identifier: MIT
// CPU executor for unstructured meshes: serial or OpenMP threads.
//
// A step has two passes, as on a grid: the first gives every cell its rhs and
// CFL rate, the second applies rhs with the global dt. The first pass comes
// in two designs (seeds 001 and 004 compare them):
//  cell: each cell evaluates its 3-4 edges (every interior edge twice);
//  edge: each edge once into per-edge buffers, then each cell gathers its
//        edges' fluctuations (no atomics: a cell reads its own edge list).
// Both evaluate an edge in its stored orientation and sum a cell's edges in
// slot order (mesh_edges.hpp), so they give the same bits, for any thread count.
// A first pass stores every cell's primitive (velocity, sqrt(h), celerity:
// the divisions and square roots), so that neither design computes one per
// edge side. After the update, the forcing (rain, infiltration, a Manning
// map, sources: cells_cpu.hpp, the grids' pass over the mesh's cells).
// Where a boundary group is not a wall, the water each step moves through
// the boundary edges is accounted, for the mass balance. Passive scalars
// (scalar_transport.hpp) cross each edge with its mass flux, upwind, from
// the state the step starts from; their h c is then the new concentration
// times the new depth. Without forcing and scalars, blocks of dry cells with
// dry neighbours are left out of a step (dry_blocks.hpp): the same bits.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cells_cpu.hpp"
#include "shallows/bc/side_account.hpp"
#include "shallows/solver/cell_maxima.hpp"
#include "shallows/exec/cpu_backend.hpp"
#include "shallows/exec/host_fields.hpp"
#include "shallows/exec/mesh_fields.hpp"
#include "shallows/mesh/unstructured/dry_blocks.hpp"
#include "shallows/mesh/unstructured/mesh_transport.hpp"
#include "shallows/physics/cell_update.hpp"
#include "shallows/physics/scalar_transport.hpp"
#include "shallows/solver/capabilities.hpp"
#include "shallows/solver/mass_balance.hpp"
#include "shallows/solver/time_step.hpp"

namespace shallows {
namespace {

// Cell primitives read from the arrays the primitive pass filled.
template <class Real>
struct StoredPrimitives {
  const Real *h, *hu, *hv, *z, *u, *v, *sqrt_h, *c;
  CellPrimitive<Real> operator()(mesh_index k) const {
    return {h[k], hu[k], hv[k], z[k], u[k], v[k], sqrt_h[k], c[k]};
  }
};

template <class Real>
class MeshCpuBackend final : public Backend {
 public:
  MeshCpuBackend(const Problem& p, const BackendOptions& o, bool edge_loop)
      : mesh_(make_host_mesh<Real>(p)),
        physics_{static_cast<Real>(p.physics.g), static_cast<Real>(p.physics.h_dry),
                 static_cast<Real>(p.physics.n_manning)},
        cfl_(p.cfl),
        dry_dt_(dry_time_step(p)),
        threads_(o.threads > 0 ? o.threads : omp_get_max_threads()),
        edge_loop_(edge_loop),
        track_maxima_(o.track_maxima),
        arrival_threshold_(o.arrival_threshold),
        forcing_(p, MeshCells{mesh_.area.data(), mesh_.cells}, scalar_inflow<Real>(p), threads_) {
    const auto n = static_cast<std::size_t>(mesh_.cells);
    rhs_h_.assign(n, Real(0));
    rhs_hu_.assign(n, Real(0));
    rhs_hv_.assign(n, Real(0));
    rate_.assign(n, Real(0));
    for (auto* v : {&u_, &v_, &sqrt_h_, &c_}) v->assign(n, Real(0));
    if (edge_loop_) {
      const auto e = static_cast<std::size_t>(mesh_.edges);
      for (auto* v : {&fl_h_, &fl_hu_, &fl_hv_, &fr_h_, &fr_hu_, &fr_hv_, &speed_}) v->assign(e, Real(0));
    }
    if (!closed_domain(p)) {
      forcing_.keep_sides(p.mesh_boundary.size());
      for (index_t e = 0; e < mesh_.edges; ++e) {
        const mesh_index r = mesh_.edge_right[static_cast<std::size_t>(e)];
        if (r < 0 && p.mesh_boundary[static_cast<std::size_t>(boundary_group(r))].kind != BoundaryKind::wall)
          open_edges_.push_back(static_cast<mesh_index>(e));
      }
    }
    if (track_maxima_) {
      maxima_.start(mesh_.cells);
      update_maxima(0.0);
    }
    start_scalars(p);
    if (o.dry_skip && skips_dry_cells(p)) start_dry_skip(p);
    if (p.forcing.has_boundary_series()) {
      group_series_ = p.forcing.groups;
      group_series_.resize(mesh_.boundary.size());
      constant_boundary_ = mesh_.boundary;
    }
  }

  std::string name() const override {
    return std::string(threads_ == 1 ? "serial" : "openmp") + (edge_loop_ ? " mesh (edge loop)" : " mesh (cell loop)");
  }

  double step(double t, double dt_max) override {
    // The groups' conditions at the step's start.
    for (std::size_t g = 0; g < group_series_.size(); ++g)
      mesh_.boundary[g] = condition_at_time(constant_boundary_[g], group_series_[g].view(), t);
    if (skip_.on()) {
      decide_blocks();
    } else {
      cells_computed_ += static_cast<double>(mesh_.cells);
    }
    const double rate = edge_loop_ ? edge_pass() : cell_pass();
    if (!std::isfinite(rate)) throw std::runtime_error("solution is no longer finite at t = " + std::to_string(t) + " s");
    const double dt = cfl_time_step(rate, cfl_, dry_dt_, dt_max);
    if (forcing_.sides_kept()) account_boundary(dt);
    if (!hc_.empty()) transport_scalars(static_cast<Real>(dt));
    apply_rhs(static_cast<Real>(dt));
    if (!hc_.empty()) detail::store_concentrations(layout(), mesh_.h.data(), mesh_.z.data(), conc_, hc_, threads_);
    forcing_.apply(arrays(), hc_, t, dt, physics_, sum_reducer());
    if (track_maxima_) update_maxima(t + dt);
    return dt;
  }

  ForcingVolumes forcing_volumes() const override { return forcing_.volumes(); }
  void read_forcing_state(ForcingState& out) const override { forcing_.read(out); }
  void load_forcing_state(const ForcingState& in) override { forcing_.load(in); }
  BoundaryFlow boundary_flow() const override { return forcing_.side_flow(); }

  void read_state(Fields& out) const override {
    const auto copy = [](const std::vector<Real>& v, std::vector<double>& o) { o.assign(v.begin(), v.end()); };
    copy(mesh_.h, out.h);
    copy(mesh_.hu, out.hu);
    copy(mesh_.hv, out.hv);
    out.hc.resize(hc_.size());
    for (std::size_t s = 0; s < hc_.size(); ++s) copy(hc_[s], out.hc[s]);
  }

  void read_maxima(Maxima& out) const override { maxima_.read(out); }

  void load_state(const Fields& in) override {
    check_load_size(fields_sized(in, mesh_.h.size()) && scalars_sized(in, hc_.size(), mesh_.h.size()), "load_state");
    const auto copy = [](const std::vector<double>& v, std::vector<Real>& o) {
      for (std::size_t k = 0; k < v.size(); ++k) o[k] = static_cast<Real>(v[k]);
    };
    copy(in.h, mesh_.h);
    copy(in.hu, mesh_.hu);
    copy(in.hv, mesh_.hv);
    for (std::size_t s = 0; s < hc_.size(); ++s) copy(in.hc[s], hc_[s]);
    // Nothing is known of the new state: every block is computed in the next step.
    std::fill(dry_.begin(), dry_.end(), 0);
    std::fill(fresh_.begin(), fresh_.end(), 0);
  }

  void load_maxima(const Maxima& in) override { maxima_.load(in); }

  double volume() const override { return detail::cell_volume(layout(), mesh_.h.data(), mesh_.z.data(), threads_); }

  double positivity_volume() const override { return positivity_volume_; }

  double cells_computed() const override { return cells_computed_; }

 private:
  MeshState<Real> state() const { return {mesh_.h.data(), mesh_.hu.data(), mesh_.hv.data()}; }

  StoredPrimitives<Real> primitives() {
    const MeshArrays<Real> m = mesh_.arrays();
    const MeshState<Real> q = state();
#pragma omp parallel for num_threads(threads_) schedule(static, 4096)
    for (index_t c = 0; c < mesh_.cells; ++c) {
      if (skip_.on()) {
        // A block left out keeps the primitives of its state, computed once after its last update.
        const auto b = static_cast<std::size_t>(dry_block_of(c));
        if (!needed_[b] && fresh_[b]) continue;
        fresh_[b] = 1;  // blocks of 32 cells stay with one thread (chunks of 4096)
      }
      const CellPrimitive<Real> w = mesh_cell_primitive(m, q, static_cast<mesh_index>(c), physics_);
      const auto k = static_cast<std::size_t>(c);
      u_[k] = w.u;
      v_[k] = w.v;
      sqrt_h_[k] = w.sqrt_h;
      c_[k] = w.c;
    }
    return {q.h, q.hu, q.hv, m.z, u_.data(), v_.data(), sqrt_h_.data(), c_.data()};
  }

  void store(index_t c, const MeshCellSum<Real>& s, const MeshArrays<Real>& m) {
    const State<Real> r = s.rhs(m.inv_area[c]);
    rhs_h_[static_cast<std::size_t>(c)] = r.h;
    rhs_hu_[static_cast<std::size_t>(c)] = r.hu;
    rhs_hv_[static_cast<std::size_t>(c)] = r.hv;
    rate_[static_cast<std::size_t>(c)] = s.rate(m.inv_area[c]);
  }

  double max_rate() const {
    Real rate = 0;
    bool finite = true;
#pragma omp parallel for num_threads(threads_) schedule(static, 4096) reduction(max : rate) reduction(&& : finite)
    for (index_t c = 0; c < mesh_.cells; ++c) {
      if (!needed(c)) continue;
      const Real r = rate_[static_cast<std::size_t>(c)];
      finite = finite && std::isfinite(r) && std::isfinite(rhs_h_[static_cast<std::size_t>(c)]);
      rate = std::max(rate, r);
    }
    return finite ? static_cast<double>(rate) : std::numeric_limits<double>::quiet_NaN();
  }

  double cell_pass() {
    const StoredPrimitives<Real> w = primitives();
    const MeshArrays<Real> m = mesh_.arrays();
#pragma omp parallel for num_threads(threads_) schedule(static, 1024)
    for (index_t c = 0; c < mesh_.cells; ++c)
      if (needed(c)) store(c, mesh_cell_sum(m, w, static_cast<mesh_index>(c), physics_), m);
    return max_rate();
  }

  double edge_pass() {
    const StoredPrimitives<Real> w = primitives();
    const MeshArrays<Real> m = mesh_.arrays();
#pragma omp parallel for num_threads(threads_) schedule(static, 1024)
    for (index_t e = 0; e < mesh_.edges; ++e) {
      const auto k = static_cast<std::size_t>(e);
      if (!needed(m.edge_left[k]) && (m.edge_right[k] < 0 || !needed(m.edge_right[k]))) continue;
      const EdgeFluctuation<Real> f = evaluate_mesh_edge(m, w, static_cast<mesh_index>(e), w(m.edge_left[k]), physics_);
      fl_h_[k] = f.to_left.h;
      fl_hu_[k] = f.to_left.hu;
      fl_hv_[k] = f.to_left.hv;
      fr_h_[k] = f.to_right.h;
      fr_hu_[k] = f.to_right.hu;
      fr_hv_[k] = f.to_right.hv;
      speed_[k] = f.speed;
    }
#pragma omp parallel for num_threads(threads_) schedule(static, 1024)
    for (index_t c = 0; c < mesh_.cells; ++c) {
      if (!needed(c)) continue;
      MeshCellSum<Real> s;
      for (int j = 0; j < 4; ++j) {
        const mesh_index e = m.cell_edges[4 * c + j];
        if (e < 0) continue;
        const auto k = static_cast<std::size_t>(e);
        if (m.edge_left[k] == c) {
          s.add({fl_h_[k], fl_hu_[k], fl_hv_[k]}, speed_[k], m.edge_length[k]);
        } else {
          s.add({fr_h_[k], fr_hu_[k], fr_hv_[k]}, speed_[k], m.edge_length[k]);
        }
      }
      store(c, s, m);
    }
    return max_rate();
  }

  // advance_cell for every active cell; the clamp gains times the cell areas
  // go to the positivity account, summed per block of cells in cell order,
  // then the blocks in order: the same bits for any thread count. With dry
  // skipping, the needed dry blocks only, each marked dry again or not.
  void apply_rhs(Real dt) {
    const PhysicsParams<Real> p = physics_;
    constexpr index_t block = 4096;  // a multiple of kDryBlockCells
    const index_t blocks = (mesh_.cells + block - 1) / block;
    block_gain_.assign(static_cast<std::size_t>(blocks), 0.0);
    // Blocks dealt in turn: with dry skipping the wet cells are a few ranges of the numbering.
#pragma omp parallel for num_threads(threads_) schedule(static, 1)
    for (index_t b = 0; b < blocks; ++b) {
      double gained = 0;
      const index_t end = std::min(mesh_.cells, (b + 1) * block);
      for (index_t c0 = b * block; c0 < end; c0 += kDryBlockCells) {
        const index_t c1 = std::min(end, c0 + kDryBlockCells);
        if (!needed(c0)) continue;
        bool dry = true;
        for (index_t c = c0; c < c1; ++c) {
          const auto k = static_cast<std::size_t>(c);
          if (math::is_nan(mesh_.z[k])) continue;  // inactive: no edges, no update
          Real added_depth;
          const State<Real> out = advance_cell(State<Real>{mesh_.h[k], mesh_.hu[k], mesh_.hv[k]},
                                               State<Real>{rhs_h_[k], rhs_hu_[k], rhs_hv_[k]}, dt, p, added_depth);
          mesh_.h[k] = out.h;
          mesh_.hu[k] = out.hu;
          mesh_.hv[k] = out.hv;
          if (added_depth > Real(0)) gained += static_cast<double>(added_depth) * mesh_.area[k];
          dry = dry && dry_fixed_point(out, p.h_dry);
        }
        if (skip_.on()) {
          const auto d = static_cast<std::size_t>(dry_block_of(c0));
          dry_[d] = dry && !skip_.open[d];
          fresh_[d] = 0;
        }
      }
      block_gain_[static_cast<std::size_t>(b)] = gained;
    }
    for (double g : block_gain_) positivity_volume_ += g;
  }

  // The blocks of 32 cells, their neighbours and flags: no block is dry yet,
  // so the first step computes them all.
  void start_dry_skip(const Problem& p) {
    graph_ = dry_block_graph(mesh_.cells, mesh_.edge_left, mesh_.edge_right, p.mesh_boundary);
    const auto blocks = static_cast<std::size_t>(graph_.blocks);
    dry_.assign(blocks, 0);
    needed_.assign(blocks, 1);
    fresh_.assign(blocks, 0);
    skip_ = {graph_.start.data(), graph_.neighbours.data(), graph_.open.data(), dry_.data(), needed_.data()};
  }

  // This step's blocks, from the dry flags the last update left.
  void decide_blocks() {
    index_t cells = 0;
#pragma omp parallel for num_threads(threads_) schedule(static, 1024) reduction(+ : cells)
    for (index_t b = 0; b < graph_.blocks; ++b) {
      const bool need = dry_block_needed(skip_, b);
      needed_[static_cast<std::size_t>(b)] = need;
      if (need) cells += std::min(kDryBlockCells, mesh_.cells - b * kDryBlockCells);
    }
    cells_computed_ += static_cast<double>(cells);
  }

  bool needed(index_t c) const { return !skip_.on() || needed_[static_cast<std::size_t>(dry_block_of(c))]; }

  // Before the update of a step of dt, from the state it starts from: the
  // water through each boundary edge that is not a wall, dt |Gamma| times
  // its inflow (edge_inflow: the cell is the edge's left). Edges in order:
  // the same bits for any thread count.
  void account_boundary(double dt) {
    const MeshArrays<Real> m = mesh_.arrays();
    const MeshState<Real> q = state();
    for (const mesh_index e : open_edges_) {
      const auto g = static_cast<std::size_t>(boundary_group(m.edge_right[e]));
      forcing_.add_side(g, mesh_boundary_inflow(m, q, e, physics_) * dt);
    }
  }

  // h c = c h of each scalar on the active cells; the concentrations each
  // boundary group brings.
  void start_scalars(const Problem& p) {
    const auto n = static_cast<std::size_t>(mesh_.cells);
    for (const std::vector<double>& initial : initial_scalars(p)) hc_.emplace_back(initial.begin(), initial.end());
    group_c_ = group_concentrations<Real>(p);
    if (hc_.empty()) return;
    conc_.assign(hc_.size(), std::vector<Real>(n, Real(0)));
    mass_flux_.assign(static_cast<std::size_t>(mesh_.edges), Real(0));
  }

  // Each edge's mass flux (mesh_edge_mass_flux), from the state the step
  // starts from, then each scalar's new concentration in every active cell
  // (mesh_cell_concentrations), in conc_.
  void transport_scalars(Real dt) {
    const MeshArrays<Real> m = mesh_.arrays();
    const MeshState<Real> q = state();
    const StoredPrimitives<Real> w{q.h, q.hu, q.hv, m.z, u_.data(), v_.data(), sqrt_h_.data(), c_.data()};
#pragma omp parallel for num_threads(threads_) schedule(static, 1024)
    for (index_t e = 0; e < mesh_.edges; ++e) {
      const auto k = static_cast<std::size_t>(e);
      const auto edge = static_cast<mesh_index>(e);
      const EdgeFluctuation<Real> f =
          edge_loop_
              ? EdgeFluctuation<Real>{{fl_h_[k], fl_hu_[k], fl_hv_[k]}, {fr_h_[k], fr_hu_[k], fr_hv_[k]}, speed_[k]}
              : evaluate_mesh_edge(m, w, edge, w(m.edge_left[k]), physics_);
      mass_flux_[k] = mesh_edge_mass_flux(m, q, edge, f);
    }
    const auto groups = static_cast<index_t>(mesh_.boundary.size());
    const auto scalars = static_cast<int>(hc_.size());
#pragma omp parallel for num_threads(threads_) schedule(static, 1024)
    for (index_t c = 0; c < mesh_.cells; ++c) {
      if (math::is_nan(m.z[c])) continue;
      mesh_cell_concentrations(
          m, q, mass_flux_.data(), static_cast<mesh_index>(c), dt, scalars,
          [&](int s) { return hc_[static_cast<std::size_t>(s)].data(); }, group_c_.data(), groups,
          [&](int s, Real conc) { conc_[static_cast<std::size_t>(s)][static_cast<std::size_t>(c)] = conc; });
    }
  }

  MeshCells layout() const { return {mesh_.area.data(), mesh_.cells}; }
  StateArrays<Real> arrays() { return {mesh_.h.data(), mesh_.hu.data(), mesh_.hv.data(), mesh_.z.data()}; }

  void update_maxima(double t) {
    maxima_.track(layout(), arrays(), t, physics_.h_dry, arrival_threshold_, threads_);
  }

  HostMesh<Real> mesh_;
  PhysicsParams<Real> physics_;
  double cfl_;
  double dry_dt_;  // dry_time_step
  int threads_;
  bool edge_loop_;
  bool track_maxima_;
  double arrival_threshold_;
  std::vector<Real> rhs_h_, rhs_hu_, rhs_hv_, rate_;
  std::vector<Real> u_, v_, sqrt_h_, c_;  // cell primitives of the current step
  std::vector<Real> fl_h_, fl_hu_, fl_hv_, fr_h_, fr_hu_, fr_hv_, speed_;  // edge loop: per-edge fluctuations
  detail::CpuMaxima maxima_;
  double positivity_volume_ = 0;
  std::vector<double> block_gain_;  // apply_rhs's positivity gains per block of cells
  detail::CpuForcing<Real, MeshCells> forcing_;
  // With the water through the boundary groups (forcing_.add_side), kept where one is not a wall.
  std::vector<mesh_index> open_edges_;  // boundary edges of groups that are not walls, in edge order
  // Passive scalars: h c of each, per cell; their new concentrations during
  // a step; the edges' mass fluxes; the concentration each boundary group
  // brings, of scalar s and group g at group_c_[s groups + g].
  std::vector<std::vector<Real>> hc_, conc_;
  std::vector<Real> mass_flux_, group_c_;
  // Dry skipping (skip_.on()): the block graph, each block's flags (dry_blocks.hpp) and whether its stored
  // primitives are those of its state.
  DryBlockGraph graph_;
  std::vector<unsigned char> dry_, needed_, fresh_;
  DryBlocks skip_{};
  double cells_computed_ = 0;
  // Boundary groups that follow a time series (Forcing::groups; empty: none), and their conditions as read.
  std::vector<TimeSeries> group_series_;
  std::vector<BoundaryCondition<Real>> constant_boundary_;
};

} // namespace

std::unique_ptr<Backend> make_mesh_cpu_backend(const Problem& problem, const BackendOptions& options) {
  if (problem.scheme != Scheme::roe1)
    throw std::logic_error("make_mesh_cpu_backend: a scheme other than roe1 (make_backend refuses it first)");
  // auto: the edge loop, the faster on the CPU with every cell numbering (bench/results.md).
  bool edge_loop = true;
  if (options.mesh_loop == "cell") {
    edge_loop = false;
  } else if (options.mesh_loop != "edge" && options.mesh_loop != "auto") {
    throw std::invalid_argument("unknown mesh loop '" + options.mesh_loop + "' (valid: auto, cell, edge)");
  }
  if (problem.precision == Precision::single_precision)
    return std::make_unique<MeshCpuBackend<float>>(problem, options, edge_loop);
  return std::make_unique<MeshCpuBackend<double>>(problem, options, edge_loop);
}

} // namespace shallows
