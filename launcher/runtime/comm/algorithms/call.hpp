// What an algorithm works with during one collective call: the transport, tags no other call
// uses, scratch memory and the tuning. Scratch outlives the call so that calls allocate nothing
// once it has grown.
#pragma once

#include "comm/transport/transport.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpudirect::comm {

// all_reduce of up to this many bytes: recursive doubling, where latency matters more than bytes.
inline constexpr std::size_t kSmallAllReduceBytes = 64 * 1024;

// Where one algorithm takes over from another, and how much they move at a time. The defaults
// were chosen by measuring `gpudirect-launch bench` (docs/performance.md); tests set them low to
// run every path.
struct CollectiveTuning {
  std::size_t direct_all_reduce_bytes = 1 << 20;         // buffer size from which all_reduce reads directly
  std::size_t direct_all_gather_bytes = 4 << 20;         // receive buffer size from which all_gather does
  std::size_t direct_reduce_scatter_bytes = 4 << 20;     // send buffer size from which reduce_scatter does
  std::size_t chunk_bytes = 256 * 1024;                  // moved, then reduced while in cache
  std::size_t staged_min_bytes = 0;                      // buffer size from which staging (where there is) takes over
  std::size_t piece_bytes = 1 << 20;                     // over a network: a ring step's messages
  std::size_t by_host_bytes = kSmallAllReduceBytes + 1;  // a job across hosts in host groups: all_reduce, all_gather and
                                                         // reduce_scatter of buffers from this size run by host
                                                         // (by_host.hpp); kNever: one ring over all ranks
  static constexpr std::size_t kNever = ~std::size_t(0);
};

// Two buffers that grow to the largest call's needs and are kept.
class Scratch {
 public:
  char* get(std::size_t bytes, int which) {
    auto& buffer = buffers_[which];
    if (buffer.size() < bytes) buffer.resize(bytes);
    return buffer.data();
  }

 private:
  std::vector<char> buffers_[2];
};

struct Call {
  Transport& t;
  const CollectiveTuning& tuning;
  Scratch& scratch_buffers;
  std::uint32_t channel;   // 0-3: Collectives over groups of the same ranks never take each other's messages
  std::uint32_t sequence;  // the call's number (18 bits, wrapping)

  // Step `step` of this call (12 bits).
  std::uint32_t tag(std::uint32_t step) const { return (channel << 30) | (sequence << 12) | (step & 0xfff); }
  char* scratch(std::size_t bytes, int which = 0) const { return scratch_buffers.get(bytes, which); }
};

// a mod n in [0, n), for ring neighbours and tree relatives.
inline int mod(int a, int n) { return ((a % n) + n) % n; }

}  // namespace gpudirect::comm
