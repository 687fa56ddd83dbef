// Names for NICs a topology file knows only by bus id, from the live node's sysfs.
#include "gpudirect/nic_kind.hpp"
#include "gpudirect/topology_sources.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace gpudirect {
namespace {

std::string first_entry(const std::filesystem::path& dir) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names.empty() ? std::string() : names.front();
}

// sysfs "class" holds the 24-bit class code, e.g. "0x020700".
bool is_network_device(const std::filesystem::path& device) {
  std::ifstream in(device / "class");
  std::string text;
  if (!(in >> text)) return false;
  try {
    return is_network_class(static_cast<unsigned>(std::stoul(text, nullptr, 16) >> 8));
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

void resolve_nic_names(Topology& topology, const std::string& sysfs_root) {
  for (Nic& nic : topology.nics) {
    if (!nic.address || !nic.interface_name.empty() || !nic.rdma_device.empty()) continue;
    const std::filesystem::path device = std::filesystem::path(sysfs_root) / "bus/pci/devices" / nic.address->to_string();
    if (!is_network_device(device)) continue;  // not this machine's NIC: keep the bus id
    nic.interface_name = first_entry(device / "net");
    nic.rdma_device = first_entry(device / "infiniband");
    classify_nic(nic);
  }
}

}  // namespace gpudirect
