// Row-major products through column-major cuBLAS: a row-major [R, K] matrix is the column-major
// [K, R] one, so out = inp W^T (row-major) is out^T = W inp^T (column-major): gemm(T, N) with
// m = OC, n = N, k = IC; the gradients follow the same way. bf16 inputs, fp32 compute (tensor cores).
#include "train/cuda/cuda_check.cuh"
#include "train/cuda/kernels.cuh"
#include "train/cuda/launch_geometry.hpp"

namespace gpudirect::train::cuda {
namespace {

template <typename T>
__global__ void broadcast_rows_kernel(T* out, const float* bias, std::size_t n, int OC) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = static_cast<T>(bias[i % OC]);
}

void gemm(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const bf16* a, int lda, const bf16* b,
          int ldb, void* c, cudaDataType_t c_type, int ldc, float beta) {
  const float alpha = 1.0f;
  GPUDIRECT_CUBLAS(cublasGemmEx(handle, ta, tb, m, n, k, &alpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &beta, c, c_type, ldc,
                                CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

void matmul_forward(cublasHandle_t handle, void* out, cudaDataType_t out_type, const bf16* inp, const bf16* weight, const float* bias,
                    int N, int IC, int OC, cudaStream_t stream) {
  GPUDIRECT_CUBLAS(cublasSetStream(handle, stream));
  float beta = 0.0f;
  if (bias != nullptr) {
    // Start from the bias and let the product accumulate onto it, as the CPU path does.
    const std::size_t n = static_cast<std::size_t>(N) * OC;
    if (out_type == CUDA_R_32F)
      broadcast_rows_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(static_cast<float*>(out), bias, n, OC);
    else
      broadcast_rows_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(static_cast<bf16*>(out), bias, n, OC);
    GPUDIRECT_LAUNCHED();
    beta = 1.0f;
  }
  gemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, OC, N, IC, weight, IC, inp, IC, out, out_type, OC, beta);
}

void matmul_backward(cublasHandle_t handle, void* dinp, cudaDataType_t dinp_type, float* dweight, float* dbias, const bf16* dout,
                     const bf16* inp, const bf16* weight, const bf16* ones, int N, int IC, int OC, cudaStream_t stream) {
  GPUDIRECT_CUBLAS(cublasSetStream(handle, stream));
  // dinp[N, IC] = dout[N, OC] weight[OC, IC]  <=>  dinp^T = weight^T dout^T (column-major)
  if (dinp != nullptr) gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, IC, N, OC, weight, IC, dout, OC, dinp, dinp_type, IC, 0.0f);
  // dweight[OC, IC] += dout^T inp  <=>  dweight^T += inp^T dout (column-major)
  gemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, IC, OC, N, inp, IC, dout, OC, dweight, CUDA_R_32F, IC, 1.0f);
  // dbias[OC] += dout^T 1: a product with a column of ones, accumulated in fp32
  if (dbias != nullptr) gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, OC, 1, N, dout, OC, ones, N, dbias, CUDA_R_32F, OC, 1.0f);
}

}  // namespace gpudirect::train::cuda
