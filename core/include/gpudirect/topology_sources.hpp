// Where a Topology comes from: live hwloc discovery, an hwloc XML file, or an NCCL topology XML
// file (the NCCL_TOPO_FILE format cloud providers publish). All three give the same model.
#pragma once

#include "gpudirect/topology.hpp"

#include <stdexcept>
#include <string>

namespace gpudirect {

class TopologyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// hwloc_export: when not null, receives hwloc's own XML of what it loaded (empty for NCCL files),
// which topology_cache.hpp keeps so that later loads skip discovery and the file checks.
Topology load_live_topology(std::string* hwloc_export = nullptr);
Topology load_hwloc_xml(const std::string& path);
Topology load_nccl_topology_xml(const std::string& path);
// Looks at the root element: <topology> is hwloc XML, <system> is NCCL topology XML.
Topology load_topology_file(const std::string& path, std::string* hwloc_export = nullptr);
// XML that hwloc exported in this plugin's own cache (not a file a user wrote: no libxml2 checks);
// `source` names where it came from originally ("hwloc", "hwloc-xml:<path>").
Topology load_exported_hwloc_xml(const std::string& xml, const std::string& source);

// Names NICs a file knows only by bus id (a bare NCCL <pci>) from this node's sysfs
// (<sysfs_root>/bus/pci/devices/<bus id>/{net,infiniband}/), when that device is a network
// device here. Offline, on another machine, they stay known by bus id.
void resolve_nic_names(Topology& topology, const std::string& sysfs_root = "/sys");

// Shared by the sources: classifies a PCI function. `pci_class` is the 16-bit class (0x0302).
// NVIDIA or AMD display/3D/0x0380 devices and AMD 0x1200 accelerators (MI300), not BMC VGAs.
bool is_gpu_class(unsigned pci_class, unsigned vendor, unsigned device = 0);
bool is_display_or_accelerator_class(unsigned pci_class);
// Network controllers (0x02xx) and InfiniBand serial-bus controllers (0x0c06).
bool is_network_class(unsigned pci_class);
// Sorts devices by address, classifies the NICs (nic_kind.hpp) and checks what every source must
// guarantee.
void finalize_topology(Topology& topology);

}  // namespace gpudirect
