// A linear layer through cuBLAS: the products of gemm_plan.hpp with bf16 inputs and fp32 compute
// (tensor cores), outputs in fp32 or bf16.
#include "train/cuda/cuda_check.cuh"
#include "train/cuda/gemm_plan.hpp"
#include "train/cuda/kernels.cuh"
#include "train/cuda/launch_geometry.hpp"

#include <stdexcept>

namespace gpudirect::train::cuda {
namespace {

template <typename T>
__global__ void broadcast_rows_kernel(T* out, const float* bias, std::size_t n, int OC) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = static_cast<T>(bias[i % OC]);
}

using DeviceOperands = Operands<bf16>;

void run(cublasHandle_t handle, const GemmPlan& p, const DeviceOperands& operands, void* c, cudaDataType_t c_type) {
  const float alpha = 1.0f;
  GPUDIRECT_CUBLAS(cublas().gemm_ex(handle, p.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, p.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, p.m, p.n,
                                    p.k, &alpha, operands[p.a], CUDA_R_16BF, p.lda, operands[p.b], CUDA_R_16BF, p.ldb, &p.beta, c, c_type,
                                    p.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

void matmul_forward(cublasHandle_t handle, void* out, cudaDataType_t out_type, const bf16* inp, const bf16* weight, const float* bias,
                    int N, int IC, int OC, cudaStream_t stream, int stride) {
  GPUDIRECT_CUBLAS(cublas().set_stream(handle, stream));
  if (bias != nullptr) {
    if (stride > 0 && stride != OC) throw std::invalid_argument("matmul_forward: a bias needs unpadded rows");
    // Start from the bias and let the product accumulate onto it, as the CPU path does.
    const std::size_t n = static_cast<std::size_t>(N) * OC;
    if (out_type == CUDA_R_32F)
      broadcast_rows_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(static_cast<float*>(out), bias, n, OC);
    else
      broadcast_rows_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(static_cast<bf16*>(out), bias, n, OC);
    GPUDIRECT_LAUNCHED();
  }
  DeviceOperands operands;
  operands.inp = inp;
  operands.weight = weight;
  run(handle, forward_plan(N, IC, OC, bias != nullptr, stride), operands, out, out_type);
}

void matmul_backward(cublasHandle_t handle, void* dinp, cudaDataType_t dinp_type, float* dweight, float* dbias, const bf16* dout,
                     const bf16* inp, const bf16* weight, const bf16* ones, int N, int IC, int OC, cudaStream_t stream, int stride) {
  GPUDIRECT_CUBLAS(cublas().set_stream(handle, stream));
  const DeviceOperands operands{inp, weight, dout, ones};
  if (dinp != nullptr) run(handle, dinp_plan(N, IC, OC, stride), operands, dinp, dinp_type);
  run(handle, dweight_plan(N, IC, OC, stride), operands, dweight, CUDA_R_32F);
  if (dbias != nullptr) run(handle, dbias_plan(N, OC), operands, dbias, CUDA_R_32F);
}

}  // namespace gpudirect::train::cuda
