// Launch geometry of the CUDA kernels (train/cuda/launch_geometry.hpp): every row gets a warp, grid
// strides stay within the cap, attention's per-lane registers hold a head.
#include <catch2/catch.hpp>

#include "train/cuda/launch_geometry.hpp"

using namespace gpudirect::train::cuda;

TEST_CASE("launch geometry: a warp per row covers every row with at most one partial block", "[train][cuda]") {
  for (std::size_t rows = 1; rows <= 2000; ++rows) {
    const std::size_t blocks = warp_per_row_blocks(rows);
    REQUIRE(blocks * kWarpsPerBlock >= rows);
    REQUIRE((blocks - 1) * kWarpsPerBlock < rows);
  }
  CHECK(warp_per_row_blocks(0) == 1);
  CHECK(warp_per_row_blocks(8192) == 8192 / kWarpsPerBlock);
}

TEST_CASE("launch geometry: grid-stride loops get enough blocks, capped", "[train][cuda]") {
  CHECK(grid_stride_blocks(0) == 1);
  CHECK(grid_stride_blocks(1) == 1);
  CHECK(grid_stride_blocks(kThreadsPerBlock) == 1);
  CHECK(grid_stride_blocks(kThreadsPerBlock + 1) == 2);
  CHECK(grid_stride_blocks(std::size_t{1} << 40) == kMaxGridStrideBlocks);
  CHECK(ceil_div(10, 3) == 4);
  CHECK(ceil_div(9, 3) == 3);
}

TEST_CASE("launch geometry: attention lanes hold heads of up to 256 channels", "[train][cuda]") {
  CHECK(channels_per_lane(16) == 1);   // tiny
  CHECK(channels_per_lane(64) == 2);   // gpt2-124m
  CHECK(channels_per_lane(128) == 4);  // gpt3-5b
  CHECK(channels_per_lane(96) == 3);
  CHECK(channels_per_lane(256) == 8);
  CHECK_NOTHROW(require_head_size_fits(1));
  CHECK_NOTHROW(require_head_size_fits(256));
  CHECK_THROWS_WITH(require_head_size_fits(257), Catch::Contains("raise --heads"));
  CHECK_THROWS(require_head_size_fits(0));
}

TEST_CASE("launch geometry: column reductions take 32 columns per block", "[train][cuda]") {
  CHECK(column_blocks(768) == 24);
  CHECK(column_blocks(33) == 2);
  CHECK(column_blocks(1) == 1);
}
