#include "train/cuda/cuda_check.cuh"
#include "train/cuda/kernels.cuh"
#include "train/cuda/multi_tensor_adamw.hpp"
#include "train/cuda/reductions.cuh"

#include <cmath>

namespace gpudirect::train::cuda {
namespace {

// The update of ../optimizer.cpp, element by element, in fp32: one tensor, one piece
// (AdamWElement, multi_tensor_adamw.hpp, is the one writing of the update).
__global__ void adamw_kernel(MultiTensorPiece tensor, std::size_t n, AdamWElement update) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    update(tensor, i);
}

// Every owned piece in one launch (multi_tensor_adamw.hpp): the same update as adamw_kernel.
__global__ void adamw_multi_tensor_kernel(const MultiTensorPiece* table, int count, std::uint64_t total, AdamWElement update) {
  for_each_owned_element(table, count, total, blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x,
                         static_cast<std::uint64_t>(gridDim.x) * blockDim.x, update);
}

// A fixed grid (kSumOfSquaresBlocks x kThreadsPerBlock) whatever the GPU, so the order of the
// additions, and the result, are the same on every device and every run.
__global__ void sum_of_squares_partial_kernel(double* partials, const float* x, std::size_t n) {
  __shared__ double shared[kThreadsPerBlock / kWarpSize];
  double sum = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    sum += static_cast<double>(x[i]) * x[i];
  sum = block_sum(sum, shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void sum_partials_kernel(double* result, const double* partials, int count, bool accumulate) {
  __shared__ double shared[kThreadsPerBlock / kWarpSize];
  double sum = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
  sum = block_sum(sum, shared);
  if (threadIdx.x == 0) *result = (accumulate ? *result : 0.0) + sum;
}

}  // namespace

void adamw_update(float* parameters, const float* gradients, float* m, float* v, std::size_t count, float lr, float beta1, float beta2,
                  float epsilon, float weight_decay, float grad_scale, float correction1, float correction2, cudaStream_t stream) {
  if (count == 0) return;
  const MultiTensorPiece tensor{.begin = 0, .offset = 0, .state = 0, .decay = weight_decay};
  const AdamWElement update{parameters, gradients, m, v, lr, beta1, beta2, epsilon, grad_scale, correction1, correction2};
  adamw_kernel<<<grid_stride_blocks(count), kThreadsPerBlock, 0, stream>>>(tensor, count, update);
  GPUDIRECT_LAUNCHED();
}

void adamw_step(const std::vector<AdamWPiece>& pieces, float* p, const float* g, float* m, float* v, const AdamWSettings& settings,
                float lr, float grad_scale, long t, cudaStream_t stream) {
  // The same float expressions as AdamW::step, so both round the corrections alike.
  const float correction1 = 1.0f - std::pow(settings.beta1, static_cast<float>(t));
  const float correction2 = 1.0f - std::pow(settings.beta2, static_cast<float>(t));
  for (const AdamWPiece& piece : pieces)
    adamw_update(p + piece.offset, g + piece.offset, m + piece.state, v + piece.state, piece.count, lr, settings.beta1, settings.beta2,
                 settings.epsilon, piece.decay ? settings.weight_decay : 0.0f, grad_scale, correction1, correction2, stream);
}

void adamw_step_multi_tensor(const MultiTensorPiece* table, int count, std::uint64_t total, float* p, const float* g, float* m, float* v,
                             const AdamWSettings& settings, float lr, float grad_scale, long t, cudaStream_t stream) {
  if (total == 0) return;
  const float correction1 = 1.0f - std::pow(settings.beta1, static_cast<float>(t));
  const float correction2 = 1.0f - std::pow(settings.beta2, static_cast<float>(t));
  const AdamWElement update{p, g, m, v, lr, settings.beta1, settings.beta2, settings.epsilon, grad_scale, correction1, correction2};
  adamw_multi_tensor_kernel<<<grid_stride_blocks(total), kThreadsPerBlock, 0, stream>>>(table, count, total, update);
  GPUDIRECT_LAUNCHED();
}

void sum_of_squares(double* result, double* partials, const float* values, std::size_t count, bool accumulate, cudaStream_t stream) {
  sum_of_squares_partial_kernel<<<kSumOfSquaresBlocks, kThreadsPerBlock, 0, stream>>>(partials, values, count);
  GPUDIRECT_LAUNCHED();
  sum_partials_kernel<<<1, kThreadsPerBlock, 0, stream>>>(result, partials, kSumOfSquaresBlocks, accumulate);
  GPUDIRECT_LAUNCHED();
}

}  // namespace gpudirect::train::cuda
