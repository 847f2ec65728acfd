// SPDX-License-Identifier: MIT
// Forcing of one cell over one step (seed 004): Manning friction from a map,
// rain, infiltration (Green-Ampt or initial + constant loss), and the volume
// sources (points, inflow hydrographs along a boundary segment). Every
// executor applies it after the scheme's full step, cell by cell, in the order
// of apply_cell_forcing, then the sources; the arithmetic is in double whatever
// the run's precision, so that the account of each volume is exact to round-off.
#pragma once
#include "shallows/core/math.hpp"
#include "shallows/core/state.hpp"
#include "shallows/physics/friction.hpp"
#include "shallows/physics/params.hpp"

namespace shallows {

// A time series: values v at increasing times t, linear in between and
// constant beyond the ends (the case reader refuses a series that the run
// outlasts). One knot is a constant. Views of host or device arrays.
struct SeriesView {
  const double* t = nullptr;
  const double* v = nullptr;
  int n = 0;
};

// The index k of the last knot with t[k] <= x (0 when x < t[0]).
SHALLOWS_HD int series_knot(SeriesView s, double x) {
  int lo = 0, hi = s.n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (s.t[mid] <= x) lo = mid; else hi = mid - 1;
  }
  return lo;
}

SHALLOWS_HD double series_value(SeriesView s, double x) {
  if (s.n <= 0) return 0;
  if (s.n == 1 || x <= s.t[0]) return s.v[0];
  if (x >= s.t[s.n - 1]) return s.v[s.n - 1];
  const int k = series_knot(s, x);
  const double w = (x - s.t[k]) / (s.t[k + 1] - s.t[k]);
  return s.v[k] + w * (s.v[k + 1] - s.v[k]);
}

// The integral of the series over [a, b] (a <= b), exact for the piecewise
// linear function: a step takes what the series delivers over it, so a run's
// total is the series' integral over the run whatever the steps were.
SHALLOWS_HD double series_integral(SeriesView s, double a, double b) {
  if (s.n <= 0 || !(b > a)) return 0;
  if (s.n == 1) return s.v[0] * (b - a);
  double sum = 0;
  // Before the first knot and after the last: the end values.
  if (a < s.t[0]) {
    const double e = math::min(b, s.t[0]);
    sum += s.v[0] * (e - a);
    a = e;
  }
  if (b > s.t[s.n - 1]) {
    const double e = math::max(a, s.t[s.n - 1]);
    sum += s.v[s.n - 1] * (b - e);
    b = e;
  }
  if (!(b > a)) return sum;
  for (int k = series_knot(s, a); k < s.n - 1 && s.t[k] < b; ++k) {
    const double lo = math::max(a, s.t[k]);
    const double hi = math::min(b, s.t[k + 1]);
    if (!(hi > lo)) continue;
    // Trapezoid of the linear piece between lo and hi.
    const double slope = (s.v[k + 1] - s.v[k]) / (s.t[k + 1] - s.t[k]);
    const double vlo = s.v[k] + slope * (lo - s.t[k]);
    const double vhi = s.v[k] + slope * (hi - s.t[k]);
    sum += 0.5 * (vlo + vhi) * (hi - lo);
  }
  return sum;
}

enum class InfiltrationModel : int {
  none,
  green_ampt,        // parameters: saturated conductivity Ks (m/s), wetting-front suction psi (m), moisture deficit
  initial_constant,  // parameters: initial loss (m), constant loss rate (m/s)
};

// Green-Ampt under ponding over a step of dt: the cumulative infiltration F1
// that solves F1 - F0 - S ln((F1 + S) / (F0 + S)) = Ks dt, S = psi * deficit
// (the implicit solution of dF/dt = Ks (1 + S / F), so that the steps compose
// to the analytic F(t) whatever dt). Newton on the increment d = F1 - F0,
// phi(d) = d - S log1p(d / (F0 + S)) - Ks dt, from an upper bound, where the
// convex phi makes the iterates fall monotonically onto the root. Newton's
// error after a step s is about K s^2, K = phi'' / (2 phi') =
// S / (2 (F0 + d) (F0 + S + d)): it stops once that is below 2^-54 d, so
// that a short step (d << F0, the common case) takes one iteration, not
// the three or four that waiting for a step of zero takes. Two divisions
// per iteration (log1p_ratio, the step): the instructions, not the bytes,
// are what the soil costs a GPU step.
SHALLOWS_HD double green_ampt_capacity(double F0, double dt, double ks, double S) {
  if (!(ks > 0) || !(dt > 0)) return F0;
  if (!(S > 0)) return F0 + ks * dt;
  // Upper bounds of d: the rate Ks (1 + S / F) falls as F grows, and from F = 0 F(t) <= Ks t + sqrt(2 S Ks t).
  // The first is the smaller where Ks dt S <= 2 F0^2 (a soil that has taken some water): no square root there.
  const double target = ks * dt;
  double d;
  if (F0 > 0 && target * S <= 2 * F0 * F0) {
    d = target * (1 + S / F0);
  } else {
    d = target + math::sqrt(2 * S * target);
    if (F0 > 0) d = math::min(d, target * (1 + S / F0));
  }
  const double base = F0 + S;
  for (int it = 0; it < 60; ++it) {
    const double phi = d - S * math::log1p_ratio(d, base) - target;
    const double step = phi * (base + d) / (F0 + d);  // phi / phi'
    const double next = d - step;
    if (!(next < d) || !(next > 0)) break;  // converged to round-off
    d = next;
    if (step * step * S <= 0x1p-53 * d * (F0 + d) * (base + d)) break;  // K step^2 <= 2^-54 d
  }
  return F0 + d;
}

// Per-cell inputs of the forcing over one step, already evaluated for the
// step (the rain depth from the series integral, the parameters of the cell).
struct CellForcing {
  double rain = 0;       // rain depth over the step (m)
  double manning = -1;   // the cell's Manning coefficient; < 0: none from a map (the kernel applied physics.n_manning)
  InfiltrationModel model = InfiltrationModel::none;
  double p0 = 0, p1 = 0, p2 = 0;  // the model's parameters (see InfiltrationModel)
};

// What the forcing of one cell moved over a step, as depths (m).
struct ForcingDepths {
  double rain = 0;
  double infiltration = 0;
};

// A cell's discharge after water left it at the cell's velocity (the soil,
// a sink), its depth going from `before` to `after`: the discharge shrinks
// with the depth, so the velocity stays. Were it kept, a cell drained to a
// thin layer would hold its discharge at a speed without bound, and the
// time step would collapse. Water brought (rain, a source) arrives at rest.
template <class Real>
SHALLOWS_HD Real taken_discharge(Real hu, double after, double before) {
  return static_cast<Real>(static_cast<double>(hu) * (after / before));
}

// A cell's discharge after a source moved depth d into it (h before, hn
// after): none once the cell is dry; a sink's water (d < 0) leaves with its
// share; a source's arrives at rest.
template <class Real>
SHALLOWS_HD void sourced_discharge(double h, double d, Real hn, Real h_dry, Real& hu, Real& hv) {
  if (hn <= h_dry) {
    hu = hv = Real(0);
  } else if (d < 0) {
    hu = taken_discharge(hu, h + d, h);
    hv = taken_discharge(hv, h + d, h);
  }
}

// What Green-Ampt soil with the cell's parameters can take over a step of dt
// from a cumulative infiltration F (m), solved in the cell's forcing
// (apply_cell_forcing's default).
struct SolveGreenAmpt {
  SHALLOWS_HD double operator()(const CellForcing& f, double F, double dt) const {
    return green_ampt_capacity(F, dt, f.p0, f.p1 * f.p2) - F;
  }
};

// One cell's forcing over a step of dt, after the scheme's update: friction
// from the map (as advance_cell applies a constant one), then rain, then
// infiltration of what is there (never more), which takes its share of the
// discharge (taken_discharge). `infiltrated`: the cell's cumulative
// infiltration F (m), updated. A cell left at or below h_dry loses its
// velocity, as in explicit_update. green_ampt(f, F, dt): the cell's
// capacity (SolveGreenAmpt), asked only with Green-Ampt soil and where the
// water exceeds Ks dt (a GPU kernel instance for runs without that soil
// passes one without the solve).
template <class Real, class GreenAmpt>
SHALLOWS_HD State<Real> apply_cell_forcing(State<Real> q, const CellForcing& f, double dt,
                                           const PhysicsParams<Real>& p, double& infiltrated, ForcingDepths& moved,
                                           const GreenAmpt& green_ampt) {
  if (f.manning >= 0) {
    PhysicsParams<Real> pm = p;
    pm.n_manning = static_cast<Real>(f.manning);
    q = apply_manning(q, static_cast<Real>(dt), pm);
  }
  double h = static_cast<double>(q.h) + f.rain;
  moved.rain = f.rain;
  double taken = 0;
  if (f.model == InfiltrationModel::green_ampt) {
    // The soil takes at least Ks dt over the step (its rate never falls below Ks): no more water than that
    // all soaks in, without the implicit solve (a dry cell under rain lighter than Ks, every step).
    if (h <= f.p0 * dt) {
      taken = h;
    } else {
      taken = math::min(green_ampt(f, infiltrated, dt), h);
    }
    infiltrated += taken;
  } else if (f.model == InfiltrationModel::initial_constant) {
    // What is left of the initial loss, then the constant rate: under ponding F(t) = loss + rate t.
    taken = math::min(math::max(f.p0 - infiltrated, 0.0) + f.p1 * dt, h);
    infiltrated += taken;
  }
  const double before = h;
  h -= taken;
  moved.infiltration = taken;
  const Real hr = static_cast<Real>(h);
  if (hr <= p.h_dry) return {hr, Real(0), Real(0)};
  if (taken > 0) return {hr, taken_discharge(q.hu, h, before), taken_discharge(q.hv, h, before)};
  return {hr, q.hu, q.hv};
}

template <class Real>
SHALLOWS_HD State<Real> apply_cell_forcing(State<Real> q, const CellForcing& f, double dt,
                                           const PhysicsParams<Real>& p, double& infiltrated, ForcingDepths& moved) {
  return apply_cell_forcing(q, f, dt, p, infiltrated, moved, SolveGreenAmpt{});
}

// A volume source (a point, or the cells along an inflow segment): its
// volume over a step (series_integral of the discharge, m^3; < 0 takes water)
// is shared between its cells in proportion to w = h^(5/3), a uniform-friction
// flow's share of the discharge, and evenly while all are dry. The depth a
// cell gets; a cell never gives more than it holds.
SHALLOWS_HD double source_weight(double h) { return h > 0 ? h * math::cbrt(h * h) : 0.0; }

SHALLOWS_HD double source_depth(double volume, double w, double sum_w, int cells, double area, double h) {
  const double share = sum_w > 0 ? w / sum_w : 1.0 / cells;
  const double d = volume * share / area;
  return d >= 0 ? d : -math::min(-d, math::max(h, 0.0));
}

}  // namespace shallows
