// `train --vector-loads` (speed_options.hpp): the element-wise kernels (GELU forward and backward, the
// residual add, fp32 -> bf16) move 16 bytes per load and store (8 bf16 or 4 fp32 in a pack) where
// every pointer is 16-byte aligned, and the last n % width elements one by one (the scalar tail);
// unaligned pointers take the scalar loop for everything. The split and each thread's share of the
// launch are written once, here, for the kernels (elementwise.cu) and for the host test that emulates
// them (tests/unit/test_train_cuda_vector_loads.cpp).
#pragma once

#include "train/cuda/host_device.hpp"
#include "train/cuda/launch_geometry.hpp"

#include <cstddef>
#include <cstdint>

namespace gpudirect::train::cuda {

inline constexpr std::size_t kVectorBytes = 16;

struct VectorSplit {
  std::size_t packs = 0;       // packs of `width` elements: elements [0, packs * width)
  std::size_t tail_begin = 0;  // first element done one by one (packs * width)
};

// n elements in packs of `width` when every pointer is aligned to kVectorBytes, else all scalar.
GPUDIRECT_HOST_DEVICE constexpr VectorSplit vector_split(std::size_t n, std::size_t width, bool aligned) {
  return aligned ? VectorSplit{n / width, n / width * width} : VectorSplit{0, 0};
}

inline bool vector_aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % kVectorBytes == 0; }

// Blocks of kThreadsPerBlock for one grid-stride loop over the packs and the tail.
constexpr unsigned vector_blocks(std::size_t n, std::size_t width, bool aligned) {
  const VectorSplit s = vector_split(n, width, aligned);
  return grid_stride_blocks(s.packs + (n - s.tail_begin));
}

// One thread's share: packs first, first + step, ... (pack(at) does elements at .. at + width - 1),
// then the tail elements tail_begin + first, + step, ... (scalar(i) does element i).
template <typename Pack, typename Scalar>
GPUDIRECT_HOST_DEVICE void for_each_pack_then_tail(std::size_t n, std::size_t width, bool aligned, std::size_t first, std::size_t step,
                                                   const Pack& pack, const Scalar& scalar) {
  const VectorSplit s = vector_split(n, width, aligned);
  for (std::size_t p = first; p < s.packs; p += step) pack(p * width);
  for (std::size_t i = s.tail_begin + first; i < n; i += step) scalar(i);
}

}  // namespace gpudirect::train::cuda
