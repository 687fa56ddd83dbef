#include "train/peak_flops.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace gpudirect::train {

double measure_sgemm_flops() {
  constexpr int n = 1024;
  std::vector<float> a(static_cast<std::size_t>(n) * n, 0.5f), b(a.size(), 0.25f), c(a.size(), 0.0f);
  double best = 0;
  for (int repeat = 0; repeat < 4; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (repeat > 0) best = std::max(best, 2.0 * n * n * n / seconds);  // the first run warms caches and threads
  }
  return best;
}

}  // namespace gpudirect::train
