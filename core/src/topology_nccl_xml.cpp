// Topology from an NCCL topology XML file (NCCL_TOPO_FILE format):
//   <system><cpu numaid="0" affinity="ffff,..."><pci busid=".." class="0x060400">
//     <pci busid=".." class="0x030200" vendor="0x10de" device="0x2330"><gpu .../></pci>
//     <pci busid=".." class="0x020000"><nic><net name="enp6s0" .../></nic></pci></pci></cpu></system>
#include "gpudirect/topology_sources.hpp"

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <cstring>
#include <memory>
#include <optional>

namespace gpudirect {
namespace {

struct DocDeleter {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};

std::optional<std::string> attribute(xmlNode* node, const char* name) {
  xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));
  if (!value) return std::nullopt;
  std::string out(reinterpret_cast<const char*>(value));
  xmlFree(value);
  return out;
}

bool is_element(xmlNode* node, const char* name) {
  return node->type == XML_ELEMENT_NODE && std::strcmp(reinterpret_cast<const char*>(node->name), name) == 0;
}

// RDMA device names (mlx5_0, efa_0, rdmap16s27, bnxt_re0, irdma0) versus netdev names (eth1, ib0).
bool looks_like_rdma_device(const std::string& name) {
  return name.find('_') != std::string::npos || name.starts_with("rdmap") || name.starts_with("bnxt_re") ||
         name.starts_with("irdma");
}

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) { topology_.source = "nccl-xml:" + path_; }

  Topology read() {
    std::unique_ptr<xmlDoc, DocDeleter> doc(
        xmlReadFile(path_.c_str(), nullptr, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
    if (!doc) fail("not well-formed XML (truncated or not XML)");
    xmlNode* root = xmlDocGetRootElement(doc.get());
    if (!root || !is_element(root, "system")) fail("root element must be <system>");
    visit_children(root, -1, CpuSet{}, {});
    finalize_topology(topology_);
    return std::move(topology_);
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw TopologyError(path_ + ": " + why); }

  unsigned parse_number(xmlNode* node, const char* name, unsigned fallback) const {
    const auto text = attribute(node, name);
    if (!text) return fallback;
    try {
      std::size_t used = 0;
      const unsigned long value = std::stoul(*text, &used, 0);
      if (used != text->size() || value > 0xffffffffUL) throw std::invalid_argument("trailing");
      return static_cast<unsigned>(value);
    } catch (const std::exception&) {
      fail(std::string("attribute ") + name + "=\"" + *text + "\" is not a number");
    }
  }

  void visit_children(xmlNode* parent, int numa, const CpuSet& cpus, const std::vector<PciAddress>& path) {
    for (xmlNode* child = parent->children; child; child = child->next) visit(child, numa, cpus, path);
  }

  void visit(xmlNode* node, int numa, const CpuSet& cpus, const std::vector<PciAddress>& path) {
    if (is_element(node, "cpu")) {
      const int numa_id = static_cast<int>(parse_number(node, "numaid", static_cast<unsigned>(-1)));
      CpuSet local;
      if (const auto affinity = attribute(node, "affinity")) {
        try {
          local = CpuSet::parse_hex_mask(*affinity);
        } catch (const std::invalid_argument&) {
          fail("<cpu affinity=\"" + *affinity + "\"> is not a hex CPU mask");
        }
      }
      visit_children(node, numa_id, local, {});
    } else if (is_element(node, "pci")) {
      visit_pci(node, numa, cpus, path);
    } else if (node->type == XML_ELEMENT_NODE) {
      visit_children(node, numa, cpus, path);
    }
  }

  void visit_pci(xmlNode* node, int numa, const CpuSet& cpus, const std::vector<PciAddress>& path) {
    const auto busid = attribute(node, "busid");
    if (!busid) fail("a <pci> element has no busid attribute");
    PciAddress address;
    try {
      address = PciAddress::parse(*busid);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
    unsigned pci_class = parse_number(node, "class", 0);
    if (pci_class > 0xffff) pci_class >>= 8;  // NCCL writes the 24-bit class code (0x030200)
    const unsigned vendor = parse_number(node, "vendor", 0);

    xmlNode* gpu_element = nullptr;
    xmlNode* nic_element = nullptr;
    for (xmlNode* child = node->children; child; child = child->next) {
      if (is_element(child, "gpu")) gpu_element = child;
      if (is_element(child, "nic")) nic_element = child;
    }
    if (gpu_element || is_gpu_class(pci_class, vendor)) {
      Gpu gpu;
      gpu.address = address;
      gpu.vendor = vendor == 0x1002 ? GpuVendor::amd : GpuVendor::nvidia;
      gpu.device_id = parse_number(node, "device", 0);
      gpu.numa_node = numa;
      gpu.local_cpus = cpus;
      gpu.switch_path = path;
      topology_.gpus.push_back(std::move(gpu));
    } else if (nic_element || is_network_class(pci_class)) {
      Nic nic;
      nic.address = address;
      nic.numa_node = numa;
      nic.local_cpus = cpus;
      nic.switch_path = path;
      if (nic_element)
        for (xmlNode* net = nic_element->children; net; net = net->next) {
          if (!is_element(net, "net")) continue;
          const auto name = attribute(net, "name");
          if (!name) continue;
          std::string& slot = looks_like_rdma_device(*name) ? nic.rdma_device : nic.interface_name;
          if (slot.empty()) slot = *name;
        }
      topology_.nics.push_back(std::move(nic));
    } else {
      std::vector<PciAddress> below = path;
      below.push_back(address);  // a bridge or switch port: everything inside hangs below it
      visit_children(node, numa, cpus, below);
    }
  }

  std::string path_;
  Topology topology_;
};

}  // namespace

Topology load_nccl_topology_xml(const std::string& path) { return Reader(path).read(); }

}  // namespace gpudirect
