// The node's GPUs and NICs, where they hang in the PCIe tree, and which CPUs are local to them.
// Every topology source (live hwloc, hwloc XML, NCCL topology XML) produces this one model, so the
// binding code never knows where the facts came from.
#pragma once

#include "gpudirect/cpuset.hpp"
#include "gpudirect/pci_address.hpp"

#include <map>
#include <optional>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

namespace gpudirect {

enum class GpuVendor { nvidia, amd };

// What a NIC is good for, worst to best (see nic_kind.hpp for the rules). A node's data NICs are
// its NICs of the best kind present; the control NIC is a plain or management one.
enum class NicKind {
  unusable,    // wireless, USB, or a function without a driver (an unassigned virtual function)
  management,  // 1GbE chipset parts (Intel I210/I350/I219, Broadcom BCM57xx, Realtek) or an x1 link
  ethernet,    // plain high-speed Ethernet without RDMA (gVNIC, ENA, virtio, X710 ...)
  rdma,        // InfiniBand, RoCE, EFA, Omni-Path, Slingshot: an OpenFabrics device or class 0x0207
};

struct Gpu {
  PciAddress address;  // e.g. 0000:04:00.0
  GpuVendor vendor = GpuVendor::nvidia;
  unsigned device_id = 0;               // PCI device id, e.g. 0x2330 for H100 SXM
  int numa_node = -1;                   // -1 when unknown
  int package = -1;                     // the socket, -1 when unknown
  CpuSet local_cpus;                    // CPUs of the nearest non-I/O ancestor (its NUMA node / package)
  std::vector<PciAddress> switch_path;  // bridges from the host bridge down to the GPU's parent
};

struct Nic {
  // Empty for a NIC with no PCI function of its own: NCCL lists such (virtual) NICs in a <nic>
  // directly under a <cpu>. They are local to that CPU's NUMA node and share no PCIe switch.
  std::optional<PciAddress> address;
  // The PCI domain of a NIC without a function of its own that NCCL lists behind a host bridge (a
  // cloud VM's HCAs); for any other NIC, address->domain.
  std::optional<unsigned> pci_domain;
  std::string interface_name;  // "enp6s0", empty if the device has no netdev
  std::string rdma_device;     // "mlx5_0", empty if none
  unsigned pci_class = 0;      // 16-bit class (0x0200 Ethernet, 0x0207 InfiniBand), 0 when unknown
  unsigned vendor = 0;         // PCI vendor id, 0 when unknown
  unsigned device_id = 0;
  float link_speed_gbs = 0;   // PCIe link bandwidth in GB/s as hwloc reports it, 0 when unknown
  float port_speed_gbps = 0;  // network port speed in Gb/s (an NCCL <net speed>), 0 when unknown
  bool names_listed = true;   // false when the source lists no OS devices (a bare NCCL <pci>)
  NicKind kind = NicKind::ethernet;
  std::string kind_reason;  // why it has that kind, for the doctor
  int numa_node = -1;
  int package = -1;
  CpuSet local_cpus;
  std::vector<PciAddress> switch_path;
};

struct Topology {
  std::vector<Gpu> gpus;  // sorted by PCI address: index here == index Slurm/NVML use
  std::vector<Nic> nics;  // sorted by PCI address
  CpuSet all_cpus;        // every CPU the topology knows
  std::string source;     // "hwloc", "hwloc-xml:<path>", "nccl-xml:<path>" for messages
  std::string host;       // the machine's own host name when the source records it (hwloc)
  // NUMA distances (relative latency, 10 = local) as the OS reports them; hwloc sources only.
  std::map<std::pair<int, int>, unsigned> numa_distances;
  std::vector<std::string> notes;  // devices skipped and why, for "(no GPUs ...)" hints
};

// Relative distance between two NUMA nodes: the OS's matrix when known, else 10 for the same
// node and 20 for any other (the ACPI SLIT convention); 255 when either node is unknown.
unsigned numa_distance(const Topology& topology, int from, int to);

// A NIC as people know it: "ib0/mlx5_0", "enp6s0", "mlx5_3", or its bus id when it has no name.
std::string nic_label(const Nic& nic);
// The NIC's PCI bus id, or "-" for a NIC with no PCI function.
std::string nic_bus_id(const Nic& nic);
std::string_view to_string(NicKind kind);

// Number of PCIe bridges two devices share below the host bridge: 0 means they meet only at the
// root complex (different switches), >0 means a common PCIe switch.
int shared_switch_depth(const std::vector<PciAddress>& a, const std::vector<PciAddress>& b);

}  // namespace gpudirect
