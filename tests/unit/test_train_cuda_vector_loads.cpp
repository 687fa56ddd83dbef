// `train --vector-loads` (vector_loads.hpp): the split into 16-byte packs and a scalar tail, the grid,
// and each kernel's loop emulated on the host thread by thread: every element done exactly once, every
// pack starting on a 16-byte boundary of an aligned buffer, unaligned buffers all scalar.
#include <catch2/catch.hpp>

#include "train/cuda/launch_geometry.hpp"
#include "train/cuda/vector_loads.hpp"

#include <algorithm>
#include <vector>

using namespace gpudirect::train::cuda;

namespace {

// Runs the kernel's loop for every thread of its grid; counts how often each element is done, and
// whether a pack began off a multiple of `width`.
struct Coverage {
  std::vector<int> done;
  int misaligned_packs = 0;
  std::size_t packs = 0;
};

Coverage emulate(std::size_t n, std::size_t width, bool aligned, unsigned blocks) {
  Coverage c;
  c.done.assign(n, 0);
  const std::size_t step = static_cast<std::size_t>(blocks) * kThreadsPerBlock;
  const auto pack = [&](std::size_t at) {
    ++c.packs;
    if (at % width != 0) ++c.misaligned_packs;
    for (std::size_t k = 0; k < width; ++k) ++c.done.at(at + k);  // .at: a pack past the end throws
  };
  const auto scalar = [&](std::size_t i) { ++c.done.at(i); };
  for (std::size_t first = 0; first < step; ++first) for_each_pack_then_tail(n, width, aligned, first, step, pack, scalar);
  return c;
}

}  // namespace

TEST_CASE("vector loads: packs of 16 bytes, then the scalar tail, and unaligned is all scalar", "[train][cuda]") {
  CHECK(vector_split(100, 8, true).packs == 12);
  CHECK(vector_split(100, 8, true).tail_begin == 96);
  CHECK(vector_split(96, 8, true).tail_begin == 96);  // no tail
  CHECK(vector_split(7, 8, true).packs == 0);
  CHECK(vector_split(7, 8, true).tail_begin == 0);
  CHECK(vector_split(100, 4, false).packs == 0);
  CHECK(vector_split(100, 4, false).tail_begin == 0);
  // 8 bf16 and 4 fp32 are 16 bytes.
  CHECK(std::size_t{8} * 2 == kVectorBytes);
  CHECK(std::size_t{4} * 4 == kVectorBytes);
  alignas(16) char buffer[32] = {};
  CHECK(vector_aligned(buffer));
  CHECK(vector_aligned(buffer + 16));
  CHECK_FALSE(vector_aligned(buffer + 2));  // a bf16 pointer one element in
  CHECK_FALSE(vector_aligned(buffer + 4));  // a float pointer one element in
}

TEST_CASE("vector loads: the emulated launch does every element exactly once", "[train][cuda]") {
  // Sizes around the pack width and the grid's reach, gpt2-124m's B*T*4C at micro-batch 1, and the
  // grid from vector_blocks as well as a deliberately small one (threads loop over many packs).
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9}, std::size_t{4095},
                              std::size_t{2048 * 8 + 5}, std::size_t{1024} * 3072})
    for (const std::size_t width : {std::size_t{4}, std::size_t{8}})
      for (const bool aligned : {true, false}) {
        const unsigned grid = vector_blocks(n, width, aligned);
        for (const unsigned blocks : {grid, 1u}) {
          INFO("n " << n << ", width " << width << (aligned ? ", aligned" : ", unaligned") << ", " << blocks << " blocks");
          const Coverage c = emulate(n, width, aligned, blocks);
          CHECK(std::count(c.done.begin(), c.done.end(), 1) == static_cast<long>(n));
          CHECK(c.misaligned_packs == 0);
          CHECK(c.packs == (aligned ? n / width : 0));
        }
        // The grid never exceeds the cap and covers the work in one sweep when it can.
        CHECK(grid >= 1);
        CHECK(grid <= kMaxGridStrideBlocks);
      }
}
