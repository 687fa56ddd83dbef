#include "train/cpu/attention.hpp"

#include "train/cpu/fast_math.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace gpudirect::train::cpu {

// Per (batch, head) the products q k^T, p v and their gradients are strided sub-matrices of qkv,
// out and dout, so they go to cblas_sgemm with leading dimensions 3C and C and no copies. Queries
// are taken in blocks of kQueryBlock rows; a block only meets the keys up to its last row, so the
// gemms skip most of the masked upper triangle (62% of the full square's work at T = 256) and the
// few masked entries left inside a block are zeroed. OpenBLAS threads each product; OpenMP threads
// the row-wise softmax.
namespace {
constexpr int kQueryBlock = 64;
}

void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH, int threads) {
  const int hs = C / NH;
  const std::size_t c3 = 3 * static_cast<std::size_t>(C), c_ = static_cast<std::size_t>(C);
  const std::size_t t_ = static_cast<std::size_t>(T);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  for (int bh = 0; bh < B * NH; ++bh) {
    const std::size_t b = static_cast<std::size_t>(bh / NH), h = static_cast<std::size_t>(bh % NH);
    const float* q = qkv + b * t_ * c3 + h * static_cast<std::size_t>(hs);
    const float* k = q + c_;
    const float* v = q + 2 * c_;
    float* p = att + static_cast<std::size_t>(bh) * t_ * t_;
    float* o = out + b * t_ * c_ + h * static_cast<std::size_t>(hs);
    for (int r0 = 0; r0 < T; r0 += kQueryBlock) {
      const int rows = std::min(kQueryBlock, T - r0), keys = r0 + rows;
      const std::size_t r = static_cast<std::size_t>(r0);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, keys, hs, scale, q + r * c3, 3 * C, k, 3 * C, 0.0f, p + r * t_, T);
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int t = r0; t < r0 + rows; ++t) {
        float* row = p + static_cast<std::size_t>(t) * t_;
        const int n = t + 1;  // keys 0..t
        float max = row[0];
        for (int i = 1; i < n; ++i) max = row[i] > max ? row[i] : max;
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (int i = 0; i < n; ++i) {
          row[i] = exp_approx(row[i] - max);
          sum += row[i];
        }
        const float inv = 1.0f / sum;
#pragma omp simd
        for (int i = 0; i < n; ++i) row[i] *= inv;
        for (int i = n; i < T; ++i) row[i] = 0.0f;
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, hs, keys, 1.0f, p + r * t_, T, v, 3 * C, 0.0f, o + r * c_, C);
    }
  }
}

void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B, int T, int C, int NH,
                        int threads) {
  const int hs = C / NH;
  const std::size_t c3 = 3 * static_cast<std::size_t>(C), c_ = static_cast<std::size_t>(C);
  const std::size_t t_ = static_cast<std::size_t>(T);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  float* ds = scratch;  // dP, then dS in place
  for (int bh = 0; bh < B * NH; ++bh) {
    const std::size_t b = static_cast<std::size_t>(bh / NH), h = static_cast<std::size_t>(bh % NH);
    const std::size_t head = b * t_ * c3 + h * static_cast<std::size_t>(hs);
    const float *q = qkv + head, *k = q + c_, *v = q + 2 * c_;
    float *dq = dqkv + head, *dk = dq + c_, *dv = dq + 2 * c_;
    const float* d = dout + b * t_ * c_ + h * static_cast<std::size_t>(hs);
    const float* p = att + static_cast<std::size_t>(bh) * t_ * t_;
    for (int r0 = 0; r0 < T; r0 += kQueryBlock) {
      const int rows = std::min(kQueryBlock, T - r0), keys = r0 + rows;
      const std::size_t r = static_cast<std::size_t>(r0);
      const float* pb = p + r * t_;
      float* db = ds + r * t_;
      // dP = dO V^T ; dV += P^T dO
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, keys, hs, 1.0f, d + r * c_, C, v, 3 * C, 0.0f, db, T);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, keys, hs, rows, 1.0f, pb, T, d + r * c_, C, 1.0f, dv, 3 * C);
      // softmax backward, row by row: dS = P * (dP - sum(P * dP)) * scale, over keys 0..t.
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int t = r0; t < r0 + rows; ++t) {
        const float* prow = p + static_cast<std::size_t>(t) * t_;
        float* row = ds + static_cast<std::size_t>(t) * t_;
        const int n = t + 1;
        float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
        for (int i = 0; i < n; ++i) dot += prow[i] * row[i];
#pragma omp simd
        for (int i = 0; i < n; ++i) row[i] = prow[i] * (row[i] - dot) * scale;
        for (int i = n; i < keys; ++i) row[i] = 0.0f;
      }
      // dQ += dS K ; dK += dS^T Q
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, hs, keys, 1.0f, db, T, k, 3 * C, 1.0f, dq + r * c3, 3 * C);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, keys, hs, rows, 1.0f, db, T, q + r * c3, 3 * C, 1.0f, dk, 3 * C);
    }
  }
}

}  // namespace gpudirect::train::cpu
