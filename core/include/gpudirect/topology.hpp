// The node's GPUs and NICs, where they hang in the PCIe tree, and which CPUs are local to them.
// Every topology source (live hwloc, hwloc XML, NCCL topology XML) produces this one model, so the
// binding code never knows where the facts came from.
#pragma once

#include "gpudirect/cpuset.hpp"
#include "gpudirect/pci_address.hpp"

#include <string>
#include <vector>

namespace gpudirect {

enum class GpuVendor { nvidia, amd };

struct Gpu {
  PciAddress address;             // e.g. 0000:04:00.0
  GpuVendor vendor = GpuVendor::nvidia;
  unsigned device_id = 0;         // PCI device id, e.g. 0x2330 for H100 SXM
  int numa_node = -1;             // -1 when unknown
  CpuSet local_cpus;              // CPUs of the nearest non-I/O ancestor (its NUMA node / package)
  std::vector<PciAddress> switch_path;  // bridges from the host bridge down to the GPU's parent
};

struct Nic {
  PciAddress address;
  std::string interface_name;     // "enp6s0", empty if the device has no netdev
  std::string rdma_device;        // "mlx5_0", empty if none
  int numa_node = -1;
  CpuSet local_cpus;
  std::vector<PciAddress> switch_path;
};

struct Topology {
  std::vector<Gpu> gpus;          // sorted by PCI address: index here == index Slurm/NVML use
  std::vector<Nic> nics;          // sorted by PCI address
  CpuSet all_cpus;                // every CPU the topology knows
  std::string source;             // "hwloc", "hwloc-xml:<path>", "nccl-xml:<path>" for messages
};

// Number of PCIe bridges two devices share below the host bridge: 0 means they meet only at the
// root complex (different switches), >0 means a common PCIe switch.
int shared_switch_depth(const std::vector<PciAddress>& a, const std::vector<PciAddress>& b);

}  // namespace gpudirect
