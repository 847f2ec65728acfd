// SPDX-License-Identifier: MIT
#pragma once
// Hydraulic structures: pumps and gates, which deliver a set discharge, and
// culverts, whose discharge follows the head across them, join two cells;
// weirs along a line exchange the weir law's discharge across its crossings
// (pairs of cells across the line), and breaches lower a weir's crest over a
// growing width. Each step, after the update and the forcing, the
// structures' pass (apply_structures): the breaches advance, every weir
// crossing's flow is taken at once from the levels the pass starts from (as
// the scheme's fluxes are: each crossing on its own thread on the GPU), each
// cell on a weir takes the sum of its crossings' flows, then the pumps, gates
// and culverts act one after another in file order. Arithmetic in double
// whatever the run's precision, as the forcing's, so that the volume an end
// loses is the volume the other gains to round-off. Plain views of host or
// device arrays, every sum in a fixed order and the laws' powers and angles
// math.hpp's IEEE-only ones, so that the GPU moves the CPU's bits.
// docs/structures.md holds the formulations and the rules.
#include <cstddef>

#include "shallows/core/math.hpp"
#include "shallows/physics/forcing.hpp"

namespace shallows {

// wall: a thin wall, which never exchanges (its crossings are walls for the scheme).
enum class StructureKind : int { pump, gate, culvert, weir, wall, breach };
// How a breach's width grows: a series of (time since it started, width), or
// Verheij and van der Knaap (2002).
enum class BreachGrowth : int { series, verheij };
enum class CulvertShape : int { circular, box };

// A structure's parameters (the case's [[structure]] table, in SI units).
struct StructureSpec {
  StructureKind kind = StructureKind::pump;
  // Pumps and gates: the discharge from inlet to outlet (m^3/s, >= 0), and
  // where `controlled`, the inlet levels (m) that start (eta >= on) and stop
  // (eta < off, off <= on) it.
  SeriesView discharge;
  bool controlled = false;
  double on = 0, off = 0;
  // Culverts: the barrel (a circle of diameter `height`, or a box `width` x
  // `height`), its length, the invert levels at the inlet and the outlet, its
  // Manning coefficient, the entrance and exit loss coefficients, and whether
  // a flap lets water through from the inlet to the outlet only.
  CulvertShape shape = CulvertShape::circular;
  double width = 0, height = 0, length = 0;
  double invert_in = 0, invert_out = 0;
  double n_manning = 0, entrance_loss = 0.5, exit_loss = 1.0;
  bool one_way = false;
  // Weirs: C of Q = C L H^1.5 (m^0.5/s), and its crossings (WeirCrossing),
  // crossings[first_crossing, first_crossing + crossings).
  double coefficient = 0;
  int first_crossing = 0, crossings = 0;
  // Breaches: the structure index of the weir it opens, its centre's
  // distance along that weir's line (m) and the crossing whose levels it
  // senses (the one nearest `at`, an index into crossings), its bottom level
  // (m); it starts at `start` (s), or where `triggered`, once the higher level
  // at the sensing crossing has stood at or above trigger_level for
  // trigger_duration (s). Its width follows `breach_width` (a series of the
  // time since it started) or Verheij-van der Knaap from width_initial up to
  // width_final with f1, f2 and the critical velocity u_c (m/s).
  int weir = -1, sensor = 0;
  double at = 0, bottom = 0, start = 0;
  bool triggered = false;
  double trigger_level = 0, trigger_duration = 0;
  BreachGrowth growth = BreachGrowth::series;
  SeriesView breach_width;
  double width_initial = 0, width_final = 0, f1 = 1.3, f2 = 0.04, critical_velocity = 0.2;
  // Pumps, gates and culverts: the round of the pass's last part this one
  // acts in (structure_table): the round after that of the last one before
  // it in file order that shares a cell with it, so that the structures of a
  // round touch cells of their own and may act at once, each on the state
  // the earlier ones left, as in file order.
  int end_round = 0;
};

// A pump's or a gate's state after seeing the inlet level eta: running from
// the step where eta >= on until the step where eta < off (hysteresis); an
// uncontrolled one always runs.
SHALLOWS_HD bool pump_running(const StructureSpec& s, double eta_in, bool was_running) {
  if (!s.controlled) return true;
  return was_running ? !(eta_in < s.off) : eta_in >= s.on;
}

// A pump's or a gate's mean discharge (m^3/s) over [t, t + dt]: the series'
// integral over the step divided by dt while it runs, so that a run's volume
// is the series' integral over the time it ran, whatever the steps.
SHALLOWS_HD double pump_discharge(const StructureSpec& s, double t, double dt, bool running) {
  if (!running || !(dt > 0)) return 0;
  return series_integral(s.discharge, t, t + dt) / dt;
}

// The flow area (m^2) and hydraulic radius (m) of a culvert's barrel flowing
// at depth y (0 < y <= height): a circular segment, or a box open on top
// below its height and closed at it.
struct BarrelFlow {
  double area = 0, radius = 0;
};

SHALLOWS_HD BarrelFlow barrel_flow(const StructureSpec& s, double y) {
  const double d = s.height;
  y = math::min(math::max(y, 0.0), d);
  if (!(y > 0)) return {};
  if (s.shape == CulvertShape::box) {
    const double area = s.width * y;
    const double wetted = y < d ? s.width + 2 * y : 2 * (s.width + d);
    return {area, area / wetted};
  }
  // theta: the angle the water surface's chord subtends at the centre;
  // sin(theta) = 2 sin(theta / 2) cos(theta / 2) with cos(theta / 2) = 1 - 2 q,
  // sin(theta / 2) = 2 sqrt(q (1 - q)): no sine to evaluate.
  const double q = y / d, c = 1 - 2 * q;
  const double theta = 2 * math::acos(math::max(-1.0, c));
  const double area = d * d / 8 * (theta - 4 * c * math::sqrt(q * (1 - q)));
  return {area, area / (d * theta / 2)};
}

// Inlet control (Boyd 1987, "Head-discharge relations for culverts", as ANUGA's
// Boyd box and pipe operators use it): the smaller of the unsubmerged (weir)
// and submerged (orifice) discharges at the upstream head hw above the inlet
// invert (m). Box of width B, height D: 0.544 sqrt(g) B hw^1.5 and
// 0.702 sqrt(g) B D^0.89 hw^0.61; pipe of diameter D: 0.421 sqrt(g) D^0.87
// hw^1.63 and 0.530 sqrt(g) D^1.87 hw^0.63.
SHALLOWS_HD double culvert_inlet_control(const StructureSpec& s, double hw, double g) {
  if (!(hw > 0)) return 0;
  const double sg = math::sqrt(g), d = s.height;
  if (s.shape == CulvertShape::box)
    return math::min(0.544 * sg * s.width * hw * math::sqrt(hw),
                     0.702 * sg * s.width * math::pow(d, 0.89) * math::pow(hw, 0.61));
  return math::min(0.421 * sg * math::pow(d, 0.87) * math::pow(hw, 1.63),
                   0.530 * sg * math::pow(d, 1.87) * math::pow(hw, 0.63));
}

// Outlet control: the energy equation along the barrel (HDS-5, FHWA 2012,
// eq. 3.2 with the friction loss of eq. 3.4 in SI), the head difference dh
// (m) spent on the entrance and exit losses and the friction of a barrel of
// length L flowing at depth y:
//   Q = A sqrt(2 g dh / (k_en + k_ex + 2 g n^2 L / R^(4/3))),
// with the full barrel's A and R where it flows full (y = height).
SHALLOWS_HD double culvert_outlet_control(const StructureSpec& s, double y, double dh, double g) {
  if (!(dh > 0)) return 0;
  const BarrelFlow f = barrel_flow(s, y);
  if (!(f.area > 0)) return 0;
  const double friction = 2 * g * s.n_manning * s.n_manning * s.length / (f.radius * math::cbrt(f.radius));
  const double losses = s.entrance_loss + s.exit_loss + friction;
  if (!(losses > 0)) return 0;
  return f.area * math::sqrt(2 * g * dh / losses);
}

// A culvert's discharge (m^3/s; > 0 from the inlet to the outlet) at the
// levels eta_in, eta_out of the cells at its ends: water flows from the
// higher level to the lower, at the smaller of the inlet-control and
// outlet-control discharges. The upstream head hw is the upstream level above
// its invert; the barrel flows at depth min(hw, height), full where hw and the
// downstream level above its invert reach the height; the head spent in it is
// the upstream level less the downstream one (the downstream invert where the
// water is below it: a free outfall). None where the upstream level is at or
// below its invert, and none from the outlet to the inlet through a flap.
SHALLOWS_HD double culvert_discharge(const StructureSpec& s, double eta_in, double eta_out, double g) {
  const bool forward = eta_in >= eta_out;
  if (!forward && s.one_way) return 0;
  const double up = forward ? eta_in : eta_out, down = forward ? eta_out : eta_in;
  const double invert_up = forward ? s.invert_in : s.invert_out, invert_down = forward ? s.invert_out : s.invert_in;
  const double hw = up - invert_up;
  if (!(hw > 0)) return 0;
  const double tw = down - invert_down;
  const double y = hw >= s.height && tw >= s.height ? s.height : math::min(hw, s.height);
  const double dh = up - math::max(down, invert_down);
  const double q = math::min(culvert_inlet_control(s, hw, g), culvert_outlet_control(s, y, dh, g));
  return forward ? q : -q;
}

// The discharge of structure s (m^3/s, > 0 from the inlet to the outlet) over
// the step [t, t + dt] at the levels of its end cells (eta = h + z), before the
// volume limits of structure_volume; `running`: a pump's or gate's state for
// the step (pump_running).
SHALLOWS_HD double structure_discharge(const StructureSpec& s, double eta_in, double eta_out, double t, double dt,
                                       double g, bool running) {
  if (s.kind == StructureKind::culvert) return culvert_discharge(s, eta_in, eta_out, g);
  return pump_discharge(s, t, dt, running);
}

// The volume |q| dt (m^3, > 0 from the inlet to the outlet), never more than
// the giving cell holds, nor than brings its level below floor (-inf: none),
// nor, where level, than brings the two cells to one level.
SHALLOWS_HD double limited_volume(double q, double dt, double h_in, double area_in, double eta_in, double h_out,
                                  double area_out, double eta_out, bool level, double floor) {
  if (q == 0) return 0;
  const bool forward = q > 0;
  const double give_area = forward ? area_in : area_out, give_eta = forward ? eta_in : eta_out;
  double v = math::abs(q) * dt;
  v = math::min(v, math::max(forward ? h_in * area_in : h_out * area_out, 0.0));
  v = math::min(v, math::max(give_eta - floor, 0.0) * give_area);
  if (level) {
    const double take_eta = forward ? eta_out : eta_in;
    v = math::min(v, math::max(give_eta - take_eta, 0.0) / (1 / area_in + 1 / area_out));
  }
  return forward ? v : -v;
}

// The volume (m^3, > 0 from the inlet to the outlet) a structure moves over a
// step of dt at discharge q: never more than the giving cell holds (its
// depth times its area); a culvert's, whose flow follows the levels, never
// more than brings the two cells to one level (equalising: (eta_give -
// eta_take) / (1 / area_give + 1 / area_take)), so that it cannot overshoot
// and swing back however long the step. A pump pushes uphill: only what the
// inlet holds limits it.
SHALLOWS_HD double structure_volume(const StructureSpec& s, double q, double dt, double h_in, double area_in,
                                    double eta_in, double h_out, double area_out, double eta_out) {
  return limited_volume(q, dt, h_in, area_in, eta_in, h_out, area_out, eta_out, s.kind == StructureKind::culvert,
                        -INFINITY);
}

// One end of a structure: the state index of the cell holding it, the cell's
// area (m^2) and bed (m).
struct StructureEnd {
  index_t state = 0;
  double area = 0;
  double z = 0;
};

// A pair of cells across a weir's or a wall's line, whose shared face or
// edge the line crosses: the cell on the line's left (walking from its first
// point) and the one on its right, the face's length (m), the crest there
// (m), the crossing's distance along the line (m) and its structure. An
// end's area is the cell's share for this crossing: its area over the
// number of weir crossings the cell has, so that the flows of all of them
// together never take more than the cell holds.
struct WeirCrossing {
  StructureEnd left, right;
  double length = 0, crest = 0, s = 0;
  int structure = 0;
};

// A cell on a weir's line: its end (its whole area) and its crossings,
// entries [first, first + count) of the table's weir entries, each 2 c for
// crossing c with the cell on its left, 2 c + 1 on its right, in crossing
// order.
struct WeirCell {
  StructureEnd end;
  int first = 0, count = 0;
};

// The free weir law Q = C L H^1.5 at the head H above the crest of the
// upstream level, with the Villemonte (1947) correction where the downstream
// level stands above the crest too: Q (1 - (H_down / H_up)^1.5)^0.385. Signed:
// > 0 from the side at eta_a to the side at eta_b; none where neither level
// is above the crest.
SHALLOWS_HD double weir_discharge(double c, double length, double crest, double eta_a, double eta_b) {
  const bool forward = eta_a >= eta_b;
  const double up = (forward ? eta_a : eta_b) - crest, down = (forward ? eta_b : eta_a) - crest;
  if (!(up > 0)) return 0;
  double q = c * length * up * math::sqrt(up);
  if (down > 0) {
    const double r = down / up;
    q *= math::pow(1 - r * math::sqrt(r), 0.385);
  }
  return forward ? q : -q;
}

// The volume (m^3, > 0 from a to b) a weir crossing moves over dt at
// discharge q: never more than the giving cell holds, than brings its level
// down to the crest, nor than brings the two cells to one level.
SHALLOWS_HD double weir_volume(double q, double dt, double crest, const StructureEnd& a, double h_a,
                               const StructureEnd& b, double h_b) {
  return limited_volume(q, dt, h_a, a.area, h_a + a.z, h_b, b.area, h_b + b.z, true, crest);
}

// The width a Verheij and van der Knaap (2002) breach gains over [tau, tau +
// dt], tau the time since it started (s), at the head dh across it (m) held
// over the step: the increment of
//   B(tau) = f1 sqrt(g) dh^1.5 / u_c log10(1 + f2 g / u_c tau / 3600),
// the fit's time being in hours.
SHALLOWS_HD double verheij_growth(const StructureSpec& s, double dh, double tau, double dt, double g) {
  if (!(dh > 0) || !(dt > 0)) return 0;
  const double uc = s.critical_velocity, a = s.f2 * g / uc / 3600;
  const double scale = s.f1 * math::sqrt(g) * dh * math::sqrt(dh) / uc;
  return scale * (math::log1p(a * (tau + dt)) - math::log1p(a * tau)) / 2.302585092994046;  // ln 10
}

// What a structure carries from step to step, in double so that checkpoints
// keep it: the discharge of its last step (m^3/s, the volume it moved over
// the step's dt), the volume moved since the start of the run (m^3, inlet to
// outlet positive; a weir's from its line's left to its right) and a pump's
// state (1 running, 0 stopped; a breach's: 1 started). A breach's width (m),
// the time its trigger level has stood (s) and the time it started (s).
struct StructureTally {
  double discharge = 0;
  double volume = 0;
  double running = 0;
  double width = 0;
  double timer = 0;
  double since = 0;
};

// The values of a StructureTally in ForcingState::structures and checkpoints.
inline constexpr std::size_t kTallyValues = 6;

// The state arrays the structures move water between (by state index): the
// depth and discharges, and each passive scalar's h c (hc[m], m < scalars).
template <class Real>
struct StructureCells {
  Real* h = nullptr;
  Real* hu = nullptr;
  Real* hv = nullptr;
  Real* const* hc = nullptr;
  int scalars = 0;
  Real h_dry = 0;
};

// Moves the volume v (m^3, > 0 from a to b) between the cells of a and b at
// depths h_a, h_b: taken from the giving cell (its discharge and scalars
// leaving with their share) and given to the other at rest
// (sourced_discharge), with the scalars' mass at the giver's concentration.
template <class Real>
SHALLOWS_HD void move_volume(const StructureCells<Real>& a, const StructureEnd& end_a, double h_a,
                             const StructureEnd& end_b, double h_b, double v) {
  const StructureEnd give = v > 0 ? end_a : end_b, take = v > 0 ? end_b : end_a;
  const double moved = math::abs(v);
  const double h_give = v > 0 ? h_a : h_b, h_take = v > 0 ? h_b : h_a;
  // The giver's last water, exactly: its depth less v / area may round to a film.
  const double d_give = moved >= h_give * give.area ? -h_give : -moved / give.area;
  const double d_take = moved / take.area;
  for (int m = 0; m < a.scalars; ++m) {
    Real* hc = a.hc[m];
    const double c = h_give > 0 ? static_cast<double>(hc[give.state]) / h_give : 0.0;
    hc[give.state] = static_cast<Real>(static_cast<double>(hc[give.state]) + c * d_give);
    hc[take.state] = static_cast<Real>(static_cast<double>(hc[take.state]) + c * d_take);
  }
  const Real hn_give = static_cast<Real>(h_give + d_give), hn_take = static_cast<Real>(h_take + d_take);
  a.h[give.state] = hn_give;
  a.h[take.state] = hn_take;
  sourced_discharge(h_give, d_give, hn_give, a.h_dry, a.hu[give.state], a.hv[give.state]);
  sourced_discharge(h_take, d_take, hn_take, a.h_dry, a.hu[take.state], a.hv[take.state]);
}

// A breach's state over the step [t, t + dt] at the levels of its sensing
// crossing, before the weirs' pass: open from `start` (the step holding it
// open over the part after it), or from the step whose start completes the
// trigger's duration at or above its level (the timer counting the steps
// that began there, reset by one below it); then its width at the end of the
// step, from the series at the time since it opened, or grown by
// Verheij-van der Knaap at the head across it (each side's level floored at
// the bottom) up to its final width. The bottom is reached at once.
SHALLOWS_HD void advance_breach(const StructureSpec& s, StructureTally& k, double eta_l, double eta_r, double t,
                                double dt, double g) {
  if (k.running == 0) {
    if (s.triggered) {
      k.timer = math::max(eta_l, eta_r) >= s.trigger_level ? k.timer + dt : 0.0;
      if (k.timer >= s.trigger_duration) {
        k.running = 1;
        k.since = t;
      }
    } else if (t + dt > s.start) {
      k.running = 1;
      k.since = s.start;
    }
    if (k.running == 0) return;
    k.width = s.growth == BreachGrowth::verheij ? s.width_initial : 0;
  }
  // The part of the step the breach is open.
  const double from = math::max(t, k.since), span = t + dt - from;
  if (s.growth == BreachGrowth::series) {
    k.width = series_value(s.breach_width, t + dt - k.since);
    return;
  }
  const double dh = math::abs(math::max(eta_l, s.bottom) - math::max(eta_r, s.bottom));
  k.width = math::min(k.width + verheij_growth(s, dh, from - k.since, span, g), s.width_final);
}

// The structures of a run as the structures' pass takes them (a
// StructureTable's arrays, on the host or the device), their tallies, and
// the weirs' work arrays: per crossing, the volume of the step (m^3, > 0
// from left to right), the breach whose bottom it flowed over (-1: none),
// and per scalar m the mass moved with that volume (mass[m crossing_count +
// c], the giver's concentration times the volume).
struct StructureView {
  const StructureSpec* specs = nullptr;
  const StructureEnd* inlets = nullptr;
  const StructureEnd* outlets = nullptr;
  StructureTally* tally = nullptr;
  int count = 0;
  const WeirCrossing* crossings = nullptr;
  int crossing_count = 0;
  const WeirCell* weir_cells = nullptr;
  const int* weir_entries = nullptr;
  int weir_cell_count = 0;
  double* volume = nullptr;
  int* breach = nullptr;
  double* mass = nullptr;
  int end_rounds = 0;  // the rounds of the pumps, gates and culverts (StructureSpec::end_round)
};

// The lanes of the fixed-order sums of a weir's or a breach's crossings
// (weir_lane_sum): the GPU's block size for them.
inline constexpr int kSumLanes = 128;

// First part of the pass: breach k's state over the step, at the levels of
// its sensing crossing (advance_breach); nothing for another kind.
template <class Real>
SHALLOWS_HD void advance_breach_of(const StructureView& v, const StructureCells<Real>& a, int k, double t, double dt,
                                   double g) {
  const StructureSpec& s = v.specs[k];
  if (s.kind != StructureKind::breach) return;
  const WeirCrossing& x = v.crossings[s.sensor];
  advance_breach(s, v.tally[k], static_cast<double>(a.h[x.left.state]) + x.left.z,
                 static_cast<double>(a.h[x.right.state]) + x.right.z, t, dt, g);
}

// Second part: crossing c's flow over the step from the levels the pass
// starts from, by the weir law at its crest, lowered to the bottom of any
// open breach of its weir whose width covers it; limited by weir_volume
// over its ends' shares. A wall's crossing moves nothing.
template <class Real>
SHALLOWS_HD void weir_flow(const StructureView& v, const StructureCells<Real>& a, int c, double dt) {
  const WeirCrossing& x = v.crossings[c];
  const StructureSpec& s = v.specs[x.structure];
  double crest = x.crest, q = 0;
  int breach = -1;
  const double h_l = static_cast<double>(a.h[x.left.state]), h_r = static_cast<double>(a.h[x.right.state]);
  if (s.kind == StructureKind::weir) {
    for (int b = 0; b < v.count; ++b) {
      const StructureSpec& o = v.specs[b];
      if (o.kind != StructureKind::breach || o.weir != x.structure || v.tally[b].running == 0) continue;
      if (math::abs(x.s - o.at) <= v.tally[b].width / 2 && o.bottom < crest) {
        crest = o.bottom;
        breach = b;
      }
    }
    q = weir_discharge(s.coefficient, x.length, crest, h_l + x.left.z, h_r + x.right.z);
  }
  const double vol = weir_volume(q, dt, crest, x.left, h_l, x.right, h_r);
  v.volume[c] = vol;
  v.breach[c] = vol != 0 ? breach : -1;
  const index_t giver = vol > 0 ? x.left.state : x.right.state;
  const double h_give = vol > 0 ? h_l : h_r;
  for (int m = 0; m < a.scalars; ++m) {
    const double conc = h_give > 0 ? static_cast<double>(a.hc[m][giver]) / h_give : 0.0;
    v.mass[static_cast<std::size_t>(m) * static_cast<std::size_t>(v.crossing_count) + c] = conc * vol;
  }
}

// Third part: weir cell w takes its crossings' flows, in crossing order: the
// water it gives leaves with its share of the discharge and of each scalar
// (taken_discharge, its concentration at the pass's start), the water it
// receives arrives at rest with the givers' scalars (sourced_discharge).
template <class Real>
SHALLOWS_HD void apply_weir_cell(const StructureView& v, const StructureCells<Real>& a, int w) {
  const WeirCell& cell = v.weir_cells[w];
  const index_t k = cell.end.state;
  const double h0 = static_cast<double>(a.h[k]), area = cell.end.area;
  double out = 0, in = 0;
  for (int e = cell.first; e < cell.first + cell.count; ++e) {
    const int c = v.weir_entries[e] >> 1;
    const double into = (v.weir_entries[e] & 1) != 0 ? v.volume[c] : -v.volume[c];
    if (into < 0) out -= into;
    else in += into;
  }
  if (out == 0 && in == 0) return;
  // Its last water exactly: out / area may round past the depth.
  const double after_out = out >= h0 * area ? 0.0 : math::max(h0 - out / area, 0.0);
  const double d_out = after_out - h0;
  const Real hn = static_cast<Real>(after_out + in / area);
  for (int m = 0; m < a.scalars; ++m) {
    const double* mass = v.mass + static_cast<std::size_t>(m) * static_cast<std::size_t>(v.crossing_count);
    double brought = 0;
    for (int e = cell.first; e < cell.first + cell.count; ++e) {
      const int c = v.weir_entries[e] >> 1;
      const bool right = (v.weir_entries[e] & 1) != 0;
      if ((right ? v.volume[c] : -v.volume[c]) > 0) brought += right ? mass[c] : -mass[c];
    }
    Real* hc = a.hc[m];
    const double conc = h0 > 0 ? static_cast<double>(hc[k]) / h0 : 0.0;
    hc[k] = static_cast<Real>(static_cast<double>(hc[k]) + conc * d_out + brought / area);
  }
  a.h[k] = hn;
  sourced_discharge(h0, d_out, hn, a.h_dry, a.hu[k], a.hv[k]);
}

// Fourth part, for a weir or a breach k: lane `lane`'s share (of kSumLanes)
// of the volume its crossings moved over the step (a breach's: those that
// flowed over its bottom), crossings lane, lane + kSumLanes, ... in order.
// The lanes' sums add up by a fixed tree (sum_lanes on the host, the GPU's
// block_sum), the same bits on both.
SHALLOWS_HD double weir_lane_sum(const StructureView& v, int k, int lane) {
  const StructureSpec& s = v.specs[k];
  const StructureSpec& weir = s.kind == StructureKind::breach ? v.specs[s.weir] : s;
  double sum = 0;
  for (int c = weir.first_crossing + lane; c < weir.first_crossing + weir.crossings; c += kSumLanes)
    if (s.kind != StructureKind::breach || v.breach[c] == k) sum += v.volume[c];
  return sum;
}

// The lanes' sums (kSumLanes of them, overwritten) by the GPU block_sum's tree.
SHALLOWS_HD double sum_lanes(double* lanes) {
  for (int o = kSumLanes / 2; o > 0; o >>= 1)
    for (int t = 0; t < o; ++t) lanes[t] += lanes[t + o];
  return lanes[0];
}

// Weir or breach k's tally after the step: the volume moved, and its discharge.
SHALLOWS_HD void settle_weir_tally(const StructureView& v, int k, double moved, double dt) {
  v.tally[k].volume += moved;
  v.tally[k].discharge = dt > 0 ? moved / dt : 0.0;
}

// Whether structure kind k's tally sums its crossings (weir_lane_sum).
SHALLOWS_HD bool sums_crossings(StructureKind k) { return k == StructureKind::weir || k == StructureKind::breach; }

// Whether structure kind k joins two ends (a pump, gate or culvert).
SHALLOWS_HD bool joins_ends(StructureKind k) {
  return k == StructureKind::pump || k == StructureKind::gate || k == StructureKind::culvert;
}

// Last part, for a pump, gate or culvert k (nothing for another kind): at
// the levels its ends have now (structure_discharge), the volume limited
// (structure_volume) and moved (move_volume). In file order, or by rounds
// (StructureSpec::end_round): the same values.
template <class Real>
SHALLOWS_HD void apply_end_structure(const StructureView& v, const StructureCells<Real>& a, int k, double t, double dt,
                                     double g) {
  const StructureSpec& s = v.specs[k];
  if (!joins_ends(s.kind)) return;
  const StructureEnd in = v.inlets[k], out = v.outlets[k];
  const double h_in = static_cast<double>(a.h[in.state]), h_out = static_cast<double>(a.h[out.state]);
  const double eta_in = h_in + in.z, eta_out = h_out + out.z;
  bool running = v.tally[k].running != 0;
  if (s.kind != StructureKind::culvert) running = pump_running(s, eta_in, running);
  v.tally[k].running = running ? 1.0 : 0.0;
  const double q = structure_discharge(s, eta_in, eta_out, t, dt, g, running);
  const double vol = structure_volume(s, q, dt, h_in, in.area, eta_in, h_out, out.area, eta_out);
  v.tally[k].discharge = dt > 0 ? vol / dt : 0.0;
  if (vol == 0) return;
  v.tally[k].volume += vol;
  move_volume(a, in, h_in, out, h_out, vol);
}

// The structures' pass over a step of dt from t, after the update and the
// forcing: the parts above one after another (a CUDA executor runs each part
// over the threads of one block, structures_kernel, but on a rank's replica,
// where one thread runs this).
template <class Real>
SHALLOWS_HD void apply_structures(const StructureView& v, const StructureCells<Real>& a, double t, double dt, double g) {
  for (int k = 0; k < v.count; ++k) advance_breach_of(v, a, k, t, dt, g);
  for (int c = 0; c < v.crossing_count; ++c) weir_flow(v, a, c, dt);
  for (int w = 0; w < v.weir_cell_count; ++w) apply_weir_cell(v, a, w);
  double lanes[kSumLanes];
  for (int k = 0; k < v.count; ++k) {
    if (!sums_crossings(v.specs[k].kind)) continue;
    for (int l = 0; l < kSumLanes; ++l) lanes[l] = weir_lane_sum(v, k, l);
    settle_weir_tally(v, k, sum_lanes(lanes), dt);
  }
  for (int k = 0; k < v.count; ++k) apply_end_structure(v, a, k, t, dt, g);
}

}  // namespace shallows
