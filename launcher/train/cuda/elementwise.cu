#include "train/cuda/cuda_check.cuh"
#include "train/cuda/kernels.cuh"
#include "train/cuda/launch_geometry.hpp"

namespace gpudirect::train::cuda {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;

#define GPUDIRECT_GRID_STRIDE(i, n)                                                              \
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)

__global__ void gelu_forward_kernel(bf16* out, const bf16* inp, std::size_t n) {
  GPUDIRECT_GRID_STRIDE(i, n) {
    const float x = __bfloat162float(inp[i]);
    out[i] = __float2bfloat16_rn(0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + kCubic * x * x * x))));
  }
}

__global__ void gelu_backward_kernel(bf16* dinp, const bf16* inp, const bf16* dout, std::size_t n) {
  GPUDIRECT_GRID_STRIDE(i, n) {
    const float x = __bfloat162float(inp[i]);
    const float th = tanhf(kSqrt2OverPi * (x + kCubic * x * x * x));
    const float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
    dinp[i] = __float2bfloat16_rn(__bfloat162float(dout[i]) * (0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du));
  }
}

__global__ void residual_forward_kernel(float* out, const float* a, const float* b, std::size_t n) {
  GPUDIRECT_GRID_STRIDE(i, n) out[i] = a[i] + b[i];
}

__global__ void to_bf16_kernel(bf16* out, const float* inp, std::size_t n) {
  GPUDIRECT_GRID_STRIDE(i, n) out[i] = __float2bfloat16_rn(inp[i]);
}

__global__ void fill_bf16_kernel(bf16* out, float value, std::size_t n) { GPUDIRECT_GRID_STRIDE(i, n) out[i] = __float2bfloat16_rn(value); }

}  // namespace

void gelu_forward(bf16* out, const bf16* inp, std::size_t n, cudaStream_t stream) {
  gelu_forward_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(out, inp, n);
  GPUDIRECT_LAUNCHED();
}

void gelu_backward(bf16* dinp, const bf16* inp, const bf16* dout, std::size_t n, cudaStream_t stream) {
  gelu_backward_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(dinp, inp, dout, n);
  GPUDIRECT_LAUNCHED();
}

void residual_forward(float* out, const float* a, const float* b, std::size_t n, cudaStream_t stream) {
  residual_forward_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(out, a, b, n);
  GPUDIRECT_LAUNCHED();
}

void to_bf16(bf16* out, const float* inp, std::size_t n, cudaStream_t stream) {
  to_bf16_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(out, inp, n);
  GPUDIRECT_LAUNCHED();
}

void fill_bf16(bf16* out, float value, std::size_t n, cudaStream_t stream) {
  fill_bf16_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(out, value, n);
  GPUDIRECT_LAUNCHED();
}

}  // namespace gpudirect::train::cuda
