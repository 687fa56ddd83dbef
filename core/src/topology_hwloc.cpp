// Topology from hwloc: live discovery or an hwloc XML file, one code path for both.
#include "gpudirect/topology_sources.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace gpudirect {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology_t t) const { hwloc_topology_destroy(t); }
};
using HwlocTopology = std::unique_ptr<hwloc_topology, TopologyDeleter>;

CpuSet to_cpuset(hwloc_const_bitmap_t bitmap) {
  CpuSet set;
  if (!bitmap) return set;
  for (int cpu = hwloc_bitmap_first(bitmap); cpu >= 0; cpu = hwloc_bitmap_next(bitmap, cpu)) set.insert(cpu);
  return set;
}

PciAddress address_of(hwloc_obj_t obj) {
  const auto& pci = obj->attr->pcidev;
  return PciAddress{pci.domain, pci.bus, pci.dev, pci.func};
}

// PCI-to-PCI bridges from the host bridge down to the device's parent.
std::vector<PciAddress> switch_path_of(hwloc_obj_t obj) {
  std::vector<PciAddress> path;
  for (hwloc_obj_t parent = obj->parent; parent && parent->type == HWLOC_OBJ_BRIDGE; parent = parent->parent) {
    if (parent->attr->bridge.upstream_type != HWLOC_OBJ_BRIDGE_PCI) break;  // host bridge: the root
    path.push_back(address_of(parent));
  }
  std::reverse(path.begin(), path.end());
  return path;
}

void locality(hwloc_topology_t topo, hwloc_obj_t obj, int& numa, CpuSet& cpus) {
  hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(topo, obj);
  if (!anchor) return;
  cpus = to_cpuset(anchor->cpuset);
  if (anchor->nodeset && hwloc_bitmap_weight(anchor->nodeset) == 1) numa = hwloc_bitmap_first(anchor->nodeset);
}

Topology load(const char* xml_path) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw TopologyError("hwloc_topology_init failed");
  HwlocTopology topo(raw);
  const std::string source = xml_path ? std::string("hwloc-xml:") + xml_path : "hwloc";
  // hwloc drops I/O objects unless asked: we need PCI devices, bridges and OS devices.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (xml_path && hwloc_topology_set_xml(raw, xml_path) != 0)
    throw TopologyError(std::string(xml_path) + ": not a valid hwloc XML topology");
  if (hwloc_topology_load(raw) != 0)
    throw TopologyError(xml_path ? std::string(xml_path) + ": hwloc could not load this XML topology"
                                 : std::string("hwloc could not discover this node's topology"));

  Topology topology;
  topology.source = source;
  topology.all_cpus = to_cpuset(hwloc_topology_get_topology_cpuset(raw));
  for (hwloc_obj_t obj = hwloc_get_next_pcidev(raw, nullptr); obj; obj = hwloc_get_next_pcidev(raw, obj)) {
    const auto& pci = obj->attr->pcidev;
    if (is_gpu_class(pci.class_id, pci.vendor_id)) {
      Gpu gpu;
      gpu.address = address_of(obj);
      gpu.vendor = pci.vendor_id == 0x10de ? GpuVendor::nvidia : GpuVendor::amd;
      gpu.device_id = pci.device_id;
      gpu.switch_path = switch_path_of(obj);
      locality(raw, obj, gpu.numa_node, gpu.local_cpus);
      topology.gpus.push_back(std::move(gpu));
    } else if (is_network_class(pci.class_id)) {
      Nic nic;
      nic.address = address_of(obj);
      nic.switch_path = switch_path_of(obj);
      locality(raw, obj, nic.numa_node, nic.local_cpus);
      for (hwloc_obj_t child = obj->io_first_child; child; child = child->next_sibling) {
        if (child->type != HWLOC_OBJ_OS_DEVICE || !child->name) continue;
        if (child->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && nic.interface_name.empty())
          nic.interface_name = child->name;
        else if (child->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && nic.rdma_device.empty())
          nic.rdma_device = child->name;
      }
      topology.nics.push_back(std::move(nic));
    }
  }
  finalize_topology(topology);
  return topology;
}

}  // namespace

Topology load_live_topology() { return load(nullptr); }

Topology load_hwloc_xml(const std::string& path) { return load(path.c_str()); }

}  // namespace gpudirect
