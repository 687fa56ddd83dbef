#include "gpudirect/nic_kind.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>

namespace gpudirect {
namespace {

// 1GbE (and 2.5GbE) parts found as LOM/management ports on servers and workstations.
constexpr std::array<std::pair<unsigned, unsigned>, 24> kManagementParts{{
    {0x8086, 0x1533}, {0x8086, 0x1536}, {0x8086, 0x1537}, {0x8086, 0x1538},  // I210
    {0x8086, 0x1539},                                                        // I211
    {0x8086, 0x1521}, {0x8086, 0x1522}, {0x8086, 0x1523}, {0x8086, 0x1524},  // I350
    {0x8086, 0x15b7}, {0x8086, 0x15b8}, {0x8086, 0x15bb}, {0x8086, 0x15bc},  // I219
    {0x8086, 0x0d4c}, {0x8086, 0x1a1c},                                      // I219 (newer)
    {0x8086, 0x10d3}, {0x8086, 0x10c9}, {0x8086, 0x10e6},                    // 82574L, 82576
    {0x14e4, 0x1657}, {0x14e4, 0x165f}, {0x14e4, 0x1639}, {0x14e4, 0x163b},  // BCM5719/5720/5709/5716
    {0x10ec, 0x8168}, {0x10ec, 0x8125},                                      // RTL8111, RTL8125
}};

bool starts_with_any(const std::string& name, std::initializer_list<const char*> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](const char* p) { return name.starts_with(p); });
}

std::string ids(const Nic& nic) {
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%04x", nic.vendor, nic.device_id);
  return text;
}

}  // namespace

std::string_view to_string(NicKind kind) {
  switch (kind) {
    case NicKind::unusable:
      return "unusable";
    case NicKind::management:
      return "management";
    case NicKind::ethernet:
      return "ethernet";
    case NicKind::rdma:
      return "rdma";
  }
  return "?";
}

void classify_nic(Nic& nic) {
  const std::string& name = nic.interface_name;
  auto set = [&](NicKind kind, std::string why) {
    nic.kind = kind;
    nic.kind_reason = std::move(why);
  };
  if (nic.pci_class == 0x0280 || starts_with_any(name, {"wl", "ww"})) return set(NicKind::unusable, "wireless");
  if (starts_with_any(name, {"usb", "enx"})) return set(NicKind::unusable, "USB network adapter");
  if (nic.names_listed && name.empty() && nic.rdma_device.empty())
    return set(NicKind::unusable, "no netdev or RDMA device (no driver bound: an unassigned virtual function?)");
  if (!nic.rdma_device.empty()) return set(NicKind::rdma, "RDMA device " + nic.rdma_device);
  if (nic.pci_class == 0x0207 || nic.pci_class == 0x0c06) return set(NicKind::rdma, "InfiniBand controller");
  if (nic.pci_class == 0x0208) return set(NicKind::rdma, "fabric controller (Omni-Path)");
  if (nic.vendor == 0x1d0f && (nic.device_id & 0xfff0) == 0xefa0) return set(NicKind::rdma, "Amazon EFA");
  if (nic.vendor == 0x17db) return set(NicKind::rdma, "HPE Slingshot (Cassini)");
  if (std::find(kManagementParts.begin(), kManagementParts.end(), std::pair{nic.vendor, nic.device_id}) != kManagementParts.end())
    return set(NicKind::management, "1GbE management part " + ids(nic));
  if (nic.link_speed_gbs > 0 && nic.link_speed_gbs < 1.0f) return set(NicKind::management, "PCIe link below 1 GB/s");
  set(NicKind::ethernet, "Ethernet");
}

}  // namespace gpudirect
