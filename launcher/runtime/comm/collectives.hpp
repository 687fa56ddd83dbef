// Our collective algorithms on host memory over any Transport (blocking; HostCommunicator runs
// them on its worker thread). Counts and in-place rules are those of communicator.hpp.
//  all_reduce: recursive doubling (with the fold-in for non-powers of two) up to
//              kSmallAllReduceBytes, else a ring reduce-scatter + ring all-gather (2(n-1)/n of the
//              buffer per rank: bandwidth-optimal);
//  all_gather, reduce_scatter: ring; broadcast, reduce: binomial tree; alltoall: pairwise exchange.
#pragma once

#include "comm/communicator.hpp"
#include "comm/transport.hpp"

#include <cstdint>
#include <vector>

namespace gpudirect::comm {

inline constexpr std::size_t kSmallAllReduceBytes = 64 * 1024;

class Collectives {
 public:
  explicit Collectives(Transport& transport) : t_(transport) {}

  void all_reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);
  void all_gather(const void* send, void* recv, std::size_t count, DataType type);
  void reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);
  void broadcast(const void* send, void* recv, std::size_t count, DataType type, int root);
  void reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root);
  void alltoall(const void* send, void* recv, std::size_t count, DataType type);
  void sendrecv(const void* send, void* recv, std::size_t count, DataType type);
  void barrier();

 private:
  std::uint32_t tag(std::uint32_t step) const { return (sequence_ << 12) | (step & 0xfff); }
  void next() { sequence_ = (sequence_ + 1) & 0xfffff; }
  char* scratch(std::size_t bytes, int which = 0);
  void ring_reduce_scatter(char* data, std::size_t count, DataType type, ReduceOp op,
                           const std::vector<std::size_t>& offsets, std::uint32_t& step);
  void ring_all_gather(char* data, std::size_t element, const std::vector<std::size_t>& offsets, std::uint32_t& step);
  void recursive_doubling(char* data, std::size_t count, DataType type, ReduceOp op);

  Transport& t_;
  std::uint32_t sequence_ = 0;
  std::vector<char> scratch_[2];
};

}  // namespace gpudirect::comm
