#include "gpudirect/topology.hpp"
#include "gpudirect/topology_sources.hpp"

#include <algorithm>
#include <fstream>

namespace gpudirect {

int shared_switch_depth(const std::vector<PciAddress>& a, const std::vector<PciAddress>& b) {
  int depth = 0;
  while (static_cast<std::size_t>(depth) < a.size() && static_cast<std::size_t>(depth) < b.size() &&
         a[static_cast<std::size_t>(depth)] == b[static_cast<std::size_t>(depth)])
    ++depth;
  return depth;
}

bool is_gpu_class(unsigned pci_class, unsigned vendor) {
  const bool display = pci_class == 0x0300 || pci_class == 0x0302;
  return display && (vendor == 0x10de || vendor == 0x1002);
}

bool is_network_class(unsigned pci_class) { return (pci_class >> 8) == 0x02; }

void finalize_topology(Topology& topology) {
  auto by_address = [](const auto& x, const auto& y) { return x.address < y.address; };
  std::sort(topology.gpus.begin(), topology.gpus.end(), by_address);
  std::sort(topology.nics.begin(), topology.nics.end(), by_address);
  for (std::size_t i = 1; i < topology.gpus.size(); ++i)
    if (topology.gpus[i].address == topology.gpus[i - 1].address)
      throw TopologyError(topology.source + ": GPU " + topology.gpus[i].address.to_string() + " listed twice");
  for (const Gpu& gpu : topology.gpus) topology.all_cpus = topology.all_cpus | gpu.local_cpus;
  for (const Nic& nic : topology.nics) topology.all_cpus = topology.all_cpus | nic.local_cpus;
}

Topology load_topology_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw TopologyError("cannot read topology file " + path + ": check topology= in plugstack.conf");
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  // The first element after the XML declaration, comments and doctype decides.
  std::size_t pos = 0;
  while ((pos = head.find('<', pos)) != std::string::npos) {
    const char next = pos + 1 < head.size() ? head[pos + 1] : '\0';
    if (next == '?' || next == '!') { ++pos; continue; }
    break;
  }
  if (pos != std::string::npos) {
    if (head.compare(pos, 9, "<topology") == 0) return load_hwloc_xml(path);
    if (head.compare(pos, 7, "<system") == 0) return load_nccl_topology_xml(path);
  }
  throw TopologyError(path + ": not a topology file (expected an hwloc XML <topology> or an NCCL <system> root)");
}

}  // namespace gpudirect
