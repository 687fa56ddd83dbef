// Our collective algorithms on host memory over any Transport (blocking; HostCommunicator runs
// them on its worker thread). Counts and in-place rules are those of communicator.hpp.
//  all_reduce: recursive doubling (with the fold-in for non-powers of two) up to
//              kSmallAllReduceBytes, else a ring reduce-scatter + ring all-gather (2(n-1)/n of the
//              buffer per rank: bandwidth-optimal);
//  all_gather, reduce_scatter: ring; broadcast, reduce: binomial tree; alltoall: pairwise exchange.
// Where the transport reads peers' memory directly (libfabric shm: CMA), all_reduce, all_gather
// and reduce_scatter from Tuning's sizes up read instead: every rank tells its peers where its
// buffers are, reduces its own block straight from their inputs in cache-sized chunks (one copy
// into cache, one write of the result), then copies the other blocks from their owners; two small
// barriers keep buffers unchanged while peers read them. No ring steps, no scratch round trips.
// Where all ranks share a host and a StagedCollectives is given, those three go through it instead
// (staged_collectives.hpp), from Tuning's staged_min_bytes up. Over a network
// (Transport::overlaps_transfers) a ring reduce-scatter step sends all its pieces at once and
// reduces each as it lands, instead of one round trip per piece. In a job across hosts whose hosts
// run the same number of ranks (two or more), all_reduce, all_gather and reduce_scatter above
// kSmallAllReduceBytes run by host: within the host, across hosts among the ranks at the same place
// on each, within the host again; every byte crosses between hosts once in each direction it must,
// not with every step of a ring over all ranks.
#pragma once

#include "comm/communicator.hpp"
#include "comm/shm/staged_collectives.hpp"
#include "comm/transport/transport.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace gpudirect::comm {

inline constexpr std::size_t kSmallAllReduceBytes = 64 * 1024;

// When the direct-read algorithms take over, and the chunk that the ring and the direct reads move
// at a time. Measured with `gpudirect-launch bench` over shm with CMA: below these sizes the CMA
// round trips cost more than the ring's extra copy. Tests set them low to run every path.
struct CollectiveTuning {
  std::size_t direct_all_reduce_bytes = 1 << 20;      // buffer size from which all_reduce reads directly
  std::size_t direct_all_gather_bytes = 4 << 20;      // receive buffer size from which all_gather does
  std::size_t direct_reduce_scatter_bytes = 4 << 20;  // send buffer size from which reduce_scatter does
  std::size_t chunk_bytes = 256 * 1024;               // moved, then reduced while in cache (best of 256K, 1M, whole)
  std::size_t staged_min_bytes = 0;                   // buffer size from which staging (where there is) takes over
  std::size_t piece_bytes = 1 << 20;                  // over a network: a ring step's messages (best of 256K, 1M, 4M on tcp)
  std::size_t by_host_bytes = kSmallAllReduceBytes + 1;  // a job across hosts in host groups: all_reduce, all_gather and
                                                         // reduce_scatter of buffers from this size run by host
                                                         // (host_groups.hpp); kNever: one ring over all ranks
  static constexpr std::size_t kNever = ~std::size_t(0);
};

class Collectives {
 public:
  // `staged` (may be null; not owned): the same ranks' shared-memory collectives. `channel` (0-3):
  // part of every tag, so Collectives over groups of the same ranks (GroupTransport) never take
  // each other's messages. Where the transport knows its ranks' hosts and they form host groups,
  // all_reduce, all_gather and reduce_scatter from tuning.by_host_bytes up run by host.
  explicit Collectives(Transport& transport, CollectiveTuning tuning = {}, StagedCollectives* staged = nullptr, std::uint32_t channel = 0);
  ~Collectives();
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  void all_reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);
  void all_gather(const void* send, void* recv, std::size_t count, DataType type);
  void reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);
  void broadcast(const void* send, void* recv, std::size_t count, DataType type, int root);
  void reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root);
  void alltoall(const void* send, void* recv, std::size_t count, DataType type);
  void sendrecv(const void* send, void* recv, std::size_t count, DataType type);
  void barrier();

 private:
  std::uint32_t tag(std::uint32_t step) const { return (channel_ << 30) | (sequence_ << 12) | (step & 0xfff); }
  void next() { sequence_ = (sequence_ + 1) & 0x3ffff; }
  char* scratch(std::size_t bytes, int which = 0);
  void ring_reduce_scatter(const char* input, char* data, DataType type, ReduceOp op, const std::vector<std::size_t>& offsets,
                           std::uint32_t& step);
  void ring_all_gather(char* data, std::size_t element, const std::vector<std::size_t>& offsets, std::uint32_t& step);
  void recursive_doubling(char* data, std::size_t count, DataType type, ReduceOp op);
  // Direct reads (see the top of this file).
  std::vector<RemoteRegion> share_regions(const std::vector<RemoteRegion>& mine, std::uint32_t& step);
  void direct_barrier(std::uint32_t& step);
  void reduce_block_from_peers(const char* own, char* out, const std::vector<RemoteRegion>& inputs, std::size_t offset,
                               std::size_t count, DataType type, ReduceOp op);
  void direct_all_reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);
  void direct_all_gather(const void* send, void* recv, std::size_t count, DataType type);
  void direct_reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);
  // By host (host_groups.hpp): every byte crosses between hosts once in each direction it must.
  struct ByHost;
  void all_reduce_by_host(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);
  void all_gather_by_host(const void* send, void* recv, std::size_t count, DataType type);
  void reduce_scatter_by_host(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);
  bool by_host(std::size_t bytes, std::size_t count) const {
    return by_host_ && bytes >= tuning_.by_host_bytes && count >= static_cast<std::size_t>(t_.size());
  }
  bool staged(std::size_t bytes) const { return staged_ && t_.size() > 1 && bytes >= tuning_.staged_min_bytes; }

  Transport& t_;
  CollectiveTuning tuning_;
  StagedCollectives* staged_;
  std::uint32_t channel_;
  std::unique_ptr<ByHost> by_host_;  // null: not a job across hosts in host groups
  std::uint32_t sequence_ = 0;
  std::vector<char> scratch_[2];
};

}  // namespace gpudirect::comm
