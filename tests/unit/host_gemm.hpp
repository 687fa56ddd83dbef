// A column-major gemm on the host with cuBLAS's semantics, for the tests that run the CUDA model's
// cuBLAS plans (train/cuda/gemm_plan.hpp) without a GPU.
#pragma once

#include "train/cuda/gemm_plan.hpp"

#include <cstddef>

namespace gpudirect::testing {

// C (m x n, column-major, ldc) = op(A) op(B) + beta C, as cublasGemmEx with alpha = 1. Reads only
// what cuBLAS reads: k entries of each column of op(A) and op(B), and C only when beta is not 0.
inline void host_gemm(const train::cuda::GemmPlan& p, const train::cuda::Operands<float>& operands, float* c) {
  const float* a = operands[p.a];
  const float* b = operands[p.b];
  for (int j = 0; j < p.n; ++j)
    for (int i = 0; i < p.m; ++i) {
      double sum = 0;
      for (int q = 0; q < p.k; ++q) {
        const float x = p.transpose_a ? a[q + static_cast<std::size_t>(i) * p.lda] : a[i + static_cast<std::size_t>(q) * p.lda];
        const float y = p.transpose_b ? b[j + static_cast<std::size_t>(q) * p.ldb] : b[q + static_cast<std::size_t>(j) * p.ldb];
        sum += static_cast<double>(x) * y;
      }
      float& out = c[i + static_cast<std::size_t>(j) * p.ldc];
      out = static_cast<float>((p.beta == 0 ? 0.0 : p.beta * out) + sum);
    }
}

}  // namespace gpudirect::testing
