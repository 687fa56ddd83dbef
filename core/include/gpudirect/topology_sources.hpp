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

Topology load_live_topology();
Topology load_hwloc_xml(const std::string& path);
Topology load_nccl_topology_xml(const std::string& path);
// Looks at the root element: <topology> is hwloc XML, <system> is NCCL topology XML.
Topology load_topology_file(const std::string& path);

// Shared by the sources: classifies a PCI function. `pci_class` is the 16-bit class (0x0302).
bool is_gpu_class(unsigned pci_class, unsigned vendor);
bool is_network_class(unsigned pci_class);
// Sorts devices by address and checks what every source must guarantee.
void finalize_topology(Topology& topology);

}  // namespace gpudirect
