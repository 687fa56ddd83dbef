#include "train/cpu/matmul.hpp"

#include "train/cpu/parallel.hpp"

#include <cblas.h>

#include <cstddef>

namespace gpudirect::train::cpu {

void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int IC, int OC, int threads) {
  const std::size_t oc = static_cast<std::size_t>(OC);
  float beta = 0.0f;
  if (bias != nullptr) {
    // Start from the bias and let gemm accumulate onto it (beta = 1): one pass over out instead of two.
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int n = 0; n < N; ++n) {
      float* o = out + static_cast<std::size_t>(n) * oc;
      for (std::size_t i = 0; i < oc; ++i) o[i] = bias[i];
    }
    beta = 1.0f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, IC, 1.0f, inp, IC, weight, IC, beta, out, OC);
}

void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp, const float* weight, int N, int IC,
                     int OC, int threads) {
  if (dinp != nullptr) {
    // dinp[N, IC] += dout[N, OC] @ weight[OC, IC]
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, IC, OC, 1.0f, dout, OC, weight, IC, 1.0f, dinp, IC);
  }
  // dweight[OC, IC] += dout^T[OC, N] @ inp[N, IC]
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, IC, N, 1.0f, dout, OC, inp, IC, 1.0f, dweight, IC);
  if (dbias != nullptr) {
    const std::size_t oc = static_cast<std::size_t>(OC);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int blk = 0; blk < column_blocks(OC); ++blk) {
      const auto [c0, c1] = column_block(blk, OC);
      for (int n = 0; n < N; ++n) {
        const float* d = dout + static_cast<std::size_t>(n) * oc;
        for (std::size_t i = c0; i < c1; ++i) dbias[i] += d[i];
      }
    }
  }
}

}  // namespace gpudirect::train::cpu
