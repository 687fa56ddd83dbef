// Ring all_reduce: a ring reduce-scatter leaves each rank its block reduced, a ring all-gather then
// shares the blocks. Blocks differ by at most one element (block_offsets.hpp).
#include "comm/algorithms/algorithms.hpp"

#include "comm/block_offsets.hpp"
#include "comm/reduce_kernels.hpp"

namespace gpudirect::comm {

void ring_all_reduce(const Call& call, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  const int n = call.t.size();
  char* data = static_cast<char*>(recv);
  const auto offsets = block_offsets(count, n);
  std::uint32_t step = 0;
  ring_reduce_scatter_blocks(call, static_cast<const char*>(send), data, type, op, offsets, step);
  ring_all_gather_blocks(call, data, size_of(type), offsets, step);
  if (op == ReduceOp::avg) divide_for_average(recv, count, type, n);
}

}  // namespace gpudirect::comm
