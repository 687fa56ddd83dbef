// Topology from hwloc: live discovery or an hwloc XML file, one code path for both.
#include "gpudirect/topology_sources.hpp"
#include "gpudirect/hwloc_plugins.hpp"
#include "topology/xml.hpp"
#include "gpudirect/text.hpp"

#include <dirent.h>
#include <hwloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string_view>

namespace gpudirect {
namespace {

struct TopologyDestroy {
  void operator()(hwloc_topology_t topology) const { hwloc_topology_destroy(topology); }
};
using HwlocTopology = std::unique_ptr<hwloc_topology, TopologyDestroy>;

CpuSet to_cpuset(hwloc_const_bitmap_t bitmap) {
  CpuSet set;
  if (!bitmap || hwloc_bitmap_weight(bitmap) < 0) return set;  // weight -1: infinite set, never a real cpuset
  for (int cpu = hwloc_bitmap_first(bitmap); cpu >= 0; cpu = hwloc_bitmap_next(bitmap, cpu)) set.insert(cpu);
  return set;
}

PciAddress to_address(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci) { return PciAddress{pci.domain, pci.bus, pci.dev, pci.func}; }

// PCI-to-PCI bridges from below the host bridge down to the device's parent.
std::vector<PciAddress> switch_path_of(hwloc_obj_t device) {
  std::vector<PciAddress> path;
  for (hwloc_obj_t parent = device->parent; parent && parent->type == HWLOC_OBJ_BRIDGE; parent = parent->parent) {
    if (parent->attr->bridge.upstream_type != HWLOC_OBJ_BRIDGE_PCI) break;  // the host bridge: the root
    path.push_back(to_address(parent->attr->bridge.upstream.pci));
  }
  std::reverse(path.begin(), path.end());
  return path;
}

// Memory a GPU or other PCI device brings as a NUMA node of its own: hwloc marks NVIDIA GPU memory
// (NVLink on POWER, NVLink-C2C on Grace Hopper / Grace Blackwell) subtype "GPUMemory" and names the
// device in a PCIBusID info; the nodes a GH200 keeps for MIG have no memory at all.
bool is_host_memory(hwloc_obj_t node) {
  if (node->subtype && std::string_view(node->subtype) == "GPUMemory") return false;
  if (hwloc_obj_get_info_by_name(node, "PCIBusID")) return false;
  return node->attr && node->attr->numanode.local_memory > 0;
}

// The NUMA node of a device anchored at an object with several: the one holding host memory, when
// exactly one does (a Grace CPU's node beside its GPU's memory nodes); -1 otherwise.
int host_memory_node(hwloc_topology_t topology, hwloc_obj_t anchor) {
  int found = -1;
  for (hwloc_obj_t node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr); node;
       node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node)) {
    if (node->os_index == HWLOC_UNKNOWN_INDEX || !hwloc_bitmap_isset(anchor->nodeset, node->os_index) || !is_host_memory(node)) continue;
    if (found >= 0) return -1;
    found = static_cast<int>(node->os_index);
  }
  return found;
}

// CPUs of the nearest non-I/O ancestor (package, group, machine), its NUMA node when it has one (or
// one node of host memory beside GPU memory nodes), and the package (socket) it belongs to.
template <typename Device>
void set_locality(hwloc_topology_t topology, hwloc_obj_t device, Device& out) {
  hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(topology, device);
  if (!anchor) return;
  out.local_cpus = to_cpuset(anchor->cpuset);
  if (anchor->nodeset && hwloc_bitmap_weight(anchor->nodeset) == 1)
    out.numa_node = hwloc_bitmap_first(anchor->nodeset);
  else if (anchor->nodeset && hwloc_bitmap_weight(anchor->nodeset) > 1)
    out.numa_node = host_memory_node(topology, anchor);
  hwloc_obj_t package = anchor->type == HWLOC_OBJ_PACKAGE ? anchor : hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_PACKAGE, anchor);
  if (!package && anchor->cpuset)  // I/O attached above the package (a group or the machine) in one package
    package = hwloc_get_next_obj_covering_cpuset_by_type(topology, anchor->cpuset, HWLOC_OBJ_PACKAGE, nullptr);
  if (package && package->os_index != HWLOC_UNKNOWN_INDEX && hwloc_bitmap_isincluded(anchor->cpuset, package->cpuset))
    out.package = static_cast<int>(package->os_index);
}

// The OS's NUMA latency matrix (hwloc keeps it from sysfs or the XML's <distances2>).
void read_numa_distances(hwloc_topology_t raw, Topology& topology) {
  unsigned count = 1;
  hwloc_distances_s* distances = nullptr;
  if (hwloc_distances_get_by_type(raw, HWLOC_OBJ_NUMANODE, &count, &distances, HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 || count == 0 ||
      !distances)
    return;
  const unsigned n = distances->nbobjs;
  for (unsigned i = 0; i < n; ++i)
    for (unsigned j = 0; j < n; ++j)
      topology.numa_distances[{static_cast<int>(distances->objs[i]->os_index), static_cast<int>(distances->objs[j]->os_index)}] =
          static_cast<unsigned>(distances->values[i * n + j]);
  hwloc_distances_release(raw, distances);
}

std::string pci_ids(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci) {
  char text[64];
  std::snprintf(text, sizeof text, "class 0x%04x %04x:%04x", pci.class_id, pci.vendor_id, pci.device_id);
  return text;
}

Topology collect(hwloc_topology_t raw, std::string source) {
  Topology topology;
  topology.source = std::move(source);
  topology.all_cpus = to_cpuset(hwloc_topology_get_topology_cpuset(raw));
  if (const char* host = hwloc_obj_get_info_by_name(hwloc_get_root_obj(raw), "HostName")) topology.host = host;
  read_numa_distances(raw, topology);
  for (hwloc_obj_t obj = hwloc_get_next_pcidev(raw, nullptr); obj; obj = hwloc_get_next_pcidev(raw, obj)) {
    const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci = obj->attr->pcidev;
    if (is_gpu_class(pci.class_id, pci.vendor_id, pci.device_id)) {
      Gpu gpu;
      gpu.address = to_address(pci);
      gpu.vendor = pci.vendor_id == 0x10de ? GpuVendor::nvidia : GpuVendor::amd;
      gpu.device_id = pci.device_id;
      gpu.switch_path = switch_path_of(obj);
      set_locality(raw, obj, gpu);
      topology.gpus.push_back(std::move(gpu));
    } else if (is_display_or_accelerator_class(pci.class_id)) {
      topology.notes.push_back(to_address(pci).to_string() + " (" + pci_ids(pci) +
                               ") is a display or accelerator device but not an NVIDIA or AMD GPU");
    } else if (is_network_class(pci.class_id)) {
      Nic nic;
      nic.address = to_address(pci);
      nic.pci_class = pci.class_id;
      nic.vendor = pci.vendor_id;
      nic.device_id = pci.device_id;
      nic.link_speed_gbs = pci.linkspeed;
      nic.switch_path = switch_path_of(obj);
      set_locality(raw, obj, nic);
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

// The discovery components of the plugins this model does not need (below), turned off for each
// topology through hwloc's API (hwloc >= 2.1): where their plugins are loaded anyway (a process with
// threads, see keep_hwloc_plugins_loaded), they do not look for displays or start GPU runtimes.
void skip_unneeded_discovery(hwloc_topology_t raw) {
#if HWLOC_API_VERSION >= 0x00020100
  for (const char* component : {"gl", "opencl", "cuda", "nvml", "rsmi", "levelzero"})
    hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, component);  // -1: not built here
#else
  (void)raw;
#endif
}

HwlocTopology new_topology(const std::string& what) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw TopologyError(what + ": hwloc_topology_init failed (out of memory?)");
  HwlocTopology topology(raw);
  // hwloc drops I/O objects unless asked: we need PCI devices, bridges and OS devices.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);
  // The GPUs' local CPUs are a fact of the machine: keep CPUs the process that wrote a file (lstopo
  // in a job's cgroup) or this one may not use; Slurm's own CPU set is applied per task later.
  hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  skip_unneeded_discovery(raw);
  return topology;
}

// hwloc's own XML for what it loaded, for the topology cache; empty if it cannot export.
std::string export_xml(hwloc_topology_t raw) {
  char* buffer = nullptr;
  int length = 0;
  if (hwloc_topology_export_xmlbuffer(raw, &buffer, &length, 0) != 0 || !buffer) return "";
  std::string xml(buffer, length > 0 ? static_cast<std::size_t>(length - 1) : 0);  // length counts the NUL
  hwloc_free_xmlbuffer(raw, buffer);
  return xml;
}

// hwloc loads its plugins (hwloc_pci with libpciaccess, opencl, gl) with the first topology and
// unloads them with the last. Reloading costs ~6 ms per load (an 8-GPU XML file takes 1.3 ms
// instead of 8 ms when they stay), and every unload loses the ~1 KB libpciaccess still holds (ASan
// reports it). One handle kept for the life of the process keeps them loaded; it is destroyed when
// the plugin is unloaded (dlclose), so a reloaded plugin does not lose it each time.
//
// Only the PCI plugin is needed (the Linux, XML and synthetic readers are built in): the others cost
// each process that loads a topology time (about 17 ms of CPU on the test machine with Debian's
// libhwloc-plugins: hwloc_xml_libxml loads libxml2 and ICU, hwloc_gl X11 libraries; the
// opencl/cuda/nvml/rsmi/levelzero ones load and initialise GPU runtimes where they are built) and
// only add OS devices under GPUs, which this model never reads.
//
// Which plugins hwloc loads it reads only from the environment (HWLOC_PLUGINS_BLACKLIST, when the
// first topology is created: this one); hwloc has no API for it. setenv is not thread-safe (another
// thread's getenv may read a freed array) and slurmstepd, where the plugin runs as root, has
// threads of its own (its message thread starts before any SPANK callback). So the variable is set
// only while this process provably has one thread, and removed again at once. slurmstepd, and
// gpudirect-launch (OpenBLAS starts its thread pool when it is loaded), always have more: there the
// plugins load (about 2 ms of CPU on the test machine) and skip_unneeded_discovery keeps their
// components idle. An admin who wants them left out there sets HWLOC_PLUGINS_BLACKLIST in slurmd's
// environment, which slurmstepd inherits (a job's environment is not slurmstepd's).
constexpr const char* kUnneededHwlocPlugins = "hwloc_xml_libxml,hwloc_gl,hwloc_opencl,hwloc_cuda,hwloc_nvml,hwloc_rsmi,hwloc_levelzero";

// True only if this process has exactly one thread: then no other thread can start or run while
// the caller does what needs that. Unknown (no /proc) counts as more.
bool only_thread() {
  DIR* tasks = ::opendir("/proc/self/task");
  if (!tasks) return false;
  int threads = 0;
  while (const dirent* entry = ::readdir(tasks))
    if (entry->d_name[0] != '.') ++threads;
  ::closedir(tasks);
  return threads == 1;
}

// hwloc's first topology, with the unneeded plugins left unloaded when that is safe (see above).
hwloc_topology_t first_topology() {
  hwloc_topology_t topology = nullptr;
  const bool set_list = std::getenv("HWLOC_PLUGINS_BLACKLIST") == nullptr && only_thread();
  if (set_list) ::setenv("HWLOC_PLUGINS_BLACKLIST", kUnneededHwlocPlugins, 1);
  if (hwloc_topology_init(&topology) != 0) topology = nullptr;
  if (set_list) ::unsetenv("HWLOC_PLUGINS_BLACKLIST");
  return topology;
}

}  // namespace

void keep_hwloc_plugins_loaded() {
  struct Pin {
    hwloc_topology_t topology = first_topology();
    Pin() = default;
    ~Pin() {
      if (topology) hwloc_topology_destroy(topology);
    }
    Pin(const Pin&) = delete;
    Pin& operator=(const Pin&) = delete;
  };
  static const Pin pin;
}

namespace topology_xml {

Topology read_hwloc(const std::string& path, const xmlDoc& doc, std::string* hwloc_export) {
  const std::string xml = canonical_hwloc_xml(path, doc);
  keep_hwloc_plugins_loaded();
  HwlocTopology topology = new_topology(path);
  // hwloc wants the length including the terminating NUL, which std::string guarantees.
  if (hwloc_topology_set_xmlbuffer(topology.get(), xml.c_str(), static_cast<int>(xml.size() + 1)) != 0)
    throw TopologyError(path + ": hwloc cannot read XML (its XML support is missing?)");
  if (hwloc_topology_load(topology.get()) != 0)
    throw TopologyError(path + ": hwloc rejected this XML topology; check it with `lstopo --input " + path + "`");
  if (hwloc_export) *hwloc_export = export_xml(topology.get());
  return collect(topology.get(), "hwloc-xml:" + path);
}

}  // namespace topology_xml

Topology load_live_topology(std::string* hwloc_export) {
  keep_hwloc_plugins_loaded();
  HwlocTopology topology = new_topology("live topology");
  if (hwloc_topology_load(topology.get()) != 0)
    throw TopologyError("hwloc could not discover this node's topology; set topology=FILE to use a saved one");
  // Every real node has PCI devices: none means hwloc could not read them (its PCI component, a
  // plugin in Debian's libhwloc-plugins, is not installed, or a namespace or container hides
  // /sys/bus/pci). Said in the source, so "no GPUs" messages tell why.
  if (!hwloc_get_next_pcidev(topology.get(), nullptr))
    return collect(topology.get(),
                   "hwloc, which saw no PCI devices: its PCI component is missing (Debian: install "
                   "libhwloc-plugins) or /sys/bus/pci is empty or unreadable where slurmd runs; "
                   "give it the host's /sys, or set topology=FILE in plugstack.conf");
  // Not cached without PCI devices: the next load must find (and say) the same again.
  if (hwloc_export) *hwloc_export = export_xml(topology.get());
  return collect(topology.get(), "hwloc");
}

Topology load_exported_hwloc_xml(const std::string& xml, const std::string& source) {
  keep_hwloc_plugins_loaded();
  HwlocTopology topology = new_topology(source);
  if (hwloc_topology_set_xmlbuffer(topology.get(), xml.c_str(), static_cast<int>(xml.size() + 1)) != 0 ||
      hwloc_topology_load(topology.get()) != 0)
    throw TopologyError("hwloc rejected the cached XML of " + source);
  return collect(topology.get(), source);
}

}  // namespace gpudirect
