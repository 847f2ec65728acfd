// SPDX-License-Identifier: MIT
#pragma once
// The edges of an unstructured mesh as every executor evaluates them, and
// how a cell sums them (seed 001 eqs. 14-16, seed 000 eq. 8):
//     W_i -= dt / |V_i| * sum_k |Gamma_k| F_k,
//     dt   = cfl / max_i rate_i,  rate_i = sum_k |Gamma_k| s_k / (2 |V_i|),
// with F_k the fluctuation the edge sends to cell i and s_k its largest wave
// speed. On a square cell of side dx the rate is the Cartesian one, so a
// quadrilateral mesh that is a grid reproduces the grid's solution.
//
// An edge is always evaluated in its stored orientation (left cell, right
// cell or boundary, normal out of the left cell), whichever cell asks: a
// cell-based loop (each cell evaluates its edges) and an edge-based loop
// (each edge once) then give the same bits, and each cell sums its edges
// in its slot order, so results do not depend on the executor or thread count.
#include "shallows/bc/boundary.hpp"
#include "shallows/mesh/unstructured/mesh.hpp"
#include "shallows/physics/riemann/roe.hpp"

namespace shallows {

// The state beyond a boundary edge with outward unit normal (nx, ny), from
// the cell inside: boundary_state's, as a primitive. A wall mirrors the
// cell's velocity as it mirrors its discharge.
template <class Real>
SHALLOWS_HD CellPrimitive<Real> boundary_primitive(const CellPrimitive<Real>& q, Real nx, Real ny,
                                                   BoundaryCondition<Real> bc, const PhysicsParams<Real>& p) {
  const UnitNormal<Real> n{nx, ny};
  switch (bc.kind) {
    case BoundaryKind::open:
      return q;
    case BoundaryKind::inflow:
    case BoundaryKind::level:
      return cell_primitive(boundary_state(State<Real>{q.h, q.hu, q.hv}, q.z, n, bc, p), q.z, p);
    case BoundaryKind::wall:
    default: {
      CellPrimitive<Real> g = q;
      n.reflect(g.hu, g.hv);
      n.reflect(g.u, g.v);
      return g;
    }
  }
}

// An interior edge: left and right cells, unit normal from left to right.
template <class Real>
SHALLOWS_HD EdgeFluctuation<Real> mesh_edge(const CellPrimitive<Real>& l, const CellPrimitive<Real>& r, Real nx,
                                            Real ny, const PhysicsParams<Real>& p) {
  return roe_normal(l, r, nx, ny, p);
}

// A boundary edge of cell q (outward normal): only to_left and speed matter.
template <class Real>
SHALLOWS_HD EdgeFluctuation<Real> mesh_boundary_edge(const CellPrimitive<Real>& q, Real nx, Real ny,
                                                     BoundaryCondition<Real> bc, const PhysicsParams<Real>& p) {
  return roe_normal(q, boundary_primitive(q, nx, ny, bc, p), nx, ny, p);
}

// What a cell gathers from its edges, in its slot order.
template <class Real>
struct MeshCellSum {
  State<Real> flux{Real(0), Real(0), Real(0)};  // sum of |Gamma_k| F_k
  Real wave = Real(0);                          // sum of |Gamma_k| s_k

  SHALLOWS_HD void add(State<Real> f, Real speed, Real length) {
    flux.h += length * f.h;
    flux.hu += length * f.hu;
    flux.hv += length * f.hv;
    wave += length * speed;
  }
  // dW/dt of the cell; inv_area = 1 / |V_i|.
  SHALLOWS_HD State<Real> rhs(Real inv_area) const {
    return {-(flux.h * inv_area), -(flux.hu * inv_area), -(flux.hv * inv_area)};
  }
  // The CFL rate of the cell: dt <= cfl / rate.
  SHALLOWS_HD Real rate(Real inv_area) const { return Real(0.5) * (wave * inv_area); }
};

// The mesh as the loops read it, in the run's precision: raw pointers into
// host or device memory.
template <class Real>
struct MeshArrays {
  const mesh_index* cell_edges;  // 4 per cell, -1 where there is no edge
  const mesh_index* edge_left;
  const mesh_index* edge_right;  // a cell, or boundary_code(group)
  const Real* edge_nx;
  const Real* edge_ny;
  const Real* edge_length;
  const Real* inv_area;  // 1 / |V_i|
  const Real* z;
  const BoundaryCondition<Real>* boundary;  // by boundary group
};

template <class Real>
struct MeshState {
  const Real* h;
  const Real* hu;
  const Real* hv;
};

template <class Real>
SHALLOWS_HD CellPrimitive<Real> mesh_cell_primitive(const MeshArrays<Real>& m, const MeshState<Real>& q, mesh_index c,
                                                    const PhysicsParams<Real>& p) {
  return cell_primitive(State<Real>{q.h[c], q.hu[c], q.hv[c]}, m.z[c], p);
}

// Where the loops get a cell's primitive: computed from the state when asked
// (this), or read from arrays a pass filled beforehand with the same
// cell_primitive (the CPU executor): the values, and so the results, are the same.
template <class Real>
struct ComputedPrimitives {
  MeshArrays<Real> m;
  MeshState<Real> q;
  PhysicsParams<Real> p;
  SHALLOWS_HD CellPrimitive<Real> operator()(mesh_index c) const { return mesh_cell_primitive(m, q, c, p); }
};

// Edge e in its stored orientation, given the primitive of its left cell.
template <class Real, class Primitives>
SHALLOWS_HD EdgeFluctuation<Real> evaluate_mesh_edge(const MeshArrays<Real>& m, const Primitives& primitive,
                                                     mesh_index e, const CellPrimitive<Real>& left,
                                                     const PhysicsParams<Real>& p) {
  const mesh_index r = m.edge_right[e];
  if (r < 0) return mesh_boundary_edge(left, m.edge_nx[e], m.edge_ny[e], m.boundary[boundary_group(r)], p);
  return mesh_edge(left, primitive(r), m.edge_nx[e], m.edge_ny[e], p);
}

template <class Real>
SHALLOWS_HD EdgeFluctuation<Real> evaluate_mesh_edge(const MeshArrays<Real>& m, const MeshState<Real>& q, mesh_index e,
                                                     const CellPrimitive<Real>& left, const PhysicsParams<Real>& p) {
  return evaluate_mesh_edge(m, ComputedPrimitives<Real>{m, q, p}, e, left, p);
}

// Cell-based loop body: cell c evaluates its edges in slot order.
template <class Real, class Primitives>
SHALLOWS_HD MeshCellSum<Real> mesh_cell_sum(const MeshArrays<Real>& m, const Primitives& primitive, mesh_index c,
                                            const PhysicsParams<Real>& p) {
  MeshCellSum<Real> s;
  const CellPrimitive<Real> me = primitive(c);
  for (int k = 0; k < 4; ++k) {
    const mesh_index e = m.cell_edges[4 * static_cast<index_t>(c) + k];
    if (e < 0) continue;
    const mesh_index l = m.edge_left[e];
    if (l == c) {
      const EdgeFluctuation<Real> f = evaluate_mesh_edge(m, primitive, e, me, p);
      s.add(f.to_left, f.speed, m.edge_length[e]);
    } else {
      const EdgeFluctuation<Real> f = mesh_edge(primitive(l), me, m.edge_nx[e], m.edge_ny[e], p);
      s.add(f.to_right, f.speed, m.edge_length[e]);
    }
  }
  return s;
}

template <class Real>
SHALLOWS_HD MeshCellSum<Real> mesh_cell_sum(const MeshArrays<Real>& m, const MeshState<Real>& q, mesh_index c,
                                            const PhysicsParams<Real>& p) {
  return mesh_cell_sum(m, ComputedPrimitives<Real>{m, q, p}, c, p);
}

} // namespace shallows
