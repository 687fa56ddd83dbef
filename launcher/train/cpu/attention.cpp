#include "train/cpu/attention.hpp"

#include <cmath>
#include <cstddef>
#include <vector>

namespace gpudirect::train::cpu {

// One task per (batch, head): the rows of one head depend on each other in backward (dk, dv sum over
// queries), so the head is the unit of parallel work and each head's sums run in a fixed order.
void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH, int threads) {
  const std::size_t hs = static_cast<std::size_t>(C / NH);
  const std::size_t c3 = 3 * static_cast<std::size_t>(C), c_ = static_cast<std::size_t>(C);
  const std::size_t t_ = static_cast<std::size_t>(T);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int bh = 0; bh < B * NH; ++bh) {
    const std::size_t b = static_cast<std::size_t>(bh / NH), h = static_cast<std::size_t>(bh % NH);
    const float* base = qkv + b * t_ * c3;
    for (std::size_t t = 0; t < t_; ++t) {
      const float* q = base + t * c3 + h * hs;
      float* row = att + (static_cast<std::size_t>(bh) * t_ + t) * t_;
      float max = -INFINITY;
      for (std::size_t t2 = 0; t2 <= t; ++t2) {
        const float* k = base + t2 * c3 + c_ + h * hs;
        float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
        for (std::size_t i = 0; i < hs; ++i) dot += q[i] * k[i];
        row[t2] = dot * scale;
        if (row[t2] > max) max = row[t2];
      }
      float sum = 0.0f;
      for (std::size_t t2 = 0; t2 <= t; ++t2) {
        row[t2] = std::exp(row[t2] - max);
        sum += row[t2];
      }
      const float inv = 1.0f / sum;
      for (std::size_t t2 = 0; t2 <= t; ++t2) row[t2] *= inv;
      for (std::size_t t2 = t + 1; t2 < t_; ++t2) row[t2] = 0.0f;
      float* o = out + (b * t_ + t) * c_ + h * hs;
      for (std::size_t i = 0; i < hs; ++i) o[i] = 0.0f;
      for (std::size_t t2 = 0; t2 <= t; ++t2) {
        const float* v = base + t2 * c3 + 2 * c_ + h * hs;
        const float p = row[t2];
#pragma omp simd
        for (std::size_t i = 0; i < hs; ++i) o[i] += p * v[i];
      }
    }
  }
}

void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* att, int B, int T, int C, int NH,
                        int threads) {
  const std::size_t hs = static_cast<std::size_t>(C / NH);
  const std::size_t c3 = 3 * static_cast<std::size_t>(C), c_ = static_cast<std::size_t>(C);
  const std::size_t t_ = static_cast<std::size_t>(T);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
#pragma omp parallel num_threads(threads)
  {
    std::vector<float> dp(t_);
#pragma omp for schedule(static)
    for (int bh = 0; bh < B * NH; ++bh) {
      const std::size_t b = static_cast<std::size_t>(bh / NH), h = static_cast<std::size_t>(bh % NH);
      const float* base = qkv + b * t_ * c3;
      float* dbase = dqkv + b * t_ * c3;
      for (std::size_t t = 0; t < t_; ++t) {
        const float* row = att + (static_cast<std::size_t>(bh) * t_ + t) * t_;
        const float* d = dout + (b * t_ + t) * c_ + h * hs;
        const float* q = base + t * c3 + h * hs;
        float* dq = dbase + t * c3 + h * hs;
        // dp = dout . v ; dv += p * dout
        float p_dp = 0.0f;
        for (std::size_t t2 = 0; t2 <= t; ++t2) {
          const float* v = base + t2 * c3 + 2 * c_ + h * hs;
          float* dv = dbase + t2 * c3 + 2 * c_ + h * hs;
          const float p = row[t2];
          float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
          for (std::size_t i = 0; i < hs; ++i) {
            dot += d[i] * v[i];
            dv[i] += p * d[i];
          }
          dp[t2] = dot;
          p_dp += p * dot;
        }
        // softmax backward: ds = p * (dp - sum(p * dp)); then through the scaled q k^T.
        for (std::size_t t2 = 0; t2 <= t; ++t2) {
          const float ds = row[t2] * (dp[t2] - p_dp) * scale;
          const float* k = base + t2 * c3 + c_ + h * hs;
          float* dk = dbase + t2 * c3 + c_ + h * hs;
#pragma omp simd
          for (std::size_t i = 0; i < hs; ++i) {
            dq[i] += ds * k[i];
            dk[i] += ds * q[i];
          }
        }
      }
    }
  }
}

}  // namespace gpudirect::train::cpu
