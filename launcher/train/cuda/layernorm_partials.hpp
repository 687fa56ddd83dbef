// `train --layernorm-all-sms` (speed_options.hpp): layernorm backward's weight and bias gradients over
// a grid of column blocks x row chunks (enough blocks for every SM, not C / 32 of them), each block
// writing its partial sums to scratch, then one pass that adds a column's partials in chunk order. No
// float atomics: for given shapes the order of every addition is fixed. The partition, each thread's
// rows and both fixed-order sums are written once, here, for the kernels (layernorm.cu) and for the
// host test that emulates them (tests/unit/test_train_cuda_layernorm_partials.cpp).
#pragma once

#include "train/cuda/host_device.hpp"
#include "train/cuda/launch_geometry.hpp"

#include <cstddef>

namespace gpudirect::train::cuda {

// The blocks the first pass aims at: 2 per SM of a 132-SM GPU. A constant, not the device's SM count,
// so the scratch size (and the memory plan) depends on the shapes only.
inline constexpr std::size_t kLayernormPartialBlocks = 264;

struct LayernormPartition {
  std::size_t column_blocks = 1;   // kColumnsPerBlock columns each (column_blocks())
  std::size_t row_chunks = 1;      // blocks along the rows; chunk k holds rows [k * rows_per_chunk, ...)
  std::size_t rows_per_chunk = 1;  // at least kWarpSize, so no thread row of a block idles
};

constexpr LayernormPartition layernorm_partition(std::size_t rows, std::size_t columns) {
  const std::size_t r = rows == 0 ? 1 : rows, blocks = column_blocks(columns);
  std::size_t chunks = ceil_div(kLayernormPartialBlocks, blocks);
  const std::size_t most = r / kWarpSize == 0 ? 1 : r / kWarpSize;  // chunks of at least kWarpSize rows
  if (chunks > most) chunks = most;
  const std::size_t per = ceil_div(r, chunks);
  return {blocks, ceil_div(r, per), per};
}

// Scratch floats: the dweight partials (row_chunks x C) then the dbias partials (row_chunks x C).
constexpr std::size_t layernorm_partials_floats(std::size_t rows, std::size_t columns) {
  return 2 * layernorm_partition(rows, columns).row_chunks * columns;
}

// The rows thread row y (0..31) of chunk k's blocks adds, in this order: begin + y, + 32, ... < end.
template <typename Row>
GPUDIRECT_HOST_DEVICE void for_each_chunk_row(const LayernormPartition& p, std::size_t rows, std::size_t chunk, int y, const Row& row) {
  const std::size_t begin = chunk * p.rows_per_chunk, end = begin + p.rows_per_chunk < rows ? begin + p.rows_per_chunk : rows;
  for (std::size_t n = begin + static_cast<std::size_t>(y); n < end; n += kWarpSize) row(n);
}

// sum of at(0), at(1), ..., at(count - 1), added left to right from 0.0f: the block's 32 thread rows,
// and the second pass's row_chunks partials of a column.
template <typename At>
GPUDIRECT_HOST_DEVICE float fixed_order_sum(std::size_t count, const At& at) {
  float s = 0.0f;
  for (std::size_t k = 0; k < count; ++k) s += at(k);
  return s;
}

// One row's term of dweight, as the reference kernel writes it (dout * (x - mean) * rstd); dbias adds dout.
GPUDIRECT_HOST_DEVICE inline float layernorm_dweight_term(float dout, float x, float mean, float rstd) { return dout * (x - mean) * rstd; }

}  // namespace gpudirect::train::cuda
