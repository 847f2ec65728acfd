// SPDX-License-Identifier: MIT
#pragma once
// Halo rectangles of a distributed run (Backend::pack_box) packed into and
// out of one contiguous device buffer, so that a halo crosses to the host in
// one copy: a column strip copied row by row (cudaMemcpy2D) moves a few
// bytes per row and took milliseconds per exchange.
#include "shallows/mesh/structured/grid.hpp"

namespace shallows::cudax {

// The padded fields a halo carries: the state h, hu, hv (the lagged
// kernel's rhs of a halo cell is computed again after the exchange).
template <class Real>
struct BoxFields {
  Real* f[3];
};

// pack: fields' box cells into `packed` (field after field, each row-major);
// else the other way.
template <class Real, bool pack>
__global__ void box_copy_kernel(Grid g, CellBox box, BoxFields<Real> fields, Real* __restrict__ packed) {
  const index_t bnx = box.nx();
  const index_t cells = box.cells();
  const index_t n = cells * 3;
  for (index_t k = blockIdx.x * index_t(blockDim.x) + threadIdx.x; k < n; k += index_t(gridDim.x) * blockDim.x) {
    const auto field = static_cast<int>(k / cells);
    const index_t c = k - field * cells;
    const index_t j = c / bnx;
    const index_t at = g.index(box.i0 + (c - j * bnx), box.j0 + j);
    Real* f = fields.f[0];
    f = field == 1 ? fields.f[1] : f;  // selects: no local-memory indexing of the parameter
    f = field == 2 ? fields.f[2] : f;
    if (pack) {
      packed[k] = f[at];
    } else {
      f[at] = packed[k];
    }
  }
}

} // namespace shallows::cudax
