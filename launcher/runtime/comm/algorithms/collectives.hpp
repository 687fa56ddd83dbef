// Collectives on host memory over any Transport: per call, picks the algorithm (algorithms.hpp)
// by size, rank count and what the transport can do, and numbers the calls for their tags.
// Blocking; HostCommunicator runs them on its worker thread. Counts and in-place rules are those
// of communicator.hpp.
#pragma once

#include "comm/algorithms/call.hpp"
#include "comm/communicator.hpp"
#include "comm/shm/staged_collectives.hpp"
#include "comm/transport/transport.hpp"

#include <cstdint>
#include <memory>

namespace gpudirect::comm {

class ByHost;

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
  friend class ByHost;  // runs ring halves under its host group's tags

  Call call() { return {t_, tuning_, scratch_, channel_, sequence_}; }
  void next() { sequence_ = (sequence_ + 1) & 0x3ffff; }
  bool staged(std::size_t bytes) const { return staged_ && t_.size() > 1 && bytes >= tuning_.staged_min_bytes; }
  bool by_host(std::size_t bytes, std::size_t count) const {
    return by_host_ && bytes >= tuning_.by_host_bytes && count >= static_cast<std::size_t>(t_.size());
  }

  Transport& t_;
  CollectiveTuning tuning_;
  StagedCollectives* staged_;
  std::uint32_t channel_;
  std::unique_ptr<ByHost> by_host_;  // null: not a job across hosts in host groups
  std::uint32_t sequence_ = 0;
  Scratch scratch_;
};

}  // namespace gpudirect::comm
