// What every topology source shares: the PCIe-switch distance, device classes, the final checks,
// and the file sniffer that picks the reader.
#include "gpudirect/topology.hpp"

#include "gpudirect/topology_sources.hpp"
#include "topology_xml.hpp"

#include <algorithm>

namespace gpudirect {

int shared_switch_depth(const std::vector<PciAddress>& a, const std::vector<PciAddress>& b) {
  const auto [a_end, b_end] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<int>(a_end - a.begin());
}

bool is_gpu_class(unsigned pci_class, unsigned vendor) {
  const bool display = pci_class == 0x0300 || pci_class == 0x0302;  // VGA or 3D controller
  return display && (vendor == 0x10de || vendor == 0x1002);          // NVIDIA or AMD
}

bool is_network_class(unsigned pci_class) { return (pci_class >> 8) == 0x02; }

void finalize_topology(Topology& topology) {
  const auto by_address = [](const auto& x, const auto& y) { return x.address < y.address; };
  std::sort(topology.gpus.begin(), topology.gpus.end(), by_address);
  std::sort(topology.nics.begin(), topology.nics.end(), by_address);
  const auto check_unique = [&](const auto& devices, const char* kind) {
    for (std::size_t i = 1; i < devices.size(); ++i)
      if (devices[i].address == devices[i - 1].address)
        throw TopologyError(topology.source + ": " + kind + " " + devices[i].address.to_string() +
                            " is listed twice");
  };
  check_unique(topology.gpus, "GPU");
  check_unique(topology.nics, "NIC");
  for (const Gpu& gpu : topology.gpus) topology.all_cpus = topology.all_cpus | gpu.local_cpus;
  for (const Nic& nic : topology.nics) topology.all_cpus = topology.all_cpus | nic.local_cpus;
}

Topology load_hwloc_xml(const std::string& path) {
  const std::string bytes = topology_xml::read_file(path);
  const auto doc = topology_xml::parse(path, bytes);
  if (!topology_xml::is_element(xmlDocGetRootElement(doc.get()), "topology"))
    throw TopologyError(path + ": not hwloc XML (the root element is not <topology>)");
  return topology_xml::read_hwloc(path, bytes, *doc);
}

Topology load_nccl_topology_xml(const std::string& path) {
  const std::string bytes = topology_xml::read_file(path);
  const auto doc = topology_xml::parse(path, bytes);
  if (!topology_xml::is_element(xmlDocGetRootElement(doc.get()), "system"))
    throw TopologyError(path + ": not NCCL topology XML (the root element is not <system>)");
  return topology_xml::read_nccl(path, *doc);
}

Topology load_topology_file(const std::string& path) {
  const std::string bytes = topology_xml::read_file(path);
  const auto doc = topology_xml::parse(path, bytes);
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  if (topology_xml::is_element(root, "topology")) return topology_xml::read_hwloc(path, bytes, *doc);
  if (topology_xml::is_element(root, "system")) return topology_xml::read_nccl(path, *doc);
  throw TopologyError(path + ": the root element <" + std::string(reinterpret_cast<const char*>(root->name)) +
                      "> is neither hwloc's <topology> nor NCCL's <system>; write the file with "
                      "`lstopo --of xml` or NCCL_TOPO_DUMP_FILE");
}

}  // namespace gpudirect
