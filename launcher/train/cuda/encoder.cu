#include "train/cuda/cuda_check.cuh"
#include "train/cuda/kernels.cuh"
#include "train/cuda/launch_geometry.hpp"

namespace gpudirect::train::cuda {
namespace {

__global__ void encoder_forward_kernel(float* out, const std::int32_t* tokens, const float* wte, const float* wpe, std::size_t n, int T,
                                       int C) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t bt = i / C, c = i % C;
    out[i] = wte[static_cast<std::size_t>(tokens[bt]) * C + c] + wpe[(bt % T) * C + c];
  }
}

// Grid (groups, column tiles): one token's rows, summed in position order, added once.
__global__ void wte_backward_kernel(float* dwte, const float* dout, const std::int32_t* group_tokens, const std::int32_t* group_offsets,
                                    const std::int32_t* group_positions, int C) {
  const int group = blockIdx.x;
  const int c = blockIdx.y * blockDim.x + threadIdx.x;
  if (c >= C) return;
  float sum = 0.0f;
  for (int i = group_offsets[group]; i < group_offsets[group + 1]; ++i) sum += dout[static_cast<std::size_t>(group_positions[i]) * C + c];
  dwte[static_cast<std::size_t>(group_tokens[group]) * C + c] += sum;
}

// One thread per (t, c): the B rows of position t, in batch order.
__global__ void wpe_backward_kernel(float* dwpe, const float* dout, int B, int T, int C) {
  const std::size_t n = static_cast<std::size_t>(T) * C;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float sum = 0.0f;
    for (int b = 0; b < B; ++b) sum += dout[static_cast<std::size_t>(b) * n + i];
    dwpe[i] += sum;
  }
}

}  // namespace

void encoder_forward(float* out, const std::int32_t* tokens, const float* wte, const float* wpe, int B, int T, int C, cudaStream_t stream) {
  const std::size_t n = static_cast<std::size_t>(B) * T * C;
  encoder_forward_kernel<<<grid_stride_blocks(n), kThreadsPerBlock, 0, stream>>>(out, tokens, wte, wpe, n, T, C);
  GPUDIRECT_LAUNCHED();
}

void encoder_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* group_tokens, const std::int32_t* group_offsets,
                      const std::int32_t* group_positions, int groups, int B, int T, int C, cudaStream_t stream) {
  if (groups > 0) {
    const dim3 grid(static_cast<unsigned>(groups), static_cast<unsigned>(ceil_div(static_cast<std::size_t>(C), kThreadsPerBlock)));
    wte_backward_kernel<<<grid, kThreadsPerBlock, 0, stream>>>(dwte, dout, group_tokens, group_offsets, group_positions, C);
    GPUDIRECT_LAUNCHED();
  }
  wpe_backward_kernel<<<grid_stride_blocks(static_cast<std::size_t>(T) * C), kThreadsPerBlock, 0, stream>>>(dwpe, dout, B, T, C);
  GPUDIRECT_LAUNCHED();
}

}  // namespace gpudirect::train::cuda
