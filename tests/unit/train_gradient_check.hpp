// Central finite differences for the train unit tests: the largest gap between the numeric and the
// analytic gradient, relative to the analytic gradient's largest element (errors of a wrong
// backward are of the gradient's own size; fp32 rounding stays far below 1e-3 of it).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <vector>

namespace gpudirect::train::testing {

inline double finite_difference_error(float* x, const std::vector<std::size_t>& elements, const float* analytic, std::size_t analytic_size,
                                      const std::function<double()>& objective, float h = 1e-2f) {
  double scale = 0.0;
  for (std::size_t i = 0; i < analytic_size; ++i) scale = std::max(scale, std::abs(static_cast<double>(analytic[i])));
  double worst = 0.0;
  for (std::size_t i : elements) {
    const float saved = x[i];
    x[i] = saved + h;
    const double up = objective();
    x[i] = saved - h;
    const double down = objective();
    x[i] = saved;
    const double numeric = (up - down) / (2.0 * static_cast<double>(h));
    worst = std::max(worst, std::abs(numeric - analytic[i]));
  }
  return scale > 0 ? worst / scale : worst;
}

inline std::vector<std::size_t> all_elements(std::size_t n) {
  std::vector<std::size_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

}  // namespace gpudirect::train::testing
