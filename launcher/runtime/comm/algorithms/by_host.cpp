#include "comm/algorithms/by_host.hpp"

#include "comm/algorithms/algorithms.hpp"
#include "comm/block_offsets.hpp"
#include "comm/reduce_kernels.hpp"

#include <cstring>

namespace gpudirect::comm {
namespace {

// Tag channels (Call::channel) of the host groups' collectives; the job's own use 0.
constexpr std::uint32_t kLocalChannel = 1, kAcrossChannel = 2;

}  // namespace

ByHost::ByHost(Transport& world, const HostGroups& groups, const CollectiveTuning& tuning)
    : ranks_(groups.ranks),
      local_transport_(world, groups.local),
      across_transport_(world, groups.across),
      local_(local_transport_, tuning, nullptr, kLocalChannel),
      across_(across_transport_, tuning, nullptr, kAcrossChannel) {}

// The host's ranks reduce-scatter the buffer among themselves; each then all_reduces its block
// with the ranks at its place on the other hosts (all those groups at once, each over its own
// connections); the host's ranks all-gather the results. An average sums throughout and divides
// each block by the job's size once, before it is shared.
void ByHost::all_reduce(const Call& world, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  const Call local = local_.call();
  const std::size_t element = size_of(type);
  const ReduceOp partial = op == ReduceOp::avg ? ReduceOp::sum : op;
  char* data = static_cast<char*>(recv);
  const auto offsets = block_offsets(count, local.t.size());
  std::uint32_t step = 0;
  ring_reduce_scatter_blocks(local, static_cast<const char*>(send), data, type, partial, offsets, step);
  const auto mine = static_cast<std::size_t>(local.t.rank());
  char* block = data + offsets[mine] * element;
  const std::size_t elements = offsets[mine + 1] - offsets[mine];
  across_.all_reduce(block, block, elements, type, partial);
  if (op == ReduceOp::avg) divide_for_average(block, elements, type, world.t.size());
  ring_all_gather_blocks(local, data, element, offsets, step);
  local_.next();
}

// Where a host's ranks are consecutive (srun's default block distribution), their blocks lie
// together in the job's buffer, and the host's steps work on them there instead of through scratch.
bool ByHost::consecutive(std::size_t host) const {
  const auto& on_host = ranks_[host];
  for (std::size_t p = 0; p < on_host.size(); ++p)
    if (on_host[p] != on_host[0] + static_cast<int>(p)) return false;
  return true;
}

// The ranks at this place on every host gather their blocks (a column: one block per host, in host
// order); then for each host, its ranks gather that host's entries of their columns, which are the
// blocks of that host's ranks.
void ByHost::all_gather(const Call& world, const void* send, void* recv, std::size_t count, DataType type) {
  const std::size_t hosts = ranks_.size(), places = ranks_[0].size(), block = count * size_of(type);
  char* column = world.scratch(hosts * block, 0);
  across_.all_gather(send, column, count, type);
  char* const out = static_cast<char*>(recv);
  for (std::size_t h = 0; h < hosts; ++h) {
    if (consecutive(h)) {
      local_.all_gather(column + h * block, out + static_cast<std::size_t>(ranks_[h][0]) * block, count, type);
      continue;
    }
    char* gathered = world.scratch(places * block, 1);
    local_.all_gather(column + h * block, gathered, count, type);
    for (std::size_t p = 0; p < places; ++p) std::memcpy(out + static_cast<std::size_t>(ranks_[h][p]) * block, gathered + p * block, block);
  }
}

// For each host, the host's ranks reduce-scatter that host's blocks, so each holds entry h of its
// column (the block of host h's rank at its place, summed over this host); the ranks at this place
// on every host then reduce-scatter the column, so each holds its own block summed over all.
void ByHost::reduce_scatter(const Call& world, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
  const std::size_t hosts = ranks_.size(), places = ranks_[0].size(), block = count * size_of(type);
  const ReduceOp partial = op == ReduceOp::avg ? ReduceOp::sum : op;
  char* column = world.scratch(hosts * block, 0);
  const char* const in = static_cast<const char*>(send);
  for (std::size_t h = 0; h < hosts; ++h) {
    const char* blocks = in + static_cast<std::size_t>(ranks_[h][0]) * block;
    if (!consecutive(h)) {
      char* gathered = world.scratch(places * block, 1);
      for (std::size_t p = 0; p < places; ++p)
        std::memcpy(gathered + p * block, in + static_cast<std::size_t>(ranks_[h][p]) * block, block);
      blocks = gathered;
    }
    local_.reduce_scatter(blocks, column + h * block, count, type, partial);
  }
  across_.reduce_scatter(column, recv, count, type, partial);
  if (op == ReduceOp::avg) divide_for_average(recv, count, type, world.t.size());
}

}  // namespace gpudirect::comm
