// A column-major gemm on the host with cuBLAS's semantics, for the tests that run the CUDA model's
// cuBLAS plans (train/cuda/gemm_plan.hpp, attention_plan.hpp) without a GPU.
#pragma once

#include "train/cuda/gemm_plan.hpp"

#include <cstddef>

namespace gpudirect::testing {

// C (m x n, column-major, ldc) = op(A) op(B) + beta C, as cublasGemmEx with alpha = 1. Reads only
// what cuBLAS reads: k entries of each column of op(A) and op(B), and C only when beta is not 0.
inline void host_gemm(bool transpose_a, bool transpose_b, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float beta,
                      float* c, int ldc) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int q = 0; q < k; ++q) {
        const float x = transpose_a ? a[q + static_cast<std::size_t>(i) * lda] : a[i + static_cast<std::size_t>(q) * lda];
        const float y = transpose_b ? b[j + static_cast<std::size_t>(q) * ldb] : b[q + static_cast<std::size_t>(j) * ldb];
        sum += static_cast<double>(x) * y;
      }
      float& out = c[i + static_cast<std::size_t>(j) * ldc];
      out = static_cast<float>((beta == 0 ? 0.0 : beta * out) + sum);
    }
}

// The same for a linear layer's plan.
inline void host_gemm(const train::cuda::GemmPlan& p, const train::cuda::Operands<float>& operands, float* c) {
  host_gemm(p.transpose_a, p.transpose_b, p.m, p.n, p.k, operands[p.a], p.lda, operands[p.b], p.ldb, p.beta, c, p.ldc);
}

}  // namespace gpudirect::testing
