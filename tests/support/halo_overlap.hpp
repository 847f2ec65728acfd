// SPDX-License-Identifier: MIT
#pragma once
// A rank's step with its halo exchange in flight (HaloEndpoint::exchange_in_next_step)
// against the same step with the exchange done first, for any executor: on
// each block of a 2 x 2 process grid, two executors of the block take k
// steps, then one unpacks the true halos (a one-process run's state) and
// steps, and the other steps with that unpack as its exchange. Before it, the
// second one's halos hold another flow's state, as a rank's halos do before
// their exchange lands: an inner cell that read a halo early would show.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "shallows/exec/mpi/decomposition.hpp"
#include "shallows/solver/backend.hpp"
#include "support/problems.hpp"

namespace shallows::test_support {

using MakeBackend = std::function<std::unique_ptr<Backend>(const Problem&)>;

// A dam break over a sloping bed with a dry floodplain, Manning friction;
// `raised` gives another flow of the same grid (the halos' poison).
inline Problem overlap_flow(Scheme scheme, Precision precision, bool raised = false, index_t nx = 48,
                            index_t ny = 40) {
  const auto z = [](double x, double y) { return 0.2 * x + 0.05 * std::sin(6 * y); };
  const auto eta = [raised](double x, double y) {
    if (raised) return 0.9 + 0.1 * std::cos(4 * x + 3 * y);
    return x < 0.45 && y > 0.2 ? 0.8 : 0.1;
  };
  Problem p = make_problem(nx, ny, 0, 1, 0, 1, z, eta);
  if (raised) {
    for (std::size_t k = 0; k < p.hu.size(); ++k) {
      p.hu[k] = 0.3 * p.h[k];
      p.hv[k] = -0.2 * p.h[k];
    }
  }
  p.scheme = scheme;
  p.precision = precision;
  p.physics.n_manning = 0.03;
  p.cfl = 0.9;
  return p;
}

// The cells of box (global indices) of a global field.
inline std::vector<double> cut(const std::vector<double>& f, const Grid& g, const CellBox& box) {
  std::vector<double> out;
  for (index_t j = box.j0; j < box.j1; ++j)
    for (index_t i = box.i0; i < box.i1; ++i) out.push_back(f[static_cast<std::size_t>(j * g.nx + i)]);
  return out;
}

// k steps of dt (well under the CFL bound, so that every executor takes
// the same dt whatever rates it sees), then the step with the exchange.
inline void expect_overlap_bits(const MakeBackend& make, Scheme scheme, Precision precision, const std::string& what,
                                int k = 2, index_t nx = 48, index_t ny = 40, double dt = 1e-4) {
  const Problem global = overlap_flow(scheme, precision, false, nx, ny);
  const Problem other = overlap_flow(scheme, precision, true, nx, ny);
  const int r = mpi::stencil_radius(scheme);
  const index_t halo = index_t(k) * r + 1;  // + 1: the CUDA lagged kernel's stored rhs
  std::unique_ptr<Backend> one = make(global);
  double t = 0;
  for (int s = 0; s < k; ++s) t += one->step(t, dt);
  Fields truth;
  one->read_state(truth);
  const mpi::ProcessGrid pg{2, 2};
  for (int rank = 0; rank < 4; ++rank) {
    const std::string label = what + ", block " + std::to_string(rank);
    const mpi::Block b = mpi::make_block(pg, rank, global.grid.nx, global.grid.ny, halo);
    const Problem local = mpi::local_problem(global, b);
    const CellBox o = b.owned_in_local();
    const index_t width = b.local.nx();
    // The boxes an exchange writes, and the cells that can step beside it, as the distributed executor has them.
    std::vector<CellBox> boxes;
    const mpi::ExchangeBoxes all = mpi::exchange_boxes(b, halo);
    for (int s = 0; s < 4; ++s)
      if (b.neighbour[s] >= 0) boxes.push_back(all.recv[static_cast<std::size_t>(s)]);
    const CellBox inner = mpi::inner_cells(b, r);

    // The true halos (the one-process state), and the poison, from executors of the block.
    Fields local_truth{cut(truth.h, global.grid, b.local), cut(truth.hu, global.grid, b.local),
                       cut(truth.hv, global.grid, b.local), {}};
    std::unique_ptr<Backend> true_halos = make(local);
    true_halos->load_state(local_truth);
    std::unique_ptr<Backend> poison = make(mpi::local_problem(other, b));
    std::vector<BoxBuffer> packed, poisoned;  // the executors' host buffers (page-locked on a GPU)
    for (const CellBox& box : boxes) {
      packed.push_back(true_halos->halo()->host_buffer(true_halos->halo()->box_bytes(box)));
      true_halos->halo()->pack_box(box, packed.back().get());
      poisoned.push_back(poison->halo()->host_buffer(poison->halo()->box_bytes(box)));
      poison->halo()->pack_box(box, poisoned.back().get());
    }

    std::unique_ptr<Backend> first = make(local), beside = make(local);
    double tl = 0;
    for (int s = 0; s < k; ++s) {
      first->step(tl, dt);
      tl += beside->step(tl, dt);
    }
    for (std::size_t q = 0; q < boxes.size(); ++q) first->halo()->unpack_box(boxes[q], packed[q].get());
    first->halo()->refresh_ghosts();
    first->step(tl, dt);

    for (std::size_t q = 0; q < boxes.size(); ++q) beside->halo()->unpack_box(boxes[q], poisoned[q].get());
    int calls = 0;
    const bool split = beside->halo()->exchange_in_next_step(inner, [&] {
      ++calls;
      for (std::size_t q = 0; q < boxes.size(); ++q) beside->halo()->unpack_box(boxes[q], packed[q].get());
      beside->halo()->refresh_ghosts();
    });
    EXPECT_TRUE(split) << label;
    beside->step(tl, dt);
    EXPECT_EQ(calls, 1) << label;

    Fields a, c;
    first->read_state(a);
    beside->read_state(c);
    std::size_t differ = 0;
    for (std::size_t q = 0; q < a.h.size(); ++q)
      differ += a.h[q] != c.h[q] || a.hu[q] != c.hu[q] || a.hv[q] != c.hv[q];
    EXPECT_EQ(differ, 0u) << label << ": cells that differ from the step after the exchange";

    // The owned cells are the one-process run's after its next step (ghost-cell expansion).
    one->step(t, dt);
    Fields next;
    one->read_state(next);
    std::size_t wrong = 0;
    for (index_t j = 0; j < b.owned.ny(); ++j) {
      for (index_t i = 0; i < b.owned.nx(); ++i) {
        const auto g = static_cast<std::size_t>((b.owned.j0 + j) * global.grid.nx + b.owned.i0 + i);
        const auto l = static_cast<std::size_t>((o.j0 + j) * width + o.i0 + i);
        wrong += c.h[l] != next.h[g] || c.hu[l] != next.hu[g] || c.hv[l] != next.hv[g];
      }
    }
    EXPECT_EQ(wrong, 0u) << label << ": owned cells that differ from one process";
    one->load_state(truth);  // back to step k for the next block
  }
}

}  // namespace shallows::test_support
