// SPDX-License-Identifier: MIT
// A randomized sweep of the CUDA grid executors against the CPU executor:
// 32 Cartesian problems nobody hand-picked, each drawn from a fixed seed, so
// that a defect that shows only on some combination of features is caught.
// Each case draws the scheme (roe1, roe3) and precision; a small grid (nx in
// [9, 97], ny in [5, 75], no multiple of 8) with dx and dy equal or not; a
// bed of slopes, bumps, ripples and a step, sometimes with inactive (NaN)
// islands or a ragged NaN border; water at rest on part of it with a dam
// raised on a disc or a half-plane, sometimes moving, sometimes a residue
// below h_dry in the dry cells; h_dry, cfl and Manning friction; each side's
// condition (wall, open, inflow, level, the last two sometimes following a
// series); sometimes boundary segments (level, open, wall); sometimes the
// forcing: rain (constant, a series or a stack of frames, the first two
// sometimes scaled per cell), infiltration (initial + constant, Green-Ampt),
// a Manning map, point sources, a sink, a line source along
// a side; and 0-2 passive scalars with the concentrations the sides, the
// rain, the sources and the segments bring. t_end is 40-100 steps of the
// dt of the first 8 steps on the CPU; where the flow then speeds up so that
// a run would take more than 150 steps, it ends at step 135 instead.
// Each case runs through Simulation as `shallows run` does (kind "cpu"
// against kind "cuda", maxima tracked) and the two must take the same steps
// to the same time, with h, hu, hv, each scalar's h c, the maxima, the
// volume, the water through the sides and the forcing's volumes within the
// tolerances of the other GPU tests, every depth finite and >= 0. A failure
// prints the case's seed and what was drawn (SweepCase::to_string); run one
// case alone with --gtest_filter='*CudaSweep*seed_<seed>'.
// Every test skips where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "shallows/exec/cuda_backend.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/simulation.hpp"
#include "support/gpu.hpp"
#include "support/measures.hpp"
#include "support/problems.hpp"

#ifndef SHALLOWS_HAVE_CUDA
TEST(CudaSweep, NotBuilt) { GTEST_SKIP() << "this build has no CUDA backend: GPU tests skipped"; }
#else

namespace {

using namespace shallows;
using test_support::rel_l1;

constexpr int kCases = 32;
constexpr std::uint64_t kFirstSeed = 7100;  // case k draws from seed kFirstSeed + k
constexpr index_t kMaxSteps = 150;          // a longer run is cut short (t_end scaled down)

const char* scheme_name(Scheme s) { return s == Scheme::roe3 ? "roe3" : "roe1"; }
const char* precision_name(Precision p) { return p == Precision::single_precision ? "float" : "double"; }
const char* side_name(int s) { return s == 0 ? "W" : s == 1 ? "E" : s == 2 ? "S" : "N"; }
const char* kind_name(BoundaryKind k) {
  switch (k) {
    case BoundaryKind::open: return "open";
    case BoundaryKind::inflow: return "inflow";
    case BoundaryKind::level: return "level";
    default: return "wall";
  }
}

// "%.3g" of a value.
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// Tolerances of the other GPU tests, relative L1 (and relative for the
// volumes): double 1e-12, float 1e-5, first order (test_cuda.cpp's
// tolerance()) and third (test_cuda_roe3.cpp's expect_cpu_gpu_agree) alike;
// the forcing's volumes and each cell's infiltration as test_cuda_forcing.cpp
// (1e-12 in double; float: the fields' 1e-5).
double tolerance(Precision p) { return p == Precision::single_precision ? 1e-5 : 1e-12; }

// Draws from one seed, the same on every platform: std::mt19937_64 is fully
// specified, the standard distributions are not.
class Dice {
 public:
  explicit Dice(std::uint64_t seed) : rng_(seed) {}
  double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(rng_() >> 11) * 0x1p-53; }
  double log_uniform(double lo, double hi) { return lo * std::exp(std::log(hi / lo) * uniform(0, 1)); }
  bool chance(double p) { return uniform(0, 1) < p; }
  // An integer in [lo, hi].
  index_t integer(index_t lo, index_t hi) {
    return lo + static_cast<index_t>(rng_() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  // An index into weights, drawn with them.
  int pick(std::initializer_list<double> weights) {
    double total = 0;
    for (double w : weights) total += w;
    double u = uniform(0, total);
    int k = 0;
    for (double w : weights) {
      if (u < w) return k;
      u -= w;
      ++k;
    }
    return k - 1;
  }

 private:
  std::mt19937_64 rng_;
};

// What a case drew, in words: printed with every failure and with the
// case's result line.
struct SweepCase {
  std::uint64_t seed = 0;
  Scheme scheme = Scheme::roe1;
  Precision precision = Precision::double_precision;
  index_t nx = 0, ny = 0;
  double dx = 0, dy = 0, depth = 0, cfl = 0, h_dry = 0, n_manning = 0, arrival_threshold = 0;
  std::string bed, start;
  std::array<std::string, 4> sides;  // "level 1.2~": ~ marks a series
  std::vector<std::string> segments;
  std::vector<std::string> forcing;
  int scalars = 0;
  double t_end = 0;
  bool cut = false;  // t_end cut to the time of step 0.9 kMaxSteps

  std::string to_string() const {
    std::string s = "seed " + std::to_string(seed) + ": " + scheme_name(scheme) + " " + precision_name(precision) +
                    " " + std::to_string(nx) + "x" + std::to_string(ny) + " dx " + num(dx) + " dy " + num(dy) +
                    " m, depth scale " + num(depth) + " m, cfl " + num(cfl) + ", h_dry " + num(h_dry) +
                    ", manning " + num(n_manning) + "; bed " + bed + "; start " + start + "; sides";
    for (int k = 0; k < 4; ++k) s += std::string(" ") + side_name(k) + " " + sides[static_cast<std::size_t>(k)];
    s += "; segments";
    if (segments.empty()) s += " none";
    for (const std::string& g : segments) s += " " + g;
    s += "; forcing";
    if (forcing.empty()) s += " none";
    for (std::size_t k = 0; k < forcing.size(); ++k) s += (k ? ", " : " ") + forcing[k];
    s += "; " + std::to_string(scalars) + " scalars; arrival at " + num(arrival_threshold) + " m; t_end " +
         num(t_end) + " s" + (cut ? " (cut short)" : "");
    return s;
  }
};

struct Case {
  Problem problem;
  SweepCase what;
};

BackendOptions options(const std::string& kind, bool track_maxima, double arrival_threshold = 0.01) {
  BackendOptions o;
  o.kind = kind;
  o.threads = 2;
  o.track_maxima = track_maxima;
  o.arrival_threshold = arrival_threshold;
  return o;
}

std::size_t at(const Problem& p, index_t i, index_t j) { return static_cast<std::size_t>(j * p.grid.nx + i); }

// Boundary cells along a side: ny on west and east, nx on south and north.
index_t side_length(const Problem& p, int side) { return side < 2 ? p.grid.ny : p.grid.nx; }

// Problem cell of boundary cell s of a side.
index_t side_cell(const Problem& p, int side, index_t s) {
  const index_t nx = p.grid.nx, ny = p.grid.ny;
  switch (side) {
    case 0: return s * nx;
    case 1: return s * nx + nx - 1;
    case 2: return s;
    default: return (ny - 1) * nx + s;
  }
}

// A random active cell at least min_depth deep at the start; -1 where a
// thousand draws found none.
index_t random_cell(Dice& dice, const Problem& p, double min_depth = 0) {
  for (int tries = 0; tries < 1000; ++tries) {
    const auto k = static_cast<std::size_t>(dice.integer(0, p.grid.cells() - 1));
    if (!std::isnan(p.z[k]) && p.h[k] >= min_depth) return static_cast<index_t>(k);
  }
  return -1;
}

// A series over the run: values at 0, at a time inside and at t_end.
TimeSeries series(Dice& dice, double t_end, double v0, double v1, double v2) {
  return TimeSeries{{0.0, dice.uniform(0.2, 0.8) * t_end, t_end}, {v0, v1, v2}};
}

// A per-cell field that varies smoothly between lo and hi.
std::vector<double> smooth_field(Dice& dice, const Problem& p, double lo, double hi) {
  const double a = dice.uniform(1, 9), b = dice.uniform(1, 9), phase = dice.uniform(0, 6.3);
  std::vector<double> v(static_cast<std::size_t>(p.grid.cells()));
  for (index_t j = 0; j < p.grid.ny; ++j) {
    for (index_t i = 0; i < p.grid.nx; ++i) {
      const double xi = (double(i) + 0.5) / double(p.grid.nx), eta = (double(j) + 0.5) / double(p.grid.ny);
      v[at(p, i, j)] = lo + (hi - lo) * (0.5 + 0.5 * std::sin(a * xi + b * eta + phase));
    }
  }
  return v;
}

// The grid, bed, initial state, sides, segments, friction and numerics of
// a case: everything that does not need t_end.
Problem draw_flow(Dice& dice, SweepCase& w) {
  w.scheme = dice.chance(0.55) ? Scheme::roe1 : Scheme::roe3;
  w.precision = dice.chance(0.5) ? Precision::double_precision : Precision::single_precision;
  do w.nx = dice.integer(9, 97); while (w.nx % 8 == 0);
  do w.ny = dice.integer(5, 75); while (w.ny % 8 == 0);
  w.dx = dice.log_uniform(0.05, 20);
  w.dy = dice.chance(0.6) ? w.dx : w.dx * dice.uniform(0.5, 2);
  const double H = w.depth = dice.log_uniform(0.05, 3);
  const double x0 = std::round(dice.uniform(-100, 100)), y0 = std::round(dice.uniform(-100, 100));
  const double lx = double(w.nx) * w.dx, ly = double(w.ny) * w.dy;

  // The bed in the domain's unit square (xi, eta), in units of H: slopes,
  // 1-4 bumps or hollows, sometimes a ripple and a step.
  struct Bump {
    double xi, eta, amplitude, width;
  };
  const double base = dice.uniform(-3, 3);
  const double sx = dice.chance(0.3) ? 0.0 : dice.uniform(-1.5, 1.5);
  const double sy = dice.chance(0.3) ? 0.0 : dice.uniform(-1.5, 1.5);
  std::vector<Bump> bumps(static_cast<std::size_t>(dice.integer(1, 4)));
  for (Bump& b : bumps) b = {dice.uniform(0, 1), dice.uniform(0, 1), dice.uniform(-1, 1.2), dice.uniform(0.05, 0.3)};
  const double ripple = dice.chance(0.3) ? dice.uniform(0.05, 0.2) : 0.0, ripple_k = dice.uniform(5, 20);
  const bool step = dice.chance(0.25);
  const double step_angle = dice.uniform(0, 6.3), step_offset = dice.uniform(-0.3, 0.3);
  const double step_height = dice.uniform(-0.5, 0.5);
  w.bed = "slope (" + num(sx) + ", " + num(sy) + ") + " + std::to_string(bumps.size()) + " bumps";
  if (ripple > 0) w.bed += " + ripple";
  if (step) w.bed += " + step";
  const auto unit = [=](double x, double y) { return std::pair{(x - x0) / lx, (y - y0) / ly}; };
  const auto bed = [=](double x, double y) {
    const auto [xi, eta] = unit(x, y);
    double z = base + sx * (xi - 0.5) + sy * (eta - 0.5);
    for (const Bump& b : bumps) {
      const double r2 = (xi - b.xi) * (xi - b.xi) + (eta - b.eta) * (eta - b.eta);
      z += b.amplitude * std::exp(-r2 / (b.width * b.width));
    }
    z += ripple * std::sin(ripple_k * xi) * std::cos(0.7 * ripple_k * eta);
    if (step && std::cos(step_angle) * (xi - 0.5) + std::sin(step_angle) * (eta - 0.5) > step_offset) z += step_height;
    return H * z;
  };

  // The water: a lake up to the level that wets a fraction of the bed, and a
  // dam raised on a disc or a half-plane.
  Problem p = test_support::make_problem(w.nx, w.ny, x0, x0 + lx, y0, y0 + ly, bed,
                                         [](double, double) { return -std::numeric_limits<double>::infinity(); });
  std::vector<double> sorted = p.z;
  std::sort(sorted.begin(), sorted.end());
  const double lake = sorted[static_cast<std::size_t>(dice.uniform(0.3, 0.85) * double(sorted.size()))];
  const bool disc = dice.chance(0.5);
  const double dam_x = dice.uniform(0.1, 0.9), dam_y = dice.uniform(0.1, 0.9), dam_r = dice.uniform(0.1, 0.35);
  const double dam_angle = dice.uniform(0, 6.3), dam = dice.uniform(0.2, 1.0) * H;
  w.start = std::string("lake + dam on a ") + (disc ? "disc" : "half-plane");
  const auto surface = [=](double x, double y) {
    const auto [xi, eta] = unit(x, y);
    const bool raised = disc ? (xi - dam_x) * (xi - dam_x) + (eta - dam_y) * (eta - dam_y) < dam_r * dam_r
                             : std::cos(dam_angle) * (xi - dam_x) + std::sin(dam_angle) * (eta - dam_y) > 0;
    return raised ? lake + dam : lake;
  };
  p = test_support::make_problem(w.nx, w.ny, x0, x0 + lx, y0, y0 + ly, bed, surface);

  // Inactive cells: islands (rectangles) and a ragged border on one side.
  if (dice.chance(0.3)) {
    const index_t islands = dice.integer(1, 2);
    for (index_t k = 0; k < islands; ++k) {
      const double i0 = dice.uniform(0, 0.85), j0 = dice.uniform(0, 0.85);
      const double wi = dice.uniform(0.06, 0.2), wj = dice.uniform(0.06, 0.2);
      for (index_t j = 0; j < w.ny; ++j) {
        for (index_t i = 0; i < w.nx; ++i) {
          const double xi = (double(i) + 0.5) / double(w.nx), eta = (double(j) + 0.5) / double(w.ny);
          if (xi >= i0 && xi < i0 + wi && eta >= j0 && eta < j0 + wj) p.z[at(p, i, j)] = std::nan("");
        }
      }
    }
    w.bed += ", " + std::to_string(islands) + " NaN islands";
  }
  if (dice.chance(0.2)) {
    const int side = static_cast<int>(dice.integer(0, 3));
    for (index_t s = 0; s < side_length(p, side); ++s) {
      if (!dice.chance(0.4)) continue;
      const index_t cells = dice.integer(1, 2);
      for (index_t d = 0; d < cells; ++d) {
        const index_t c = side_cell(p, side, s);
        const index_t i = c % w.nx, j = c / w.nx;
        const index_t in_i = side == 0 ? i + d : side == 1 ? i - d : i;
        const index_t in_j = side == 2 ? j + d : side == 3 ? j - d : j;
        p.z[at(p, in_i, in_j)] = std::nan("");
      }
    }
    w.bed += std::string(", ragged NaN border ") + side_name(side);
  }
  for (std::size_t k = 0; k < p.z.size(); ++k) {
    if (std::isnan(p.z[k])) p.h[k] = 0;
  }

  w.h_dry = p.physics.h_dry = std::array{1e-6, 1e-6, 1e-4, 1e-3}[static_cast<std::size_t>(dice.integer(0, 3))];
  if (dice.chance(0.35)) {
    const double speed = dice.uniform(0.05, 0.5) * std::sqrt(9.81 * H), angle = dice.uniform(0, 6.3);
    const double wave = dice.uniform(1, 8);
    for (index_t j = 0; j < w.ny; ++j) {
      for (index_t i = 0; i < w.nx; ++i) {
        const std::size_t k = at(p, i, j);
        if (p.h[k] <= w.h_dry) continue;
        const double eta = (double(j) + 0.5) / double(w.ny);
        p.hu[k] = p.h[k] * speed * (std::cos(angle) + 0.3 * std::sin(wave * eta));
        p.hv[k] = p.h[k] * speed * (std::sin(angle) - 0.3 * std::cos(wave * eta));
      }
    }
    w.start += ", moving";
  }
  if (dice.chance(0.25)) {
    const bool moving = dice.chance(0.5);
    for (std::size_t k = 0; k < p.h.size(); ++k) {
      if (std::isnan(p.z[k]) || p.h[k] > 0) continue;
      p.h[k] = dice.uniform(0.05, 0.95) * w.h_dry;
      if (moving) {
        p.hu[k] = dice.uniform(-1, 1) * w.h_dry;
        p.hv[k] = dice.uniform(-1, 1) * w.h_dry;
      }
    }
    w.start += moving ? ", moving residue below h_dry" : ", residue below h_dry";
  }

  for (int s = 0; s < 4; ++s) {
    BoundaryCondition<double>& bc = p.boundary[static_cast<std::size_t>(s)];
    switch (dice.pick({0.3, 0.25, 0.2, 0.25})) {
      case 0: bc = {BoundaryKind::wall, 0}; break;
      case 1: bc = {BoundaryKind::open, 0}; break;
      case 2: bc = {BoundaryKind::inflow, dice.uniform(0.05, 0.4) * H * std::sqrt(9.81 * H)}; break;
      default: bc = {BoundaryKind::level, lake + dice.uniform(-0.5, 0.6) * H}; break;
    }
    // An inflow side's cells start wet half of the time, in a strip 1-3 cells
    // wide; else they may be thin or dry (the ghost's depth: inflow_depth).
    if (bc.kind != BoundaryKind::inflow || dice.chance(0.5)) continue;
    const double strip_depth = dice.uniform(0.15, 0.4) * H;
    const index_t strip = dice.integer(1, 3);
    for (index_t b = 0; b < side_length(p, s); ++b) {
      const index_t c = side_cell(p, s, b);
      for (index_t d = 0; d < strip; ++d) {
        const index_t i = c % w.nx + (s == 0 ? d : s == 1 ? -d : 0), j = c / w.nx + (s == 2 ? d : s == 3 ? -d : 0);
        if (i < 0 || i >= w.nx || j < 0 || j >= w.ny || std::isnan(p.z[at(p, i, j)])) continue;
        p.h[at(p, i, j)] = std::max(p.h[at(p, i, j)], strip_depth);
      }
    }
  }
  if (dice.chance(0.35)) {
    const index_t count = dice.chance(0.25) ? 2 : 1;
    const int first = static_cast<int>(dice.integer(0, 3));
    for (index_t k = 0; k < count; ++k) {
      const int side = (first + static_cast<int>(k) * 2) % 4;  // two segments: on different sides
      const index_t n = side_length(p, side);
      const index_t begin = dice.integer(0, n - 1), end = dice.integer(begin + 1, n);
      BoundarySegment g;
      switch (dice.pick({0.45, 0.3, 0.25})) {
        case 0:
          g = test_support::segment(Side(side), begin, end, BoundaryKind::level, lake + dice.uniform(-0.3, 0.6) * H);
          break;
        case 1: g = test_support::segment(Side(side), begin, end, BoundaryKind::open, 0); break;
        default: g = test_support::segment(Side(side), begin, end, BoundaryKind::wall, 0); break;
      }
      p.segments.push_back(g);
    }
  }
  w.n_manning = p.physics.n_manning = dice.chance(0.55) ? dice.uniform(0.01, 0.05) : 0.0;
  w.cfl = p.cfl = dice.uniform(0.5, 0.9);
  w.arrival_threshold = dice.uniform(0.05, 0.5) * H;
  p.scheme = w.scheme;
  p.precision = w.precision;
  return p;
}

// The series of the sides and segments, the forcing and the scalars, on a
// run to t_end.
void draw_forcing(Dice& dice, Problem& p, SweepCase& w, double t_end) {
  const double H = w.depth, area = p.grid.dx * p.grid.dy;
  for (int s = 0; s < 4; ++s) {
    const BoundaryCondition<double>& bc = p.boundary[static_cast<std::size_t>(s)];
    std::string& text = w.sides[static_cast<std::size_t>(s)] = kind_name(bc.kind);
    if (bc.kind == BoundaryKind::wall || bc.kind == BoundaryKind::open) continue;
    text += " " + num(bc.value);
    if (!dice.chance(0.2)) continue;
    const double v = bc.value;
    p.forcing.boundary[static_cast<std::size_t>(s)] =
        bc.kind == BoundaryKind::inflow
            ? series(dice, t_end, v, v * dice.uniform(0.3, 1.5), v * dice.uniform(0.3, 1.5))
            : series(dice, t_end, v, v + dice.uniform(-0.4, 0.4) * H, v + dice.uniform(-0.4, 0.4) * H);
    text += "~";
  }
  for (BoundarySegment& g : p.segments) {
    std::string text = std::string(side_name(static_cast<int>(g.where.side))) + "[" + std::to_string(g.where.begin) +
                       "," + std::to_string(g.where.end) + ") " + kind_name(g.where.bc.kind);
    if (g.where.bc.kind == BoundaryKind::level) {
      const double v = g.where.bc.value;
      text += " " + num(v);
      if (dice.chance(0.3)) {
        g.value = series(dice, t_end, v, v + dice.uniform(-0.3, 0.5) * H, v + dice.uniform(-0.3, 0.5) * H);
        text += "~";
      }
    }
    w.segments.push_back(text);
  }

  Forcing& f = p.forcing;
  if (dice.chance(0.55)) {
    // Rain over the run of 2-30 % of the depth scale.
    if (dice.chance(0.7)) {
      const double rate = dice.uniform(0.02, 0.3) * H / t_end;
      const int kind = dice.pick({0.35, 0.45, 0.2});
      if (kind == 2) {
        f.rain.frame_times = {-dice.uniform(0.1, 0.5) * t_end, dice.uniform(0.1, 0.45) * t_end,
                              dice.uniform(0.55, 0.9) * t_end};
        for (std::size_t k = 0; k < 3; ++k) {
          const std::vector<double> frame = smooth_field(dice, p, 0, 2 * rate);
          f.rain.frames.insert(f.rain.frames.end(), frame.begin(), frame.end());
        }
        w.forcing.push_back("rain stack of 3 frames");
      } else {
        f.rain.rate = kind == 0 ? TimeSeries::constant(rate)
                                : series(dice, t_end, rate * dice.uniform(0, 1.5), rate * dice.uniform(0, 2),
                                         rate * dice.uniform(0, 1.5));
        std::string text = kind == 0 ? "rain " + num(rate) + " m/s" : "rain series";
        if (dice.chance(0.5)) {
          f.rain.scale = smooth_field(dice, p, 0.3, 1.7);
          text += " scaled per cell";
        }
        w.forcing.push_back(text);
      }
    }
    switch (dice.pick({0.3, 0.45, 0.25})) {
      case 1: {
        f.infiltration.model = InfiltrationModel::green_ampt;
        // Ks for a ponded soil to take 5-30 % of the depth scale over the
        // run, F ~ sqrt(2 Ks psi deficit t).
        const double psi = dice.uniform(0.05, 0.3), deficit = dice.uniform(0.1, 0.4);
        const double taken = dice.uniform(0.05, 0.3) * H, ks = taken * taken / (2 * psi * deficit * t_end);
        const bool per_cell = dice.chance(0.5);
        f.infiltration.p0 = per_cell ? smooth_field(dice, p, 0.5 * ks, 1.5 * ks) : std::vector<double>{ks};
        f.infiltration.p1 = {psi};
        f.infiltration.p2 = {deficit};
        w.forcing.push_back(per_cell ? "Green-Ampt, Ks per cell" : "Green-Ampt");
        break;
      }
      case 2:
        f.infiltration.model = InfiltrationModel::initial_constant;
        f.infiltration.p0 = {dice.uniform(0, 0.05) * H};
        f.infiltration.p1 = {dice.uniform(0.01, 0.1) * H / t_end};
        w.forcing.push_back("initial + constant loss");
        break;
      default: break;
    }
    if (dice.chance(0.3)) {
      f.manning = smooth_field(dice, p, 0.015, 0.045);
      p.physics.n_manning = w.n_manning = 0;  // the map's friction is the forcing's
      w.forcing.push_back("Manning map");
    }
    // Point sources pour 0.5-4 depth scales over the run into their cell, a
    // line source 0.3-2 over its cells.
    const index_t points = dice.pick({0.5, 0.3, 0.2});
    for (index_t k = 0; k < points; ++k) {
      const double q = dice.uniform(0.5, 4) * H * area / t_end;
      const TimeSeries discharge = dice.chance(0.5) ? TimeSeries::constant(q)
                                                    : series(dice, t_end, q * dice.uniform(0, 1.5),
                                                             q * dice.uniform(0, 1.5), q * dice.uniform(0, 1.5));
      f.sources.push_back({"point " + std::to_string(k), {random_cell(dice, p)}, discharge});
    }
    if (points > 0) w.forcing.push_back(std::to_string(points) + " point sources");
    // A sink takes 5-150 % of the depth scale over the run from a wet cell
    // (its water leaves with its share of the discharge: taken_discharge).
    if (dice.chance(0.35)) {
      const double q = -dice.uniform(0.05, 1.5) * H * area / t_end;
      const TimeSeries discharge =
          dice.chance(0.5) ? TimeSeries::constant(q) : series(dice, t_end, q, 0.5 * q, 1.5 * q);
      if (const index_t c = random_cell(dice, p, 1e-3 * H); c >= 0) {
        f.sources.push_back({"sink", {c}, discharge});
        w.forcing.push_back("a sink");
      }
    }
    if (dice.chance(0.3)) {
      const int side = static_cast<int>(dice.integer(0, 3));
      const index_t n = side_length(p, side), length = dice.integer(2, std::min<index_t>(8, n));
      const index_t begin = dice.integer(0, n - length);
      VolumeSource line{std::string("line ") + side_name(side), {}, {}};
      for (index_t s = begin; s < begin + length; ++s) {
        const index_t c = side_cell(p, side, s);
        if (!std::isnan(p.z[static_cast<std::size_t>(c)])) line.cells.push_back(c);
      }
      const double q = dice.uniform(0.3, 2) * H * area * double(line.cells.size()) / t_end;
      line.discharge = dice.chance(0.5) ? TimeSeries::constant(q) : series(dice, t_end, 0, q, 0.5 * q);
      if (!line.cells.empty()) {
        w.forcing.push_back("line source " + std::string(side_name(side)) + "[" + std::to_string(begin) + "," +
                            std::to_string(begin + length) + ")");
        f.sources.push_back(std::move(line));
      }
    }
  }
  for (std::size_t k = 0; k < 4; ++k) {
    if (!f.boundary[k].empty()) w.forcing.push_back(std::string("series on side ") + side_name(static_cast<int>(k)));
  }

  w.scalars = dice.pick({0.5, 0.3, 0.2});
  for (int s = 0; s < w.scalars; ++s) {
    PassiveScalar sc = test_support::scalar("scalar " + std::to_string(s), {}, dice.uniform(0, 2));
    if (dice.chance(0.5)) {
      sc.c = {dice.uniform(0, 5)};
    } else {
      sc.c = smooth_field(dice, p, 0, dice.uniform(0.5, 5));
    }
    for (double& c : sc.side) c = dice.uniform(0, 3);
    if (!f.sources.empty() && dice.chance(0.7)) {
      for (std::size_t k = 0; k < f.sources.size(); ++k) sc.sources.push_back(dice.uniform(0, 4));
    }
    if (!p.segments.empty() && dice.chance(0.7)) {
      for (std::size_t k = 0; k < p.segments.size(); ++k) sc.segments.push_back(dice.uniform(0, 4));
    }
    p.scalars.push_back(std::move(sc));
  }
}

// The time the CPU executor reaches in at most `steps` steps towards t_end,
// stepping as Backend::advance does.
double reached_in(const Problem& p, index_t steps) {
  auto cpu = make_backend(p, options("cpu", false));
  double t = 0;
  for (index_t k = 0; k < steps && t < p.t_end; ++k) {
    const double remaining = p.t_end - t;
    const double dt = cpu->step(t, remaining);
    t = dt >= remaining ? p.t_end : t + dt;
  }
  return t;
}

// A case from its seed. t_end: the flow's first 8 steps on the CPU (without
// the forcing) give a dt, and the run is 40-100 of those; where the flow
// then speeds up so that more than kMaxSteps steps would be needed, t_end is
// the time of step 0.9 kMaxSteps.
Case make_case(std::uint64_t seed) {
  Dice dice(seed);
  SweepCase w;
  w.seed = seed;
  Problem p = draw_flow(dice, w);
  p.t_end = reached_in(p, 8);
  p.t_end *= dice.uniform(40, 100) / 8;
  draw_forcing(dice, p, w, p.t_end);
  if (reached_in(p, kMaxSteps) < p.t_end) {
    p.t_end = reached_in(p, kMaxSteps * 9 / 10);
    w.cut = true;
  }
  w.t_end = p.t_end;
  return {std::move(p), std::move(w)};
}

struct Outcome {
  index_t steps = 0;
  double t = 0;
  Fields f;
  Maxima m;
  ForcingVolumes moved;
  ForcingState forcing;
  BoundaryFlow sides;
  double volume = 0, positivity = 0;
  std::string kernel;  // the CUDA executor's
};

// Through Simulation, as the command line runs, to the problem's t_end.
Outcome run(const Problem& p, const std::string& kind, double arrival_threshold) {
  Simulation sim(p, options(kind, true, arrival_threshold));
  sim.advance_to(p.t_end);
  Outcome r;
  r.steps = sim.steps();
  r.t = sim.time();
  r.f = sim.state();
  r.m = sim.maxima();
  r.moved = sim.backend().forcing_volumes();
  sim.backend().read_forcing_state(r.forcing);
  r.sides = sim.backend().boundary_flow();
  r.volume = sim.volume();
  r.positivity = sim.backend().positivity_volume();
  if (const auto* cuda = dynamic_cast<const CudaBackend*>(&sim.backend())) r.kernel = cuda->stats().kernel;
  return r;
}

// |a - b| against a scale (absolute where the scale is 0).
double off(double a, double b, double scale) { return scale > 0 ? std::abs(a - b) / scale : std::abs(a - b); }

// Cells whose arrival times differ: reached in one run only, or more than
// `slack` seconds apart.
index_t arrivals_apart(const std::vector<double>& a, const std::vector<double>& b, double slack) {
  index_t apart = 0;
  for (std::size_t k = 0; k < b.size(); ++k) {
    const bool na = std::isnan(a[k]), nb = std::isnan(b[k]);
    if (na != nb || (!na && std::abs(a[k] - b[k]) > slack)) ++apart;
  }
  return apart;
}

void expect_finite(const Outcome& r, const char* who) {
  for (std::size_t k = 0; k < r.f.h.size(); ++k) {
    ASSERT_TRUE(std::isfinite(r.f.h[k]) && r.f.h[k] >= 0) << who << ": depth " << r.f.h[k] << " in cell " << k;
    ASSERT_TRUE(std::isfinite(r.f.hu[k]) && std::isfinite(r.f.hv[k])) << who << ": discharge in cell " << k;
  }
}

class CudaSweep : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(CudaSweep, RandomCasesAgreeWithCpu) {
  SHALLOWS_REQUIRE_GPU();
  Case c = make_case(GetParam());
  const Problem& p = c.problem;
  const SweepCase& w = c.what;
  SCOPED_TRACE(w.to_string());
  const Outcome cpu = run(p, "cpu", w.arrival_threshold);
  ASSERT_NO_FATAL_FAILURE(expect_finite(cpu, "cpu"));
  const Outcome gpu = run(p, "cuda", w.arrival_threshold);
  ASSERT_NO_FATAL_FAILURE(expect_finite(gpu, "gpu"));

  const double tol = tolerance(p.precision);
  EXPECT_EQ(gpu.steps, cpu.steps);
  EXPECT_EQ(gpu.t, cpu.t);
  ASSERT_EQ(gpu.f.h.size(), cpu.f.h.size());
  const double dh = rel_l1(gpu.f.h, cpu.f.h), dhu = rel_l1(gpu.f.hu, cpu.f.hu), dhv = rel_l1(gpu.f.hv, cpu.f.hv);
  EXPECT_LE(dh, tol) << "h";
  EXPECT_LE(dhu, tol) << "hu";
  EXPECT_LE(dhv, tol) << "hv";
  double worst = std::max({dh, dhu, dhv});
  ASSERT_EQ(gpu.f.hc.size(), p.scalars.size());
  ASSERT_EQ(cpu.f.hc.size(), p.scalars.size());
  for (std::size_t s = 0; s < p.scalars.size(); ++s) {
    const double d = rel_l1(gpu.f.hc[s], cpu.f.hc[s]);
    EXPECT_LE(d, tol) << "h c of " << p.scalars[s].name;
    worst = std::max(worst, d);
  }

  // The maxima: max depth and speed, and when each cell first got deeper
  // than the threshold (the same step's time; a run whose bits are not the
  // CPU's, float with forcing, may see a depth within round-off of the
  // threshold on either side of it: one cell in a thousand is let off).
  const double dmh = rel_l1(gpu.m.max_h, cpu.m.max_h), dms = rel_l1(gpu.m.max_speed, cpu.m.max_speed);
  EXPECT_LE(dmh, tol) << "max_h";
  EXPECT_LE(dms, tol) << "max_speed";
  worst = std::max({worst, dmh, dms});
  const index_t apart = arrivals_apart(gpu.m.arrival_time, cpu.m.arrival_time, tol * p.t_end);
  const index_t let_off = p.precision == Precision::single_precision ? p.grid.cells() / 1000 : 0;
  EXPECT_LE(apart, let_off) << "arrival_time";
  EXPECT_TRUE(std::any_of(cpu.m.arrival_time.begin(), cpu.m.arrival_time.end(), [](double t) { return t >= 0; }))
      << "no cell ever got deeper than the arrival threshold";

  // The water: stored, added by the positivity fixes, through the sides.
  EXPECT_LE(off(gpu.volume, cpu.volume, cpu.volume), tol) << "volume";
  EXPECT_LE(off(gpu.positivity, cpu.positivity, cpu.volume), tol) << "positivity volume";
  ASSERT_EQ(gpu.sides.kept(), cpu.sides.kept());
  if (cpu.sides.kept()) {
    const double through = cpu.sides.in + cpu.sides.out;
    EXPECT_LE(off(gpu.sides.in, cpu.sides.in, through), tol) << "water in through the sides";
    EXPECT_LE(off(gpu.sides.out, cpu.sides.out, through), tol) << "water out through the sides";
  }

  // The forcing's volumes, each source's on its own, and each cell's infiltration.
  if (p.forcing.active()) {
    EXPECT_LE(off(gpu.moved.rain, cpu.moved.rain, cpu.moved.rain), tol) << "rain";
    EXPECT_LE(off(gpu.moved.infiltration, cpu.moved.infiltration, cpu.moved.infiltration), tol) << "infiltration";
    ASSERT_EQ(gpu.forcing.sources.size(), p.forcing.sources.size());
    ASSERT_EQ(cpu.forcing.sources.size(), p.forcing.sources.size());
    for (std::size_t k = 0; k < p.forcing.sources.size(); ++k) {
      EXPECT_LE(off(gpu.forcing.sources[k], cpu.forcing.sources[k], std::abs(cpu.forcing.sources[k])), tol)
          << "volume of source '" << p.forcing.sources[k].name << "'";
    }
    ASSERT_EQ(gpu.forcing.infiltration.size(), cpu.forcing.infiltration.size());
    EXPECT_LE(rel_l1(gpu.forcing.infiltration, cpu.forcing.infiltration), tol) << "each cell's infiltration";
  }

  std::printf("  seed %llu: %s %s %lldx%lld, %lld / %lld steps, kernel %s, largest rel L1 %.2e, arrivals apart %lld\n",
              static_cast<unsigned long long>(w.seed), scheme_name(p.scheme), precision_name(p.precision),
              static_cast<long long>(p.grid.nx), static_cast<long long>(p.grid.ny), static_cast<long long>(gpu.steps),
              static_cast<long long>(cpu.steps), gpu.kernel.c_str(), worst, static_cast<long long>(apart));
}

std::vector<std::uint64_t> sweep_seeds() {
  std::vector<std::uint64_t> seeds;
  for (int k = 0; k < kCases; ++k) seeds.push_back(kFirstSeed + static_cast<std::uint64_t>(k));
  return seeds;
}

INSTANTIATE_TEST_SUITE_P(Seeds, CudaSweep, ::testing::ValuesIn(sweep_seeds()),
                         [](const ::testing::TestParamInfo<std::uint64_t>& param_info) {
                           return "seed_" + std::to_string(param_info.param);
                         });

}  // namespace
#endif  // SHALLOWS_HAVE_CUDA
