// Launch geometry of the CUDA model's kernels, as plain constexpr arithmetic so the host tests can
// check it (a wrong grid silently skips rows or writes past a buffer). Used by the .cu files.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace gpudirect::train::cuda {

inline constexpr int kWarpSize = 32;
inline constexpr int kThreadsPerBlock = 256;
inline constexpr int kWarpsPerBlock = kThreadsPerBlock / kWarpSize;
// Grid-stride kernels need no more blocks than this to fill any current GPU (132 SMs x 16 blocks).
inline constexpr std::size_t kMaxGridStrideBlocks = 4096;
// Attention keeps a query's head slice in registers: each lane holds up to this many of its channels,
// so head_size (C / heads) may be at most 32 x kMaxChannelsPerLane.
inline constexpr int kMaxChannelsPerLane = 8;

constexpr std::size_t ceil_div(std::size_t n, std::size_t d) { return (n + d - 1) / d; }

// Blocks for a grid-stride loop over n elements with kThreadsPerBlock threads (at least 1).
constexpr unsigned grid_stride_blocks(std::size_t n) {
  const std::size_t blocks = ceil_div(n == 0 ? 1 : n, kThreadsPerBlock);
  return static_cast<unsigned>(blocks < kMaxGridStrideBlocks ? blocks : kMaxGridStrideBlocks);
}

// Blocks when one warp handles one row: every row gets a warp, no more than one block is partial.
constexpr unsigned warp_per_row_blocks(std::size_t rows) { return static_cast<unsigned>(ceil_div(rows == 0 ? 1 : rows, kWarpsPerBlock)); }

// Channels each lane holds for a head of `head_size` channels (lane l holds l, l+32, ...).
constexpr int channels_per_lane(int head_size) { return static_cast<int>(ceil_div(static_cast<std::size_t>(head_size), kWarpSize)); }

inline void require_head_size_fits(int head_size) {
  if (head_size < 1 || channels_per_lane(head_size) > kMaxChannelsPerLane)
    throw std::invalid_argument("gpudirect-launch train: the CUDA attention kernel takes head sizes 1.." +
                                std::to_string(kWarpSize * kMaxChannelsPerLane) + " (width / heads); this model has " +
                                std::to_string(head_size) + " (raise --heads)");
}

// Column reductions (layernorm weight/bias gradients) use 32 x 32 thread blocks: 32 columns per block.
inline constexpr int kColumnsPerBlock = 32;
constexpr unsigned column_blocks(std::size_t columns) {
  return static_cast<unsigned>(ceil_div(columns == 0 ? 1 : columns, kColumnsPerBlock));
}

}  // namespace gpudirect::train::cuda
