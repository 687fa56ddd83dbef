#include "train/cpu/layernorm.hpp"

#include "train/cpu/parallel.hpp"

#include <cmath>
#include <cstddef>

namespace gpudirect::train::cpu {

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight, const float* bias, int N, int C,
                       int threads) {
  const std::size_t c_ = static_cast<std::size_t>(C);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int n = 0; n < N; ++n) {
    const float* x = inp + static_cast<std::size_t>(n) * c_;
    float* y = out + static_cast<std::size_t>(n) * c_;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (std::size_t i = 0; i < c_; ++i) sum += x[i];
    const float m = sum / static_cast<float>(C);
    float var = 0.0f;
#pragma omp simd reduction(+ : var)
    for (std::size_t i = 0; i < c_; ++i) var += (x[i] - m) * (x[i] - m);
    const float s = 1.0f / std::sqrt(var / static_cast<float>(C) + 1e-5f);
    for (std::size_t i = 0; i < c_; ++i) y[i] = (x[i] - m) * s * weight[i] + bias[i];
    mean[n] = m;
    rstd[n] = s;
  }
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp, const float* weight,
                        const float* mean, const float* rstd, int N, int C, int threads) {
  const std::size_t c_ = static_cast<std::size_t>(C);
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static)
    for (int n = 0; n < N; ++n) {
      const float* x = inp + static_cast<std::size_t>(n) * c_;
      const float* d = dout + static_cast<std::size_t>(n) * c_;
      float* dx = dinp + static_cast<std::size_t>(n) * c_;
      const float m = mean[n], s = rstd[n];
      // dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dout * weight.
      float g_mean = 0.0f, gx_mean = 0.0f;
#pragma omp simd reduction(+ : g_mean, gx_mean)
      for (std::size_t i = 0; i < c_; ++i) {
        const float g = d[i] * weight[i];
        g_mean += g;
        gx_mean += g * (x[i] - m) * s;
      }
      g_mean /= static_cast<float>(C);
      gx_mean /= static_cast<float>(C);
      for (std::size_t i = 0; i < c_; ++i) {
        const float xhat = (x[i] - m) * s;
        dx[i] += s * (d[i] * weight[i] - g_mean - xhat * gx_mean);
      }
    }
#pragma omp for schedule(static)
    for (int blk = 0; blk < column_blocks(C); ++blk) {
      const auto [c0, c1] = column_block(blk, C);
      for (int n = 0; n < N; ++n) {
        const float* x = inp + static_cast<std::size_t>(n) * c_;
        const float* d = dout + static_cast<std::size_t>(n) * c_;
        const float m = mean[n], s = rstd[n];
        for (std::size_t i = c0; i < c1; ++i) {
          dweight[i] += d[i] * (x[i] - m) * s;
          dbias[i] += d[i];
        }
      }
    }
  }
}

}  // namespace gpudirect::train::cpu
