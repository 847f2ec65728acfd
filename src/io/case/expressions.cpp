// SPDX-License-Identifier: MIT
// Fields given as muParser expressions in x and y.
#include <muParser.h>
#include <omp.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <numbers>

#include "reader.hpp"

namespace shallows::io::case_reader {
namespace {

struct ParserSlot {
  double x = 0;
  double y = 0;
  mu::Parser parser;
};

std::unique_ptr<ParserSlot> make_parser(const std::string& expr) {
  // muParser reads a lone = as an assignment to x or y, which a field never
  // means (x = 5 ? 2 : 0.5 would set every cell to 2): refused, == compares.
  for (std::size_t k = 0; k < expr.size(); ++k) {
    if (expr[k] != '=') continue;
    if (k + 1 < expr.size() && expr[k + 1] == '=') {
      ++k;
      continue;
    }
    if (k > 0 && (expr[k - 1] == '<' || expr[k - 1] == '>' || expr[k - 1] == '!')) continue;
    throw mu::ParserError("'=' at position " + std::to_string(k + 1) +
                          " would assign to a variable; write == to compare");
  }
  auto s = std::make_unique<ParserSlot>();
  s->parser.DefineConst("pi", std::numbers::pi);
  s->parser.DefineConst("e", std::numbers::e);
  s->parser.DefineVar("x", &s->x);
  s->parser.DefineVar("y", &s->y);
  s->parser.SetExpr(expr);
  return s;
}

} // namespace

std::vector<double> eval_expression(const Reader& rd, const FieldSpec& f, const CellCentres& at) {
  const std::size_t n = at.size();
  std::vector<double> out(n);
  const int threads = n >= 16384 ? std::max(1, omp_get_max_threads()) : 1;
  std::vector<std::unique_ptr<ParserSlot>> slots;
  try {
    // Parsers are built here, one per thread (muParser binds variables by
    // address); the first evaluation reports syntax errors.
    for (int t = 0; t < threads; ++t) slots.push_back(make_parser(f.expression));
    slots[0]->x = at.x(0);
    slots[0]->y = at.y(0);
    slots[0]->parser.Eval();
    if (slots[0]->parser.GetNumResults() != 1)
      rd.fail_at(f.key, "expression \"" + clip(f.expression) + "\" must give one value, not a list");
  } catch (const mu::Parser::exception_type& e) {
    rd.fail_at(f.key, "in expression \"" + clip(f.expression) + "\": " + e.GetMsg());
  }

  // 3-point Gauss-Legendre rule on [-1/2, 1/2] (exact to degree 5), or the centre alone.
  static constexpr double gauss_x[3] = {-0.3872983346207417, 0.0, 0.3872983346207417};
  static constexpr double gauss_w[3] = {5.0 / 18.0, 8.0 / 18.0, 5.0 / 18.0};
  const bool averages = at.averages && at.grid;
  const double dx = averages ? at.grid->dx : 0, dy = averages ? at.grid->dy : 0;

  bool failed = false;
  std::string error;
#pragma omp parallel num_threads(threads)
  {
    ParserSlot& s = *slots[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
    for (std::size_t k = 0; k < n; ++k) {
      const double xc = at.x(k), yc = at.y(k);
      double v = std::numeric_limits<double>::quiet_NaN();
      try {
        if (averages) {
          v = 0;
          for (int b = 0; b < 3; ++b) {
            s.y = yc + gauss_x[b] * dy;
            double row = 0;
            for (int a = 0; a < 3; ++a) {
              s.x = xc + gauss_x[a] * dx;
              row += gauss_w[a] * s.parser.Eval();
            }
            v += gauss_w[b] * row;
          }
        } else {
          s.x = xc;
          s.y = yc;
          v = s.parser.Eval();
        }
      } catch (const mu::Parser::exception_type& e) {
#pragma omp critical(shallows_case_eval)
        {
          if (!failed) error = e.GetMsg();
          failed = true;
        }
      }
      out[k] = v;
    }
  }
  if (failed) rd.fail_at(f.key, "in expression \"" + clip(f.expression) + "\": " + error);
  return out;
}

} // namespace shallows::io::case_reader
