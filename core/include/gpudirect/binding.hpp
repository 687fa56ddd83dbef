// Which NICs and CPUs go with which GPU on this node (NodePlan), and what one task gets (TaskBinding).
#pragma once

#include "gpudirect/topology.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpudirect {

struct GpuPlacement {
  std::vector<int> nics;       // indices into Topology::nics
  bool nic_fallback = false;   // no NIC under a shared PCIe switch: chosen by NUMA instead
};

struct NodePlan {
  std::vector<GpuPlacement> gpus;  // parallel to Topology::gpus
  std::optional<int> control_nic;  // a NIC that shares no PCIe switch with any GPU
  std::vector<int> data_nics;      // every NIC paired with some GPU, in address order
};

// Pairs GPUs and NICs by their nearest common PCIe switch, in bus-id order within each switch:
// equal counts one to one (A3 Mega), fewer NICs shared (A3 High), more NICs sliced (p5).
NodePlan plan_node(const Topology& topology);

struct TaskBinding {
  std::vector<int> gpus;
  std::vector<int> nics;
  CpuSet cpus;
  std::vector<int> numa_nodes;
  std::string warning;  // non-empty when the GPUs' CPUs lie outside what Slurm allowed the task
};

// Throws std::invalid_argument for a GPU index the topology does not have.
TaskBinding bind_task(const Topology& topology, const NodePlan& plan, const std::vector<int>& task_gpus,
                      const CpuSet& allowed_cpus);

}  // namespace gpudirect
