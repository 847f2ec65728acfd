// SPDX-License-Identifier: MIT
// The structures' discharge laws (physics/structures.hpp) against hand
// computations: a full culvert by the energy equation, inlet control by
// Boyd's relations, a flap, a pump's rate and its on/off levels, the volume
// limits, and the pass that moves the water; the IEEE-only powers and angles
// the laws use (core/math.hpp) against libm in long double.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "shallows/physics/structures.hpp"
#include "shallows/solver/structure_table.hpp"

namespace shallows {
namespace {

constexpr double g = 9.81;
constexpr double pi = 3.14159265358979323846;

StructureSpec pipe(double diameter, double length, double n, double invert_in, double invert_out) {
  StructureSpec s;
  s.kind = StructureKind::culvert;
  s.shape = CulvertShape::circular;
  s.width = s.height = diameter;
  s.length = length;
  s.n_manning = n;
  s.invert_in = invert_in;
  s.invert_out = invert_out;
  s.entrance_loss = 0.5;
  s.exit_loss = 1.0;
  return s;
}

StructureSpec box(double width, double height, double length, double n) {
  StructureSpec s = pipe(height, length, n, 0.0, 0.0);
  s.shape = CulvertShape::box;
  s.width = width;
  return s;
}

TEST(StructureCulvert, FullFlowFollowsTheEnergyEquation) {
  // A long pipe, both ends drowned: outlet control, Q = A sqrt(2 g dH / (k_en + k_ex + 2 g n^2 L / R^(4/3))).
  const StructureSpec s = pipe(1.0, 100.0, 0.013, 0.0, 0.0);
  const double area = pi / 4, radius = 0.25, dh = 0.5;
  const double friction = 2 * g * 0.013 * 0.013 * 100.0 / std::pow(radius, 4.0 / 3.0);
  const double want = area * std::sqrt(2 * g * dh / (0.5 + 1.0 + friction));
  EXPECT_NEAR(want, 1.29553, 1e-5);  // by hand: 0.785398 sqrt(9.81 / 3.605387)
  EXPECT_NEAR(culvert_discharge(s, 3.0, 2.5, g), want, 1e-12 * want);
  // Inlet control would pass more here: the outlet's law governs.
  EXPECT_GT(culvert_inlet_control(s, 3.0, g), want);
}

TEST(StructureCulvert, FullBoxFollowsTheEnergyEquation) {
  const StructureSpec s = box(2.0, 1.0, 50.0, 0.015);
  const double area = 2.0, radius = 2.0 / 6.0, dh = 0.2;
  const double friction = 2 * g * 0.015 * 0.015 * 50.0 / std::pow(radius, 4.0 / 3.0);
  const double want = area * std::sqrt(2 * g * dh / (1.5 + friction));
  EXPECT_NEAR(culvert_discharge(s, 2.2, 2.0, g), want, 1e-12 * want);
}

TEST(StructureCulvert, ShortBarrelAtLowHeadIsUnderInletControl) {
  // A short smooth box with 0.5 m over its inlet invert and a free outfall: Boyd's unsubmerged relation,
  // 0.544 sqrt(g) B hw^1.5 = 1.20481 m^3/s, below what the barrel would carry (2.46 m^3/s by the energy equation).
  const StructureSpec s = box(2.0, 1.0, 10.0, 0.012);
  const double want = 0.544 * std::sqrt(g) * 2.0 * std::pow(0.5, 1.5);
  EXPECT_NEAR(want, 1.20481, 1e-5);
  EXPECT_NEAR(culvert_discharge(s, 0.5, -1.0, g), want, 1e-12 * want);
  EXPECT_GT(culvert_outlet_control(s, 0.5, 0.5, g), 2.4);
}

TEST(StructureCulvert, DrownedInletUsesTheSubmergedRelation) {
  // A pipe with 3 m over its inlet and a free outfall 20 m below: Boyd's submerged relation for pipes.
  const StructureSpec s = pipe(0.6, 5.0, 0.012, 0.0, -20.0);
  const double want = 0.530 * std::sqrt(g) * std::pow(0.6, 1.87) * std::pow(3.0, 0.63);
  EXPECT_NEAR(culvert_inlet_control(s, 3.0, g), want, 1e-12 * want);
  EXPECT_NEAR(culvert_discharge(s, 3.0, -20.0, g), want, 1e-12 * want);
}

TEST(StructureCulvert, FlowsEitherWayUnlessOneWay) {
  StructureSpec s = pipe(1.0, 100.0, 0.013, 0.0, 0.0);
  const double forward = culvert_discharge(s, 3.0, 2.5, g);
  EXPECT_GT(forward, 0);
  EXPECT_EQ(culvert_discharge(s, 2.5, 3.0, g), -forward);  // the same law read backwards
  s.one_way = true;
  EXPECT_EQ(culvert_discharge(s, 3.0, 2.5, g), forward);
  EXPECT_EQ(culvert_discharge(s, 2.5, 3.0, g), 0.0);
}

TEST(StructureCulvert, NoFlowBelowTheInvertsOrAtEqualLevels) {
  const StructureSpec s = pipe(1.0, 10.0, 0.013, 1.0, 0.9);
  EXPECT_EQ(culvert_discharge(s, 0.95, 0.5, g), 0.0);   // the upstream water below its invert
  EXPECT_EQ(culvert_discharge(s, 0.5, 0.85, g), 0.0);   // both below
  EXPECT_EQ(culvert_discharge(s, 2.0, 2.0, g), 0.0);    // one level
  EXPECT_GT(culvert_discharge(s, 1.2, 0.5, g), 0.0);    // a free outfall
}

TEST(StructureCulvert, PartlyFullPipeHasTheSegmentsAreaAndRadius) {
  const StructureSpec s = pipe(2.0, 10.0, 0.013, 0.0, 0.0);
  const BarrelFlow half = barrel_flow(s, 1.0);
  EXPECT_NEAR(half.area, pi / 2, 1e-12);
  EXPECT_NEAR(half.radius, 0.5, 1e-12);  // (pi D^2 / 8) / (pi D / 2) = D / 4
  const BarrelFlow full = barrel_flow(s, 2.0);
  EXPECT_NEAR(full.area, pi, 1e-12);
  EXPECT_NEAR(full.radius, 0.5, 1e-12);
}

TEST(StructurePump, DeliversItsRateAndTheSeriesMeanOverAStep) {
  StructureSpec s;
  double q = 2.0;
  s.discharge = {&q, &q, 1};  // a constant (the time is not read)
  EXPECT_EQ(pump_discharge(s, 0.0, 0.3, true), 2.0);
  EXPECT_EQ(pump_discharge(s, 0.0, 0.3, false), 0.0);
  const double t[2] = {0.0, 10.0}, v[2] = {0.0, 10.0};
  s.discharge = {t, v, 2};
  EXPECT_DOUBLE_EQ(pump_discharge(s, 2.0, 2.0, true), 3.0);  // the mean of 2 and 4
}

TEST(StructurePump, StartsAtOnAndStopsBelowOff) {
  StructureSpec s;
  s.controlled = true;
  s.on = 1.5;
  s.off = 1.0;
  EXPECT_FALSE(pump_running(s, 1.2, false));
  EXPECT_TRUE(pump_running(s, 1.5, false));
  EXPECT_TRUE(pump_running(s, 1.2, true));   // hysteresis: runs on between the levels
  EXPECT_TRUE(pump_running(s, 1.0, true));
  EXPECT_FALSE(pump_running(s, 0.99, true));
  s.controlled = false;
  EXPECT_TRUE(pump_running(s, -100.0, false));
}

TEST(StructureVolume, NeverMoreThanTheGivingCellHolds) {
  StructureSpec pump;
  // 2 m^3/s for 10 s from a 4 m^2 cell with 3 m: 12 m^3, not 20.
  EXPECT_EQ(structure_volume(pump, 2.0, 10.0, 3.0, 4.0, 5.0, 0.0, 4.0, 9.0), 12.0);
  EXPECT_EQ(structure_volume(pump, 2.0, 1.0, 3.0, 4.0, 5.0, 0.0, 4.0, 9.0), 2.0);  // uphill: the rate
  // A culvert stops at one level: levels 3 and 1 over cells of 4 and 12 m^2 meet after 2 / (1/4 + 1/12) = 6 m^3.
  const StructureSpec c = pipe(1.0, 10.0, 0.013, 0.0, 0.0);
  EXPECT_DOUBLE_EQ(structure_volume(c, 100.0, 1.0, 3.0, 4.0, 3.0, 1.0, 12.0, 1.0), 6.0);
  EXPECT_DOUBLE_EQ(structure_volume(c, -100.0, 1.0, 1.0, 12.0, 1.0, 3.0, 4.0, 3.0), -6.0);
}

TEST(StructurePass, MovesTheVolumeAndBringsItToRest) {
  // Cells: 0 the pump's inlet (10 m^2, moving), 1 its outlet (5 m^2, moving).
  std::vector<double> h{2.0, 1.0}, hu{0.4, 0.3}, hv{0.2, -0.1}, c0{0.2, 0.0};
  double* hc[1] = {c0.data()};
  StructureSpec s;
  double q = 1.5;
  s.discharge = {&q, &q, 1};
  const StructureEnd in{0, 10.0, 0.0}, out{1, 5.0, 3.0};
  StructureTally tally;
  StructureCells<double> a{h.data(), hu.data(), hv.data(), hc, 1, 1e-6};
  const StructureView v{&s, &in, &out, &tally, 1};
  apply_structures(v, a, 0.0, 2.0, g);
  EXPECT_DOUBLE_EQ(h[0], 2.0 - 3.0 / 10.0);
  EXPECT_DOUBLE_EQ(h[1], 1.0 + 3.0 / 5.0);
  EXPECT_DOUBLE_EQ(hu[0], 0.4 * 1.7 / 2.0);  // leaves with its share of the discharge
  EXPECT_EQ(hu[1], 0.3);                     // arrives at rest
  EXPECT_DOUBLE_EQ(c0[1], 0.1 * 3.0 / 5.0);  // concentration 0.1 carried
  EXPECT_DOUBLE_EQ(c0[0], 0.2 - 0.1 * 0.3);
  EXPECT_EQ(tally.volume, 3.0);
  EXPECT_EQ(tally.discharge, 1.5);
  EXPECT_EQ(tally.running, 1.0);
  // Until the inlet is empty: its last water, exactly, and no discharge left there.
  for (int k = 0; k < 10; ++k) apply_structures(v, a, 2.0 * (k + 1), 2.0, g);
  EXPECT_EQ(h[0], 0.0);
  EXPECT_EQ(hu[0], 0.0);
  EXPECT_DOUBLE_EQ(tally.volume, 20.0);
  EXPECT_EQ(tally.discharge, 0.0);
}

// A cell on two crossings of a weir (cell 0, 100 m^2 at 2 m over a crest of 1 m, giving to cells 1 and 2 of
// 100 m^2, dry): both flows come from the levels the pass starts from, each limited over half of cell 0. Over a
// long step each takes half the water above the crest (50 m^3, less than equal levels would allow): cell 0 ends
// at the crest exactly, its dye leaves at its concentration, the weir's tally is the sum.
TEST(StructurePass, WeirCrossingsShareTheirCellsWater) {
  std::vector<double> h{2.0, 0.0, 0.0}, hu{0.6, 0.0, 0.0}, hv{0.0, 0.0, 0.0}, dye{1.0, 0.0, 0.0};
  double* hc[1] = {dye.data()};
  StructureSpec weir;
  weir.kind = StructureKind::weir;
  weir.coefficient = 1.7;
  weir.first_crossing = 0;
  weir.crossings = 2;
  const StructureEnd half0{0, 50.0, 0.0}, whole0{0, 100.0, 0.0}, one{1, 100.0, 0.0}, two{2, 100.0, 0.0};
  const WeirCrossing crossings[2] = {{half0, one, 10.0, 1.0, 5.0, 0}, {half0, two, 10.0, 1.0, 15.0, 0}};
  const WeirCell cells[3] = {{whole0, 0, 2}, {one, 2, 1}, {two, 3, 1}};
  const int entries[4] = {0, 2, 1, 3};
  StructureTally tally;
  double volume[2], mass[2];
  int breach[2];
  const StructureView v{&weir, nullptr, nullptr, &tally, 1, crossings, 2, cells, entries, 3, volume, breach, mass};
  StructureCells<double> a{h.data(), hu.data(), hv.data(), hc, 1, 1e-6};
  apply_structures(v, a, 0.0, 1000.0, g);
  EXPECT_EQ(volume[0], 50.0);
  EXPECT_EQ(volume[1], 50.0);
  EXPECT_EQ(h[0], 1.0);
  EXPECT_EQ(h[1], 0.5);
  EXPECT_EQ(h[2], 0.5);
  EXPECT_EQ(hu[0], 0.3);  // leaves with its share of the discharge
  EXPECT_EQ(dye[0], 0.5);
  EXPECT_EQ(dye[1], 0.25);
  EXPECT_EQ(dye[2], 0.25);
  EXPECT_EQ(tally.volume, 100.0);
  EXPECT_EQ(tally.discharge, 0.1);
}

// Cells numbered as their state, 10 m^2 each (a layout for structure_table).
struct TenSquareMetreCells {
  index_t state_index(index_t k) const { return k; }
  double area(index_t) const { return 10.0; }
};

// The pumps, gates and culverts act in rounds of structures on cells of their own (StructureSpec::end_round): a
// structure after the last earlier one that shares a cell with it. Acting round by round, in any order within a
// round (here from the last), gives the bits of the case's order.
TEST(StructureTable, EndStructuresSharingACellActInLaterRounds) {
  const auto joined = [](StructureKind kind, index_t inlet, index_t outlet, double q) {
    Structure st;
    st.spec = kind == StructureKind::culvert ? pipe(0.5, 10.0, 0.013, 0.0, 0.0) : StructureSpec{};
    st.spec.kind = kind;
    st.inlet = inlet;
    st.outlet = outlet;
    st.discharge = TimeSeries::constant(q);
    return st;
  };
  // Cells 0..6: A 0 -> 1, B 2 -> 3, C 1 -> 4 (after A), D 5 -> 6, E 4 -> 0 (after C and A).
  const std::vector<Structure> structures{
      joined(StructureKind::pump, 0, 1, 0.4), joined(StructureKind::culvert, 2, 3, 0.0),
      joined(StructureKind::gate, 1, 4, 0.3), joined(StructureKind::pump, 5, 6, 0.2),
      joined(StructureKind::pump, 4, 0, 0.5)};
  const std::vector<double> z{0.0, 0.1, 0.0, -0.2, 0.3, 0.0, 0.0};
  const StructureTable t = structure_table(structures, StructureReplica{}, TenSquareMetreCells{}, z);
  std::vector<int> rounds;
  for (const StructureSpec& spec : t.specs) rounds.push_back(spec.end_round);
  EXPECT_EQ(rounds, (std::vector<int>{0, 0, 1, 0, 2}));
  EXPECT_EQ(t.end_rounds, 3);

  struct Run {
    std::vector<double> h{1.0, 0.5, 2.0, 0.7, 0.05, 1.5, 0.0}, hu{0.1, 0.2, -0.1, 0.0, 0.3, 0.1, 0.0},
        hv{0.0, 0.1, 0.2, -0.3, 0.0, 0.0, 0.0};
    std::vector<StructureTally> tallies;
    WeirWork work;
  };
  Run serial, by_rounds;
  for (Run* r : {&serial, &by_rounds}) r->tallies.resize(structures.size());
  for (int step = 0; step < 5; ++step) {
    const StructureView a = host_view(t, serial.tallies, serial.work);
    apply_structures(a, StructureCells<double>{serial.h.data(), serial.hu.data(), serial.hv.data(), nullptr, 0, 1e-6},
                     step * 2.0, 2.0, g);
    const StructureView b = host_view(t, by_rounds.tallies, by_rounds.work);
    const StructureCells<double> cells{by_rounds.h.data(), by_rounds.hu.data(), by_rounds.hv.data(), nullptr, 0, 1e-6};
    for (int round = 0; round < b.end_rounds; ++round)
      for (int k = b.count - 1; k >= 0; --k)
        if (b.specs[k].end_round == round) apply_end_structure(b, cells, k, step * 2.0, 2.0, g);
  }
  EXPECT_EQ(serial.h, by_rounds.h);
  EXPECT_EQ(serial.hu, by_rounds.hu);
  EXPECT_EQ(serial.hv, by_rounds.hv);
  EXPECT_EQ(tally_values(serial.tallies), tally_values(by_rounds.tallies));
  EXPECT_GT(serial.tallies[4].volume, 0.0);
  EXPECT_GT(serial.tallies[1].volume, 0.0);  // the culvert from 2 m to 0.5 m
}

// Free flow: Q = C L H^1.5 from the higher side; Villemonte's (1 - (H_d / H_u)^1.5)^0.385 once the lower side
// stands above the crest too; none while both stand at or below it.
TEST(StructureWeir, FollowsTheWeirLawAndVillemontesCorrection) {
  EXPECT_DOUBLE_EQ(weir_discharge(1.7, 10.0, 1.0, 3.0, 0.5), 1.7 * 10.0 * std::pow(2.0, 1.5));
  EXPECT_DOUBLE_EQ(weir_discharge(1.7, 10.0, 1.0, 0.5, 3.0), -1.7 * 10.0 * std::pow(2.0, 1.5));
  EXPECT_NEAR(weir_discharge(1.7, 10.0, 1.0, 3.0, 2.0),
              1.7 * 10.0 * std::pow(2.0, 1.5) * std::pow(1 - std::pow(0.5, 1.5), 0.385), 1e-12);
  EXPECT_EQ(weir_discharge(1.7, 10.0, 1.0, 3.0, 3.0), 0.0);  // level: nothing flows
  EXPECT_EQ(weir_discharge(1.7, 10.0, 1.0, 1.0, 0.2), 0.0);
  // Limits: what the giver holds above the crest (2 m over 4 m^2), and equal levels ((3 - 2.5) / (1/4 + 1/4)).
  const StructureEnd a{0, 4.0, 0.0}, b{1, 4.0, 0.0};
  EXPECT_DOUBLE_EQ(weir_volume(100.0, 1.0, 1.0, a, 3.0, b, 0.0), 6.0);
  EXPECT_DOUBLE_EQ(weir_volume(100.0, 1.0, 1.0, a, 3.0, b, 2.5), 1.0);
  EXPECT_DOUBLE_EQ(weir_volume(-100.0, 1.0, 1.0, a, 2.5, b, 3.0), -1.0);
  EXPECT_DOUBLE_EQ(weir_volume(2.0, 0.5, 1.0, a, 3.0, b, 0.0), 1.0);
}

// Verheij-van der Knaap: the increments over consecutive steps add up to the closed form at a held head.
TEST(StructureBreach, VerheijGrowthAddsUpToTheClosedForm) {
  StructureSpec s;
  s.kind = StructureKind::breach;
  const double closed = 1.3 * std::sqrt(g) * std::pow(1.5, 1.5) / 0.2 * std::log10(1 + 0.04 * g / 0.2 * 2.0);
  double sum = 0;
  for (int k = 0; k < 720; ++k) sum += verheij_growth(s, 1.5, 10.0 * k, 10.0, g);
  EXPECT_NEAR(sum, closed, 1e-9 * closed);  // two hours
  EXPECT_EQ(verheij_growth(s, 0.0, 0.0, 10.0, g), 0.0);
}

// A breach opens at its start, inside the step that holds it, with the series' width since then; a triggered
// one once the level has stood for the duration, its timer reset by a step below.
TEST(StructureBreach, OpensAtItsStartOrOnItsTrigger) {
  StructureSpec s;
  s.kind = StructureKind::breach;
  s.start = 5.0;
  const double t[2] = {0.0, 10.0}, w[2] = {4.0, 24.0};
  s.breach_width = {t, w, 2};
  StructureTally k;
  advance_breach(s, k, 2.0, 0.0, 0.0, 4.0, g);
  EXPECT_EQ(k.running, 0.0);
  advance_breach(s, k, 2.0, 0.0, 4.0, 4.0, g);
  EXPECT_EQ(k.running, 1.0);
  EXPECT_EQ(k.since, 5.0);
  EXPECT_DOUBLE_EQ(k.width, 4.0 + 20.0 * 3.0 / 10.0);
  StructureSpec v = s;
  v.triggered = true;
  v.trigger_level = 1.0;
  v.trigger_duration = 3.0;
  v.growth = BreachGrowth::verheij;
  v.width_initial = 2.0;
  v.width_final = 30.0;
  StructureTally m;
  advance_breach(v, m, 1.5, 0.0, 0.0, 2.0, g);
  advance_breach(v, m, 0.5, 0.0, 2.0, 2.0, g);  // below: the timer starts again
  EXPECT_EQ(m.timer, 0.0);
  advance_breach(v, m, 1.5, 0.0, 4.0, 2.0, g);
  EXPECT_EQ(m.running, 0.0);
  advance_breach(v, m, 1.5, 0.0, 6.0, 2.0, g);
  EXPECT_EQ(m.running, 1.0);
  EXPECT_EQ(m.since, 6.0);
  EXPECT_DOUBLE_EQ(m.width, 2.0 + verheij_growth(v, 1.5, 0.0, 2.0, g));
}

// math::log, exp, pow and acos (IEEE operations only, so that the GPU gives
// the CPU's bits) against libm in long double: within a few ulps over the
// laws' ranges, exact at the ends.
TEST(StructureMath, PowersAndAnglesWithinAFewUlps) {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> unit(0, 1);
  const double eps = std::numeric_limits<double>::epsilon();
  double log_worst = 0, exp_worst = 0, pow_worst = 0, acos_worst = 0;
  for (int k = 0; k < 200000; ++k) {
    const double x = std::exp(60 * unit(rng) - 30);
    const long double lx = std::log(static_cast<long double>(x));
    if (lx != 0) log_worst = std::max(log_worst, std::abs(static_cast<double>((math::log(x) - lx) / lx)));
    const double e = 1400 * unit(rng) - 700;
    const long double le = std::exp(static_cast<long double>(e));
    exp_worst = std::max(exp_worst, std::abs(static_cast<double>((math::exp(e) - le) / le)));
    const double base = 20 * unit(rng), y = 2 * unit(rng);
    const long double lp = std::pow(static_cast<long double>(base), static_cast<long double>(y));
    if (lp > 0) pow_worst = std::max(pow_worst, std::abs(static_cast<double>((math::pow(base, y) - lp) / lp)));
    const double c = 2 * unit(rng) - 1;
    const long double la = std::acos(static_cast<long double>(c));
    acos_worst = std::max(acos_worst, std::abs(static_cast<double>((math::acos(c) - la) / la)));
  }
  EXPECT_LE(log_worst, 2 * eps);
  EXPECT_LE(exp_worst, 2 * eps);
  EXPECT_LE(pow_worst, 20 * eps);
  EXPECT_LE(acos_worst, 2 * eps);
  EXPECT_EQ(math::log(1.0), 0.0);
  EXPECT_EQ(math::exp(0.0), 1.0);
  EXPECT_EQ(math::pow(0.0, 1.5), 0.0);
  EXPECT_EQ(math::pow(3.0, 0.0), 1.0);
  EXPECT_EQ(math::acos(1.0), 0.0);
  EXPECT_DOUBLE_EQ(math::acos(-1.0), pi);
  EXPECT_DOUBLE_EQ(math::acos(0.0), pi / 2);
  EXPECT_TRUE(std::isnan(math::acos(1.5)));
  EXPECT_EQ(math::exp(-800.0), 0.0);
  EXPECT_EQ(math::exp(800.0), std::numeric_limits<double>::infinity());
  EXPECT_NEAR(math::log(5e-310), std::log(5e-310), 1e-13);  // subnormal
}

}  // namespace
}  // namespace shallows
