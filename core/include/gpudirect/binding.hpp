// Which NICs and CPUs go with which GPU on this node (NodePlan), and what one task gets (TaskBinding).
// The plugin and `gpudirect-launch doctor` both call these, so the doctor prints what the plugin does.
#pragma once

#include "gpudirect/topology.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpudirect {

struct GpuPlacement {
  std::vector<int> nics;      // indices into Topology::nics, ascending
  bool nic_fallback = false;  // no NIC shares a PCIe switch with this GPU: NICs chosen by NUMA node
  std::string nic_note;       // why, when nic_fallback (for the doctor and verbose mode)
  int numa_node = -1;         // the GPU's NUMA node, -1 when unknown
  CpuSet local_cpus;          // the GPU's local CPUs
};

struct NodePlan {
  std::vector<GpuPlacement> gpus;  // parallel to Topology::gpus; empty on a node without GPUs
  std::optional<int> control_nic;  // the NIC for sockets/bootstrap traffic (rules below)
  std::string control_note;        // why there is none, when control_nic is empty
  // The control NIC and every other NIC of its kind that is on no GPU's switch and no data NIC,
  // ascending: sockets traffic may use them all (A3 Ultra/A4: enp0s19, enp192s20). Empty without
  // a control NIC.
  std::vector<int> host_nics;
  std::vector<int> data_nics;  // every NIC some GPU uses, ascending
};

// NIC kinds (nic_kind.hpp): rdma > ethernet > management > unusable. Data NICs are the NICs of the
// best kind present on the node; the others never carry GPU traffic.
// The control NIC is never RDMA or unusable: a NIC of a kind below the data kind when there is one
// (the 1GbE port next to InfiniBand cards), else one of the data kind sharing no PCIe switch with
// a GPU (A3's enp0s12); NICs off the GPUs' switches first, then the better kind, then bus order.
// Pairing: GPUs and data NICs meet at their nearest common PCIe switch (the deepest shared bridge).
// Within each such switch both are taken in bus order and GPU i of G gets
//   NICs [i*N/G, (i+1)*N/G) when N >= G (one each: A3 Mega, ND H100 v5; a slice each: p5),
//   NIC floor(i*N/G)        when N <  G (GPUs share: A3 High).
// A GPU sharing no switch with any data NIC falls back to the nearest data NICs: smallest NUMA
// distance (the OS's matrix; 10 same node, 20 other without one), then same package, shared out
// among the fallback GPUs of its NUMA node by the same rule (2 GPUs + 2 IB ports on a socket: 1:1).
NodePlan plan_node(const Topology& topology);

struct TaskBinding {
  std::vector<int> gpus;        // indices into Topology::gpus, ascending, no duplicates
  std::vector<int> nics;        // union of the GPUs' NICs, ascending
  CpuSet cpus;                  // union of the GPUs' local CPUs within allowed_cpus
  std::vector<int> numa_nodes;  // NUMA nodes of the GPUs, ascending
  std::string warning;          // non-empty when the GPUs' CPUs lie outside what Slurm allowed the task
};

// cpus: the GPUs' local CPUs intersected with allowed_cpus (what Slurm gave the task). When that
// is empty the task keeps allowed_cpus and `warning` says why; with no GPUs it keeps allowed_cpus;
// an empty allowed_cpus means "not known" and the GPUs' local CPUs are used as they are.
// Throws std::invalid_argument for a GPU index the topology does not have, or a plan made for
// another topology.
TaskBinding bind_task(const Topology& topology, const NodePlan& plan, const std::vector<int>& task_gpus, const CpuSet& allowed_cpus);

}  // namespace gpudirect
