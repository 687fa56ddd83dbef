// The model's own questions (topology.hpp): distances, switch sharing and how a NIC is named.
#include "gpudirect/topology.hpp"

#include <algorithm>

namespace gpudirect {

int shared_switch_depth(const std::vector<PciAddress>& a, const std::vector<PciAddress>& b) {
  const auto [a_end, b_end] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<int>(a_end - a.begin());
}

unsigned numa_distance(const Topology& topology, int from, int to) {
  if (from < 0 || to < 0) return 255;
  if (const auto it = topology.numa_distances.find({from, to}); it != topology.numa_distances.end()) return it->second;
  return from == to ? 10 : 20;
}

std::string nic_label(const Nic& nic) {
  if (!nic.interface_name.empty() && !nic.rdma_device.empty()) return nic.interface_name + "/" + nic.rdma_device;
  if (!nic.interface_name.empty()) return nic.interface_name;
  if (!nic.rdma_device.empty()) return nic.rdma_device;
  return nic_bus_id(nic);
}

std::string nic_bus_id(const Nic& nic) { return nic.address ? nic.address->to_string() : "-"; }

}  // namespace gpudirect
