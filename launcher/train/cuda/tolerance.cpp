// Why these bounds: bf16 keeps 8 significant bits, so one rounding is a relative error of up to
// 2^-9 (0.2%). A gradient passes through a few dozen bf16 roundings (activations stored in bf16,
// bf16 matmul inputs, bf16 dlogits) that partly average out; llm.c accepts gradients of its bf16
// GPT-2 within similar bounds of its fp32 reference. 5% relative L2 per tensor catches every real
// bug we know of (a wrong transpose, a missing scale, a dropped bias or residual term all give
// errors of order 1), and 1% on the loss catches a wrong softmax or mask.
#include "train/cuda/tolerance.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace gpudirect::train::cuda {

Comparison compare(std::span<const float> want, std::span<const float> got) {
  if (want.size() != got.size())
    throw std::invalid_argument("compare: the reference has " + std::to_string(want.size()) + " values, the result " +
                                std::to_string(got.size()));
  Comparison c;
  double ref = 0, diff = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double w = want[i], g = got[i];
    if (!std::isfinite(g)) c.finite = false;
    const double d = g - w;
    ref += w * w;
    diff += d * d;
    if (!(std::fabs(d) <= c.max_abs)) {  // also takes a NaN difference as the worst
      c.max_abs = std::fabs(d);
      c.max_index = i;
    }
  }
  c.reference_norm = std::sqrt(ref);
  c.difference_norm = std::sqrt(diff);
  c.relative_l2 = c.reference_norm > 0 ? c.difference_norm / c.reference_norm : (c.difference_norm > 0 ? INFINITY : 0.0);
  return c;
}

bool within(const Comparison& c, const Tolerance& t) {
  if (!c.finite || std::isnan(c.difference_norm)) return false;
  if (c.reference_norm < t.absolute_l2) return c.difference_norm < t.absolute_l2;
  return c.relative_l2 <= t.relative_l2;
}

bool loss_within(double want, double got, const Tolerance& t) {
  return std::isfinite(got) && std::fabs(got - want) <= t.loss_relative * std::fabs(want);
}

std::string describe(const Comparison& c) {
  char text[160];
  std::snprintf(text, sizeof text, "rel L2 %.3e, max |diff| %.3e at [%zu], |ref| %.3e%s", c.relative_l2, c.max_abs, c.max_index,
                c.reference_norm, c.finite ? "" : ", NOT FINITE");
  return text;
}

}  // namespace gpudirect::train::cuda
