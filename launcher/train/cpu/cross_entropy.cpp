#include "train/cpu/cross_entropy.hpp"

#include "train/cpu/fast_math.hpp"

#include <cmath>
#include <cstddef>

namespace gpudirect::train::cpu {

void softmax_cross_entropy_forward(float* losses, float* probs, const float* logits, const std::int32_t* targets, int N, int V,
                                   int threads) {
  const std::size_t v_ = static_cast<std::size_t>(V);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int n = 0; n < N; ++n) {
    const float* x = logits + static_cast<std::size_t>(n) * v_;
    float* p = probs + static_cast<std::size_t>(n) * v_;
    float max = -INFINITY;
    for (std::size_t i = 0; i < v_; ++i) max = x[i] > max ? x[i] : max;
    const float target_logit = x[targets[n]];
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (std::size_t i = 0; i < v_; ++i) {
      p[i] = exp_approx(x[i] - max);
      sum += p[i];
    }
    const float inv = 1.0f / sum;
#pragma omp simd
    for (std::size_t i = 0; i < v_; ++i) p[i] *= inv;
    // log-sum-exp form: exact even when the target's probability underflows.
    losses[n] = std::log(sum) + max - target_logit;
  }
}

void softmax_cross_entropy_backward(float* dlogits, const float* probs, const std::int32_t* targets, float dloss, int N, int V,
                                    int threads) {
  const std::size_t v_ = static_cast<std::size_t>(V);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int n = 0; n < N; ++n) {
    const float* p = probs + static_cast<std::size_t>(n) * v_;
    float* d = dlogits + static_cast<std::size_t>(n) * v_;
#pragma omp simd
    for (std::size_t i = 0; i < v_; ++i) d[i] = dloss * p[i];
    d[targets[n]] -= dloss;
  }
}

}  // namespace gpudirect::train::cpu
