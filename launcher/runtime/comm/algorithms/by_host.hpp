// all_reduce, all_gather and reduce_scatter of a job across hosts, by host (host_groups.hpp):
// within the host, across hosts among the ranks at the same place on each, within the host again.
// Every byte crosses between hosts once in each direction it must, not with every step of a ring
// over all ranks.
#pragma once

#include "comm/algorithms/call.hpp"
#include "comm/algorithms/collectives.hpp"
#include "comm/algorithms/host_groups.hpp"
#include "comm/communicator.hpp"
#include "comm/transport/group_transport.hpp"

#include <cstddef>
#include <vector>

namespace gpudirect::comm {

class ByHost {
 public:
  ByHost(Transport& world, const HostGroups& groups, const CollectiveTuning& tuning);

  // `world`: the job's call (its scratch; its size for avg).
  void all_reduce(const Call& world, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);
  void all_gather(const Call& world, const void* send, void* recv, std::size_t count, DataType type);
  void reduce_scatter(const Call& world, const void* send, void* recv, std::size_t count, DataType type, ReduceOp op);

 private:
  bool consecutive(std::size_t host) const;

  std::vector<std::vector<int>> ranks_;  // [host][place]
  GroupTransport local_transport_, across_transport_;
  Collectives local_, across_;
};

}  // namespace gpudirect::comm
