#include "train/cpu/attention.hpp"

#include "train/cpu/fast_math.hpp"

#include <cblas.h>

#include <cmath>
#include <cstddef>

namespace gpudirect::train::cpu {

// Per (batch, head) the products q k^T, p v and their gradients are strided sub-matrices of qkv,
// out and dout, so they go to cblas_sgemm with leading dimensions 3C and C and no copies. The
// scores are computed for the full T x T square and the upper triangle is masked: twice the
// causal work, but at gemm speed rather than the speed of dot-product loops. OpenBLAS threads each
// product; OpenMP threads the row-wise softmax.

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
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, scale, q, 3 * C, k, 3 * C, 0.0f, p, T);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < T; ++t) {
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
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, p, T, v, 3 * C, 0.0f,
                out + b * t_ * c_ + h * static_cast<std::size_t>(hs), C);
  }
}

void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv, const float* att, int B, int T,
                        int C, int NH, int threads) {
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
    // dP = dO V^T ; dV += P^T dO
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, d, C, v, 3 * C, 0.0f, ds, T);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, p, T, d, C, 1.0f, dv, 3 * C);
    // softmax backward, row by row: dS = P * (dP - sum(P * dP)) * scale (zero where P is masked).
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < T; ++t) {
      const float* prow = p + static_cast<std::size_t>(t) * t_;
      float* row = ds + static_cast<std::size_t>(t) * t_;
      const int n = t + 1;
      float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
      for (int i = 0; i < n; ++i) dot += prow[i] * row[i];
#pragma omp simd
      for (int i = 0; i < n; ++i) row[i] = prow[i] * (row[i] - dot) * scale;
      for (int i = n; i < T; ++i) row[i] = 0.0f;
    }
    // dQ += dS K ; dK += dS^T Q
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, ds, T, k, 3 * C, 1.0f, dq, 3 * C);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, ds, T, q, 3 * C, 1.0f, dk, 3 * C);
  }
}

}  // namespace gpudirect::train::cpu
