// Work splitting shared by the CPU kernels. Reductions over rows (bias, norm and embedding
// gradients) are split by column blocks instead of rows: each thread owns its columns, so there are
// no races and the summation order does not depend on the thread count.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>

namespace gpudirect::train::cpu {

inline constexpr int kColumnBlock = 32;

inline int column_blocks(int columns) { return (columns + kColumnBlock - 1) / kColumnBlock; }

inline std::pair<std::size_t, std::size_t> column_block(int block, int columns) {
  const int begin = block * kColumnBlock;
  return {static_cast<std::size_t>(begin), static_cast<std::size_t>(std::min(columns, begin + kColumnBlock))};
}

}  // namespace gpudirect::train::cpu
