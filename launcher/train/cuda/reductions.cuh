// Warp and block sums and maxima for the kernels (fixed order: results do not depend on timing).
#pragma once

#include "train/cuda/launch_geometry.hpp"

namespace gpudirect::train::cuda {

template <typename T>
__device__ inline T warp_sum(T value) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

__device__ inline float warp_max(float value) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

// Every thread of the block gets the result; `shared` holds one T per warp. Block size: a multiple
// of 32, at most 1024.
template <typename T>
__device__ inline T block_sum(T value, T* shared) {
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize, warps = blockDim.x / kWarpSize;
  value = warp_sum(value);
  __syncthreads();  // shared may still be read by a previous call
  if (lane == 0) shared[warp] = value;
  __syncthreads();
  T total = 0;
  for (int w = 0; w < warps; ++w) total += shared[w];
  return total;
}

__device__ inline float block_max(float value, float* shared) {
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize, warps = blockDim.x / kWarpSize;
  value = warp_max(value);
  __syncthreads();
  if (lane == 0) shared[warp] = value;
  __syncthreads();
  float best = shared[0];
  for (int w = 1; w < warps; ++w) best = fmaxf(best, shared[w]);
  return best;
}

}  // namespace gpudirect::train::cuda
