// The collectives `bench` measures, with nccl-tests' byte accounting: the size column, the element
// count per rank buffer, and the factor from algorithm bandwidth to bus bandwidth.
#pragma once

#include "comm/communicator.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpudirect::bench {

enum class Collective { all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv };

// "all_reduce", "all_reduce_perf", "allreduce" ...
std::optional<Collective> parse_collective(const std::string& name);
const char* name_of(Collective c);
bool is_reducing(Collective c);
bool has_root(Collective c);

// busbw = algbw * bus_factor (all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall (n-1)/n; else 1).
double bus_factor(Collective c, int ranks);

// For a row of `bytes` (the size column): elements per rank call (the `count` argument of the
// Communicator call) and the elements the count column shows.
struct RowShape {
  std::size_t call_count = 0;   // count passed to the collective
  std::size_t shown_count = 0;  // "count (elements)" column
  std::size_t shown_bytes = 0;  // "size (B)" column (rounded down to whole elements)
  std::size_t send_elements = 0, recv_elements = 0;  // buffer sizes per rank
};
RowShape row_shape(Collective c, std::size_t bytes, std::size_t element_size, int ranks);

// -b/-e values: "8", "64K", "1M", "8G" (powers of 1024). Throws std::invalid_argument.
std::size_t parse_size(const std::string& text);

// Sizes from min to max: multiplied by `factor`, or stepped by `increment` when it is non-zero.
std::vector<std::size_t> size_sequence(std::size_t min, std::size_t max, double factor, std::size_t increment);

}  // namespace gpudirect::bench
