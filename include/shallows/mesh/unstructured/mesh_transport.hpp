// SPDX-License-Identifier: MIT
#pragma once
// What crosses a mesh's edges besides the update itself, as every mesh
// executor (CPU and GPU) computes it from the state a step starts from: the
// edges' mass fluxes that carry the passive scalars, each cell's new
// concentrations, and the water through an open boundary edge for the
// account of the boundary groups.
#include "shallows/bc/side_account.hpp"
#include "shallows/mesh/unstructured/mesh_edges.hpp"
#include "shallows/physics/scalar_transport.hpp"

namespace shallows {

// Edge e's mass flux from its left cell to its right one (m^2/s) with the
// edge's fluctuations f: edge_mass_flux of its cells' normal discharges; a
// boundary edge's its cell's view, hn + to_left.h (as the water account
// takes it), none through a wall.
template <class Real>
SHALLOWS_HD Real mesh_edge_mass_flux(const MeshArrays<Real>& m, const MeshState<Real>& q, mesh_index e,
                                     const EdgeFluctuation<Real>& f) {
  const mesh_index l = m.edge_left[e], r = m.edge_right[e];
  const Real hn_l = q.hu[l] * m.edge_nx[e] + q.hv[l] * m.edge_ny[e];
  if (r >= 0) {
    const Real hn_r = q.hu[r] * m.edge_nx[e] + q.hv[r] * m.edge_ny[e];
    return edge_mass_flux(hn_l, hn_r, f, true);
  }
  return m.boundary[boundary_group(r)].kind == BoundaryKind::wall ? Real(0) : hn_l + f.to_left.h;
}

// Active cell c's new concentration of each of `scalars` passive scalars
// after a step of dt (mesh_transported_concentration), from the edges' mass
// fluxes: hc(s) the scalar's h c by cell, group_c[s groups + g] the
// concentration boundary group g brings of it; store(s, c') takes each.
template <class Real, class ScalarOf, class Store>
SHALLOWS_HD void mesh_cell_concentrations(const MeshArrays<Real>& m, const MeshState<Real>& q, const Real* mass_flux,
                                          mesh_index c, Real dt, int scalars, const ScalarOf& hc,
                                          const Real* group_c, index_t groups, const Store& store) {
  Real out[4];
  mesh_index edge_of[4];
  int n = 0;
  for (int j = 0; j < 4; ++j) {
    const mesh_index e = m.cell_edges[4 * static_cast<index_t>(c) + j];
    if (e < 0) continue;
    const Real moved = dt * (mass_flux[e] * m.edge_length[e]) * m.inv_area[c];
    out[n] = m.edge_left[e] == c ? moved : -moved;
    edge_of[n++] = e;
  }
  for (int s = 0; s < scalars; ++s) {
    const Real* hcs = hc(s);
    const Real mine = concentration(hcs[c], q.h[c]);
    Real beyond[4];
    for (int j = 0; j < n; ++j) {
      const mesh_index e = edge_of[j];
      const mesh_index l = m.edge_left[e], r = m.edge_right[e];
      if (r >= 0) {
        const mesh_index other = l == c ? r : l;
        beyond[j] = concentration(hcs[other], q.h[other]);
      } else {
        const index_t g = boundary_group(r);
        beyond[j] = ghost_concentration(m.boundary[g].kind, mine, group_c[s * groups + g]);
      }
    }
    store(s, mesh_transported_concentration(out, beyond, n, q.h[c], mine));
  }
}

// The water per second into the domain through boundary edge e (m^3/s, out
// negative), from its cell's state: edge_inflow times the edge's length.
template <class Real>
SHALLOWS_HD double mesh_boundary_inflow(const MeshArrays<Real>& m, const MeshState<Real>& q, mesh_index e,
                                        const PhysicsParams<Real>& p) {
  const mesh_index c = m.edge_left[e];
  const EdgeFluctuation<Real> f = evaluate_mesh_edge(m, q, e, mesh_cell_primitive(m, q, c, p), p);
  const double qn = static_cast<double>(q.hu[c]) * static_cast<double>(m.edge_nx[e]) +
                    static_cast<double>(q.hv[c]) * static_cast<double>(m.edge_ny[e]);
  return edge_inflow(qn, f, true) * static_cast<double>(m.edge_length[e]);
}

}  // namespace shallows
