// Element-wise reductions on host memory for every DataType, and the 16-bit float conversions
// they need (float16 and bfloat16 are reduced in float and rounded to nearest even).
#pragma once

#include "comm/communicator.hpp"

#include <cstdint>

namespace gpudirect::comm {

float half_to_float(std::uint16_t h);
std::uint16_t float_to_half(float f);
float bfloat16_to_float(std::uint16_t b);
std::uint16_t float_to_bfloat16(float f);

// accumulator[i] = op(accumulator[i], input[i]); avg accumulates as sum (see divide_for_average).
void reduce_into(void* accumulator, const void* input, std::size_t count, DataType type, ReduceOp op);
// out[i] = op(a[i], b[i]) in one pass (out may be a or b): the direct-read all_reduce writes the
// sum of its own block and a peer's once, instead of copying first and accumulating after.
void reduce_pair(void* out, const void* a, const void* b, std::size_t count, DataType type, ReduceOp op);
// Finishes avg: divides by `ranks` (integer types: integer division, truncating toward zero).
void divide_for_average(void* buffer, std::size_t count, DataType type, int ranks);

}  // namespace gpudirect::comm
