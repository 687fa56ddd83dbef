#include "comm/algorithms/collectives.hpp"

#include "comm/algorithms/algorithms.hpp"
#include "comm/algorithms/by_host.hpp"
#include "comm/algorithms/host_groups.hpp"
#include "comm/reduce_kernels.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace gpudirect::comm {

Collectives::Collectives(Transport& transport, CollectiveTuning tuning, StagedCollectives* staged, std::uint32_t channel)
    : t_(transport), tuning_(tuning), staged_(staged), channel_(channel) {
  if (channel > 3) throw std::invalid_argument("collectives: tag channel " + std::to_string(channel) + " is not 0-3");
  if (tuning_.by_host_bytes != CollectiveTuning::kNever && !staged_)
    if (const auto groups = host_groups(t_.hosts(), t_.rank())) by_host_ = std::make_unique<ByHost>(t_, *groups, tuning_);
}

Collectives::~Collectives() = default;

// In order of preference: staging through shared memory (all ranks on one host), by host (a job
// across hosts), direct reads (the transport reads peers' memory), then messages.
void Collectives::all_reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  const int n = t_.size();
  const std::size_t bytes = count * size_of(type);
  if (staged(bytes)) {
    staged_->all_reduce(send, recv, count, type, op);
  } else if (by_host(bytes, count)) {
    by_host_->all_reduce(call(), send, recv, count, type, op);
  } else if (n > 1 && count >= static_cast<std::size_t>(n) && t_.can_read_remote() && bytes >= tuning_.direct_all_reduce_bytes) {
    direct_all_reduce(call(), send, recv, count, type, op);
  } else if (n > 1 && count > 0 && (bytes <= kSmallAllReduceBytes || count < static_cast<std::size_t>(n))) {
    recursive_doubling_all_reduce(call(), send, recv, count, type, op);
  } else if (n > 1 && count > 0) {
    ring_all_reduce(call(), send, recv, count, type, op);
  } else {  // one rank (or nothing to reduce): the input is the result
    if (send != recv && bytes) std::memmove(recv, send, bytes);
    if (op == ReduceOp::avg) divide_for_average(recv, count, type, n);
  }
  next();
}

void Collectives::all_gather(const void* send, void* recv, std::size_t count, DataType type) {
  const int n = t_.size();
  const std::size_t bytes = count * size_of(type) * static_cast<std::size_t>(n);  // of recv
  if (staged(bytes)) {
    staged_->all_gather(send, recv, count, type);
  } else if (by_host(bytes, count * static_cast<std::size_t>(n))) {
    by_host_->all_gather(call(), send, recv, count, type);
  } else if (n > 1 && count > 0 && t_.can_read_remote() && bytes >= tuning_.direct_all_gather_bytes) {
    direct_all_gather(call(), send, recv, count, type);
  } else {
    ring_all_gather(call(), send, recv, count, type);
  }
  next();
}

void Collectives::reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  const int n = t_.size();
  const std::size_t bytes = count * static_cast<std::size_t>(n) * size_of(type);  // of send
  if (staged(bytes)) {
    staged_->reduce_scatter(send, recv, count, type, op);
  } else if (by_host(bytes, count * static_cast<std::size_t>(n))) {
    by_host_->reduce_scatter(call(), send, recv, count, type, op);
  } else if (n > 1 && count > 0 && t_.can_read_remote() && bytes >= tuning_.direct_reduce_scatter_bytes) {
    direct_reduce_scatter(call(), send, recv, count, type, op);
  } else {
    ring_reduce_scatter(call(), send, recv, count, type, op);
  }
  next();
}

void Collectives::broadcast(const void* send, void* recv, std::size_t count, DataType type, int root) {
  tree_broadcast(call(), send, recv, count, type, root);
  next();
}

void Collectives::reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root) {
  tree_reduce(call(), send, recv, count, type, op, root);
  next();
}

void Collectives::alltoall(const void* send, void* recv, std::size_t count, DataType type) {
  pairwise_alltoall(call(), send, recv, count, type);
  next();
}

void Collectives::sendrecv(const void* send, void* recv, std::size_t count, DataType type) {
  neighbour_sendrecv(call(), send, recv, count, type);
  next();
}

void Collectives::barrier() {
  dissemination_barrier(call());
  next();
}

}  // namespace gpudirect::comm
