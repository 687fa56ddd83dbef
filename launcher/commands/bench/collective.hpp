// nccl-tests' byte accounting for the collectives `bench` measures (comm/collective_table.hpp): the
// size column and the element count per rank buffer, and the sizes a run steps through.
#pragma once

#include "comm/collective_table.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace gpudirect::bench {

// For a row of `bytes` (the size column): elements per rank call (the `count` argument of the
// Communicator call) and the elements the count column shows.
struct RowShape {
  std::size_t call_count = 0;                        // count passed to the collective
  std::size_t shown_count = 0;                       // "count (elements)" column
  std::size_t shown_bytes = 0;                       // "size (B)" column (rounded down to whole elements)
  std::size_t send_elements = 0, recv_elements = 0;  // buffer sizes per rank
};
RowShape row_shape(comm::Collective c, std::size_t bytes, std::size_t element_size, int ranks);

// -b/-e values: "8", "64K", "1M", "8G" (powers of 1024). Throws std::invalid_argument.
std::size_t parse_size(const std::string& text);

// Sizes from min to max: multiplied by `factor`, or stepped by `increment` when it is non-zero.
std::vector<std::size_t> size_sequence(std::size_t min, std::size_t max, double factor, std::size_t increment);

}  // namespace gpudirect::bench
