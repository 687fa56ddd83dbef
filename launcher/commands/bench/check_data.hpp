// Inputs whose collective results are exactly predictable for every op and type: small integers
// (1..3, or 1..2 for prod so every product is a power of two), so float sums and products are exact
// in any order and integer overflow wraps the same way whatever the order.
#pragma once

#include "bench/collective.hpp"
#include "comm/collective_table.hpp"
#include "comm/communicator.hpp"

#include <cstdint>
#include <vector>

namespace gpudirect::bench {

// Rank `rank`'s input element at index `index` (of its own send buffer).
double input_value(int rank, std::size_t index, comm::ReduceOp op);

// Fills `out` (count elements of `type`) with rank's inputs starting at `first_index`.
void fill_input(std::vector<char>& out, std::size_t count, comm::DataType type, int rank, comm::ReduceOp op, std::size_t first_index = 0);

// What rank `rank` must hold in its receive buffer after the collective (its row's result rule).
std::vector<char> expected_output(comm::Collective c, const RowShape& shape, comm::DataType type, comm::ReduceOp op, int rank, int ranks,
                                  int root);

// Elements of `actual` that differ (bitwise) from `expected`.
std::size_t count_wrong(const std::vector<char>& actual, const std::vector<char>& expected, std::size_t element_size);

}  // namespace gpudirect::bench
