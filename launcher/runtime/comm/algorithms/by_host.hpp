// all_reduce, all_gather and reduce_scatter of a job across hosts, by host (host_groups.hpp):
// within the host, across hosts among the ranks at the same place on each, within the host again.
// Why: an all_reduce then carries 2(H-1)/H of the buffer across the network for H hosts, where one
// ring over all n ranks carries 2(n-1)/n of it across every host boundary.
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
