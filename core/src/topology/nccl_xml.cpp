// Topology from an NCCL topology XML file (the NCCL_TOPO_FILE format):
//   <system version="1">
//     <cpu numaid="0" affinity="ffffffff,ffffffff" ...>            one per NUMA node
//       <pci busid="0000:02:00.0" class="0x060400" ...>            a PCIe switch (nested for deeper ones)
//         <pci busid="0000:04:00.0" class="0x030200" vendor="0x10de" device="0x2330"><gpu dev="0"/></pci>
//         <pci busid="0000:06:00.0" class="0x020000"><nic><net name="enp6s0"/></nic></pci>
//       <nic><net name="eth1" .../></nic>                            NICs without a PCI function
//       <pci busid="0002:00:00.0" class="0x060000"><nic><net name="mlx5_5"/>...</nic></pci>   or behind a bridge
// NCCL writes one <pci> per switch, so switch_path here is the chain of enclosing <pci> elements.
#include "gpudirect/text.hpp"
#include "gpudirect/topology_sources.hpp"
#include "topology/xml.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace gpudirect {
namespace {

using topology_xml::attribute;
using topology_xml::is_element;

// What NCCL's net plugins name a NIC: the RDMA device (mlx5_0, efa_0, rdmap16s27, bnxt_re0, irdma0,
// rocep12s0; mlx5_bond_0 for bonded RoCE ports, as on ConnectX-8 SuperNIC nodes) for IB/EFA/RoCE, the
// netdev (enp6s0, eth1, ib0) for sockets. InfiniBand controllers (class 0x0207) and Amazon EFA (vendor
// 0x1d0f with an RDMA-style name) are RDMA devices whatever the name.
bool is_rdma_name(const std::string& name, unsigned pci_class, unsigned vendor) {
  if (pci_class == 0x0207) return true;
  static const std::regex driver_index("[a-z][a-z0-9]*(_bond)?_[0-9]+");  // mlx5_0, efa_0, hfi1_0, mlx5_bond_0
  static const std::regex udev_rdma("(rdmap|rocep|roceo|ibp|bnxt_re|irdma|qedr)[0-9a-z]*");
  if (std::regex_match(name, driver_index) || std::regex_match(name, udev_rdma)) return true;
  return vendor == 0x1d0f && name.starts_with("efa");
}

// Host-side virtual interfaces (container bridges and veths, Calico, Flannel, CNI, tunnels and VPNs
// such as Tailscale and WireGuard): NCCL's socket transport lists them under every <cpu> of a
// container host (and a DGX Spark's dump lists tailscale0). They carry no GPU traffic.
bool is_virtual_interface(const std::string& name) {
  static const std::regex virtual_name(
      "lo|(br-|veth|cali|docker|flannel|cni|virbr|vxlan|tunl|tun|tap|kube-|cilium_|lxc|weave|vnet|genev|nodelocaldns|"
      "tailscale|wg).*");
  return std::regex_match(name, virtual_name);
}

class NcclReader {
 public:
  explicit NcclReader(const std::string& path) : path_(path) { topology_.source = "nccl-xml:" + path; }

  Topology read(const xmlDoc& doc) {
    const xmlNode* root = xmlDocGetRootElement(&doc);
    bool saw_cpu = false;
    // NCCL >= 2.19 writes each <cpu>'s host_hash; a dump of a multi-node NVLink domain (GB200/GB300
    // NVL72) fuses the <cpu>s of every host of the domain into one file. Each host's part is a node:
    // the first host's is read, the others' devices (the same bus ids again) are skipped, and the
    // source says so.
    std::optional<std::string> first_host;
    std::vector<std::string> other_hosts;
    for (const xmlNode* node = root->children; node; node = node->next) {
      if (is_element(node, "cpu")) {
        const std::string host(attribute(node, "host_hash").value_or(""));
        if (!first_host) first_host = host;
        if (host != *first_host) {
          if (std::find(other_hosts.begin(), other_hosts.end(), host) == other_hosts.end()) other_hosts.push_back(host);
          continue;
        }
        read_cpu(node);
        saw_cpu = true;
      } else {
        reject_misplaced_devices(node, "<system>");
      }
    }
    if (!saw_cpu) fail(root, "<system> has no <cpu> element; NCCL topology files list devices per <cpu numaid=...>");
    if (!other_hosts.empty())
      topology_.source +=
          " (the first of " + std::to_string(other_hosts.size() + 1) + " hosts the file fuses: host_hash " + *first_host + ")";
    finalize_topology(topology_);
    return std::move(topology_);
  }

 private:
  struct Place {  // where a device hangs: its NUMA node's CPUs and the switches above it
    int numa_node = -1;
    CpuSet cpus;
    std::vector<PciAddress> switches;
  };

  [[noreturn]] void fail(const xmlNode* node, const std::string& why) const {
    throw TopologyError(path_ + ": line " + std::to_string(xmlGetLineNo(node)) + ": " + why);
  }

  // NCCL writes numbers as hex with 0x (class, vendor) or decimal (numaid).
  std::optional<unsigned> number(const xmlNode* node, const char* name) const {
    const auto text = attribute(node, name);
    if (!text) return std::nullopt;
    std::string_view digits = *text;
    int base = 10;
    if (digits.starts_with("0x") || digits.starts_with("0X")) {
      digits.remove_prefix(2);
      base = 16;
    }
    unsigned value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
    if (digits.empty() || ec != std::errc{} || ptr != digits.data() + digits.size())
      fail(node, std::string("attribute ") + name + "=\"" + *text + "\" is not a number");
    return value;
  }

  void read_cpu(const xmlNode* cpu) {
    Place place;
    // NCCL writes numaid="-1" where the kernel knows no NUMA node (many VMs).
    if (attribute(cpu, "numaid") != "-1")
      if (const auto numa = number(cpu, "numaid")) {
        if (*numa > 0xffff) fail(cpu, "<cpu numaid=\"" + std::to_string(*numa) + "\"> is not a NUMA node number");
        place.numa_node = static_cast<int>(*numa);
      }
    // NCCL fills affinity from /sys/devices/system/node/node<numaid>/cpumap, so it writes none where
    // the kernel knows no NUMA node (numaid="-1", e.g. a DGX Spark's GB10), and reads a file without
    // one by looking at that node on the machine it runs on. A file alone then cannot say which CPUs
    // are local: the devices of such a <cpu> get no local CPUs (bind_task keeps Slurm's CPUs).
    if (const auto affinity = attribute(cpu, "affinity")) {
      try {
        place.cpus = CpuSet::parse_hex_mask(*affinity);
      } catch (const std::invalid_argument& e) {
        fail(cpu, std::string("<cpu affinity> is not a CPU mask: ") + e.what());
      }
    }
    topology_.all_cpus = topology_.all_cpus | place.cpus;
    for (const xmlNode* node = cpu->children; node; node = node->next) {
      if (is_element(node, "pci"))
        read_pci(node, place);
      else if (is_element(node, "nic"))
        read_nics_without_function(node, place, std::nullopt);
      else
        reject_misplaced_devices(node, "<cpu>");
    }
  }

  // A <gpu> outside a <pci busid=...> has no address we could bind by; a <nic> needs a <cpu>.
  void reject_misplaced_devices(const xmlNode* node, const char* parent) const {
    if (is_element(node, "gpu"))
      fail(node, std::string("<gpu> directly inside ") + parent + " has no PCI bus id; wrap it in <pci busid=\"DDDD:BB:DD.F\" ...>");
    if (is_element(node, "nic") || is_element(node, "pci"))
      fail(node, std::string("<") + reinterpret_cast<const char*>(node->name) + "> inside " + parent + " is outside any <cpu>");
  }

  // NICs NCCL found no PCI function for, in one <nic>, a <net> each: the virtual NICs of cloud VMs
  // directly under a <cpu> (local to it, on no switch), or a VM's HCAs under the host bridge they sit
  // behind (a B200 VM: several HCAs per bridge; then `domain` is the bridge's PCI domain). <net>s
  // with one guid are ports of one HCA, hence one NIC.
  void read_nics_without_function(const xmlNode* nic_element, const Place& place, std::optional<unsigned> domain) {
    std::vector<std::pair<std::string, std::size_t>> by_guid;  // guid -> index in topology_.nics
    for (const xmlNode* net = nic_element->children; net; net = net->next) {
      if (!is_element(net, "net")) continue;
      const std::string name = net_name(net);
      if (is_virtual_interface(name)) continue;
      const std::string guid(attribute(net, "guid").value_or(""));
      const auto same_hca = std::find_if(by_guid.begin(), by_guid.end(), [&](const auto& seen) { return seen.first == guid; });
      if (!guid.empty() && same_hca != by_guid.end()) {
        Nic& nic = topology_.nics[same_hca->second];
        nic.port_speed_gbps = std::max(nic.port_speed_gbps, port_speed(net));
        continue;
      }
      if (!guid.empty()) by_guid.emplace_back(guid, topology_.nics.size());
      Nic nic;
      nic.pci_domain = domain;
      nic.numa_node = place.numa_node;
      nic.local_cpus = place.cpus;
      nic.switch_path = place.switches;
      nic.port_speed_gbps = port_speed(net);
      (is_rdma_name(name, 0, 0) ? nic.rdma_device : nic.interface_name) = name;
      topology_.nics.push_back(std::move(nic));
    }
  }

  // A <net>'s speed in Gb/s (NCCL writes Mb/s); 0 when absent or unreadable: only a hint for pairing.
  static float port_speed(const xmlNode* net) {
    const auto text = attribute(net, "speed");
    // parse_number_prefix, not from_chars(float): GCC 10's libstdc++ (Debian 11) has no floating-point from_chars.
    const auto mbps = text ? parse_number_prefix(*text) : std::nullopt;
    if (!mbps || !(mbps->first > 0)) return 0;
    return static_cast<float>(mbps->first / 1000.0);
  }

  std::string net_name(const xmlNode* net) const {
    const auto name = attribute(net, "name");
    if (!name || name->empty()) fail(net, "<net> has no name attribute");
    return *name;
  }

  void read_pci(const xmlNode* node, const Place& place) {
    const auto busid = attribute(node, "busid");
    if (!busid) fail(node, "a <pci> element has no busid attribute");
    PciAddress address;
    try {
      address = PciAddress::parse(*busid);
    } catch (const std::invalid_argument& e) {
      fail(node, e.what());
    }
    unsigned pci_class = number(node, "class").value_or(0);
    if (pci_class > 0xffff) pci_class >>= 8;  // NCCL writes the 24-bit class code (0x030200)
    const unsigned vendor = number(node, "vendor").value_or(0);

    const xmlNode* gpu_element = nullptr;
    const xmlNode* nic_element = nullptr;
    bool has_pci_children = false;
    for (const xmlNode* child = node->children; child; child = child->next) {
      if (is_element(child, "gpu")) gpu_element = child;
      if (is_element(child, "nic")) nic_element = child;
      if (is_element(child, "pci")) has_pci_children = true;
    }
    // A GPU is what NCCL marked <gpu>, an NVIDIA/AMD GPU class, or a display/3D device with no vendor
    // at all (cloud files such as Azure's ND ones list GPUs as bare class-0x0302 <pci>); an ASPEED
    // BMC VGA names its vendor and is not.
    const bool vendor_listed = attribute(node, "vendor").has_value();
    const bool bare_display = !vendor_listed && !has_pci_children && (pci_class == 0x0300 || pci_class == 0x0302 || pci_class == 0x0380);
    if (gpu_element || is_gpu_class(pci_class, vendor, number(node, "device").value_or(0)) || bare_display) {
      Gpu gpu;
      gpu.address = address;
      gpu.vendor = vendor == 0x1002 ? GpuVendor::amd : GpuVendor::nvidia;
      gpu.device_id = number(node, "device").value_or(0);
      gpu.numa_node = place.numa_node;
      gpu.local_cpus = place.cpus;
      gpu.switch_path = place.switches;
      topology_.gpus.push_back(std::move(gpu));
    } else if (nic_element && (pci_class >> 8) == 0x06) {
      // A <nic> inside a bridge (class 0x06xx): NICs whose own function NCCL did not find, behind it.
      Place below = place;
      below.switches.push_back(address);
      read_nics_without_function(nic_element, below, address.domain);
      for (const xmlNode* child = node->children; child; child = child->next)
        if (is_element(child, "pci")) read_pci(child, below);
    } else if (nic_element || is_network_class(pci_class)) {
      Nic nic;
      nic.address = address;
      nic.pci_class = pci_class;
      nic.vendor = vendor;
      nic.device_id = number(node, "device").value_or(0);
      nic.names_listed = false;  // NCCL lists only NICs it uses; a bare <pci> is known by bus id alone
      nic.numa_node = place.numa_node;
      nic.local_cpus = place.cpus;
      nic.switch_path = place.switches;
      if (nic_element)
        for (const xmlNode* net = nic_element->children; net; net = net->next) {
          if (!is_element(net, "net")) continue;
          const std::string name = net_name(net);
          nic.port_speed_gbps = std::max(nic.port_speed_gbps, port_speed(net));
          std::string& slot = is_rdma_name(name, pci_class, vendor) ? nic.rdma_device : nic.interface_name;
          if (slot.empty()) slot = name;  // a second <net> is another port of the same function
        }
      topology_.nics.push_back(std::move(nic));
    } else if (has_pci_children) {  // a switch or bridge: what is inside hangs below it
      Place below = place;
      below.switches.push_back(address);
      for (const xmlNode* child = node->children; child; child = child->next)
        if (is_element(child, "pci")) read_pci(child, below);
    }
    // Anything else (NVSwitch, BMC VGA, storage) is neither GPU nor NIC and does not matter here.
  }

  std::string path_;
  Topology topology_;
};

}  // namespace

namespace topology_xml {

Topology read_nccl(const std::string& path, const xmlDoc& doc) { return NcclReader(path).read(doc); }

}  // namespace topology_xml

}  // namespace gpudirect
