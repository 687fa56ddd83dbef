// The loaders (topology_sources.hpp) and what every source shares: device classes, the final
// checks, and the file sniffer that picks the reader.
#include "gpudirect/topology_sources.hpp"

#include "gpudirect/nic_kind.hpp"
#include "gpudirect/text.hpp"
#include "topology/xml.hpp"

#include <algorithm>
#include <tuple>

namespace gpudirect {

bool is_gpu_class(unsigned pci_class, unsigned vendor, unsigned device) {
  // VGA, 3D controller, or "display controller" (0x0380: AMD Instinct MI100/MI200).
  const bool display = pci_class == 0x0300 || pci_class == 0x0302 || pci_class == 0x0380;
  if (vendor == 0x10de) return display;
  if (vendor != 0x1002) return false;
  // ATI ES1000 / Radeon 7000: the BMC's VGA on older servers, not a GPU.
  if (device == 0x515e || device == 0x5159) return false;
  return display || pci_class == 0x1200;  // 0x1200 processing accelerator: MI300X/MI300A
}

bool is_display_or_accelerator_class(unsigned pci_class) { return (pci_class >> 8) == 0x03 || pci_class == 0x1200; }

bool is_network_class(unsigned pci_class) {
  return (pci_class >> 8) == 0x02 || pci_class == 0x0c06;  // 0x0c06: InfiniBand on older HCAs
}

void finalize_topology(Topology& topology) {
  // NICs without a PCI function go last, by name counted as a person counts (mlx5_9 before mlx5_10):
  // the order NCCL lists its virtual NICs in.
  const auto gpu_order = [](const Gpu& x, const Gpu& y) { return x.address < y.address; };
  const auto nic_order = [](const Nic& x, const Nic& y) {
    if (x.address || y.address) return std::tuple(!x.address, x.address, nic_label(x)) < std::tuple(!y.address, y.address, nic_label(y));
    return natural_less(nic_label(x), nic_label(y));
  };
  std::sort(topology.gpus.begin(), topology.gpus.end(), gpu_order);
  std::sort(topology.nics.begin(), topology.nics.end(), nic_order);
  for (std::size_t i = 1; i < topology.gpus.size(); ++i)
    if (topology.gpus[i].address == topology.gpus[i - 1].address)
      throw TopologyError(topology.source + ": GPU " + topology.gpus[i].address.to_string() + " is listed twice");
  for (std::size_t i = 1; i < topology.nics.size(); ++i)
    if (!nic_order(topology.nics[i - 1], topology.nics[i]))
      throw TopologyError(topology.source + ": NIC " + nic_label(topology.nics[i]) + " is listed twice");
  for (const Gpu& gpu : topology.gpus) topology.all_cpus = topology.all_cpus | gpu.local_cpus;
  for (Nic& nic : topology.nics) {
    topology.all_cpus = topology.all_cpus | nic.local_cpus;
    classify_nic(nic);
  }
}

Topology load_hwloc_xml(const std::string& path) {
  const std::string bytes = topology_xml::read_file(path);
  const auto doc = topology_xml::parse(path, bytes);
  if (!topology_xml::is_element(xmlDocGetRootElement(doc.get()), "topology"))
    throw TopologyError(path + ": not hwloc XML (the root element is not <topology>)");
  return topology_xml::read_hwloc(path, *doc);
}

Topology load_nccl_topology_xml(const std::string& path) {
  const std::string bytes = topology_xml::read_file(path);
  const auto doc = topology_xml::parse(path, bytes);
  if (!topology_xml::is_element(xmlDocGetRootElement(doc.get()), "system"))
    throw TopologyError(path + ": not NCCL topology XML (the root element is not <system>)");
  Topology topology = topology_xml::read_nccl(path, *doc);
  resolve_nic_names(topology);
  return topology;
}

Topology load_topology_file(const std::string& path, std::string* hwloc_export) {
  const std::string bytes = topology_xml::read_file(path);
  const auto doc = topology_xml::parse(path, bytes);
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  if (topology_xml::is_element(root, "topology")) return topology_xml::read_hwloc(path, *doc, hwloc_export);
  if (hwloc_export) hwloc_export->clear();
  if (topology_xml::is_element(root, "system")) {
    Topology topology = topology_xml::read_nccl(path, *doc);
    resolve_nic_names(topology);
    return topology;
  }
  throw TopologyError(path + ": the root element <" + std::string(reinterpret_cast<const char*>(root->name)) +
                      "> is neither hwloc's <topology> nor NCCL's <system>; write the file with "
                      "`lstopo --of xml` or NCCL_TOPO_DUMP_FILE");
}

}  // namespace gpudirect
