// SPDX-License-Identifier: MIT
#pragma once
// Boundary conditions of a Cartesian grid, imposed through ghost cells.
// A ghost cell at distance k outside a side mirrors the interior cell at
// distance k inside, with the bed copied from it (no step at the boundary).
#include "shallows/core/config.hpp"
#include "shallows/core/math.hpp"
#include "shallows/core/state.hpp"
#include "shallows/physics/forcing.hpp"
#include "shallows/physics/params.hpp"

namespace shallows {

enum class Side : int { west = 0, east = 1, south = 2, north = 3 };

enum class BoundaryKind : int {
  wall,    // reflective: normal discharge mirrored
  open,    // transmissive: state copied
  inflow,  // given discharge per unit width into the domain, depth from inside (inflow_depth)
  level,   // given free-surface elevation, velocity from inside
};

// One side's condition. value: discharge (m^2/s) for inflow, eta (m) for level.
template <class Real>
struct BoundaryCondition {
  BoundaryKind kind = BoundaryKind::wall;
  Real value = Real(0);
};

// A condition on a stretch of a side: the boundary cells begin <= s < end
// along it (s = j on west and east, i on south and north) take bc instead
// of the side's.
template <class Real>
struct SegmentCondition {
  Side side = Side::west;
  index_t begin = 0, end = 0;
  BoundaryCondition<Real> bc{};
};

// The segment that holds boundary cell s of a side (segments do not
// overlap), or -1.
template <class Real>
SHALLOWS_HD int segment_at(Side side, index_t s, const SegmentCondition<Real>* segments, int count) {
  for (int k = 0; k < count; ++k) {
    const SegmentCondition<Real>& g = segments[k];
    if (g.side == side && s >= g.begin && s < g.end) return k;
  }
  return -1;
}

// The condition of the ghost cell beyond boundary cell s of a side: its
// segment's, else the side's.
template <class Real>
SHALLOWS_HD BoundaryCondition<Real> condition_at(Side side, index_t s, BoundaryCondition<Real> side_bc,
                                                 const SegmentCondition<Real>* segments, int count) {
  const int k = segment_at(side, s, segments, count);
  return k >= 0 ? segments[k].bc : side_bc;
}

// A condition at time t: the value of its time series s there where it
// follows one (s.n > 0), else its constant value.
template <class Real>
SHALLOWS_HD BoundaryCondition<Real> condition_at_time(BoundaryCondition<Real> bc, SeriesView s, double t) {
  if (s.n > 0) bc.value = static_cast<Real>(series_value(s, t));
  return bc;
}

// The depth an inflow side's ghost gets beside a cell of depth h: a wet
// cell's, but no less than the critical depth (q^2 / g)^(1/3) of the
// discharge q per unit width, so that the water comes in at no more than
// the critical speed (a thin layer inside would otherwise take it at a
// speed q / h without bound, and the time step with it). A dry cell's: no
// water comes in (docs/case-file.md).
template <class Real>
SHALLOWS_HD Real inflow_depth(Real h, Real q, const PhysicsParams<Real>& p) {
  return h > p.h_dry ? math::max(h, math::cbrt(q * q / p.g)) : h;
}

// The outward unit normal of a grid side, (+-1, 0) or (0, +-1), kept as its
// axis and sign: its products are exact and its zero component stays +0.
template <class Real>
struct AxisNormal {
  bool x;        // along x (west, east), else along y
  Real outward;  // +1 where it points along +x/+y, else -1

  SHALLOWS_HD explicit AxisNormal(Side side)
      : x(side == Side::west || side == Side::east),
        outward((side == Side::east || side == Side::north) ? Real(1) : Real(-1)) {}
  // The vector (a, b) with its normal component reversed.
  SHALLOWS_HD void reflect(Real& a, Real& b) const {
    if (x) a = -a;
    else b = -b;
  }
  // (a, b) = s times the inward normal.
  SHALLOWS_HD void inward(Real s, Real& a, Real& b) const {
    const Real n = -outward * s;
    a = x ? n : Real(0);
    b = x ? Real(0) : n;
  }
};

// Any outward unit normal (nx, ny): a mesh's boundary edge.
template <class Real>
struct UnitNormal {
  Real nx, ny;

  SHALLOWS_HD void reflect(Real& a, Real& b) const {
    const Real two(2);
    const Real an = a * nx + b * ny;
    a = a - two * an * nx;
    b = b - two * an * ny;
  }
  SHALLOWS_HD void inward(Real s, Real& a, Real& b) const {
    a = -s * nx;
    b = -s * ny;
  }
};

// The state beyond a boundary with outward normal n (AxisNormal on a grid,
// UnitNormal on a mesh), from the cell inside (state q, bed z; the bed is
// copied: no step at the boundary), for every condition:
//  open:   copied;  wall: normal discharge mirrored;
//  inflow: bc.value = discharge per unit width into the domain, along the
//          normal, depth from inside (inflow_depth);
//  level:  bc.value = eta, velocity from inside (discharge scaled with the depth).
template <class Real, class Normal>
SHALLOWS_HD State<Real> boundary_state(State<Real> q, Real z, const Normal& n, BoundaryCondition<Real> bc,
                                       const PhysicsParams<Real>& p) {
  switch (bc.kind) {
    case BoundaryKind::open:
      return q;
    case BoundaryKind::inflow: {
      State<Real> g{inflow_depth(q.h, bc.value, p), Real(0), Real(0)};
      n.inward(bc.value, g.hu, g.hv);
      return g;
    }
    case BoundaryKind::level: {
      const Real h = math::max(bc.value - z, Real(0));
      if (q.h <= Real(0)) return {h, Real(0), Real(0)};
      const Real scale = h / q.h;
      return {h, q.hu * scale, q.hv * scale};
    }
    case BoundaryKind::wall:
    default: {
      State<Real> g = q;
      n.reflect(g.hu, g.hv);
      return g;
    }
  }
}

// A grid's ghost state beyond a side, from the mirrored interior cell.
template <class Real>
SHALLOWS_HD State<Real> ghost_state(State<Real> q, Real z, Side side, BoundaryCondition<Real> bc,
                                    const PhysicsParams<Real>& p) {
  return boundary_state(q, z, AxisNormal<Real>(side), bc, p);
}

} // namespace shallows
