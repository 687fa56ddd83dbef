#include "gpudirect/gib_machine.hpp"

#include <array>
#include <cstdio>
#include <set>
#include <utility>

namespace gpudirect {
namespace {

constexpr unsigned kNvidia = 0x10de;
// PCI device ids as pci.ids and lspci name them: GH100 [H200 SXM 141GB], GB100 [B200].
constexpr std::array<std::pair<unsigned, const char*>, 2> kMachines{{{0x2335, "a3u"}, {0x2901, "a4"}}};

std::string pci_id(const Gpu& gpu) {
  char text[16];
  std::snprintf(text, sizeof text, "%04x:%04x", gpu.vendor == GpuVendor::nvidia ? kNvidia : 0x1002u, gpu.device_id);
  return text;
}

}  // namespace

GibMachine gib_machine(const Topology& topology) {
  if (topology.gpus.empty()) return {"", "the topology has no GPUs"};
  std::set<std::string> ids;
  for (const Gpu& gpu : topology.gpus) ids.insert(pci_id(gpu));
  std::string listed;
  for (const std::string& id : ids) listed += (listed.empty() ? "" : ", ") + id;
  if (ids.size() > 1) return {"", "the GPUs are of more than one kind (" + listed + ")"};
  const Gpu& gpu = topology.gpus.front();
  if (gpu.vendor == GpuVendor::nvidia)
    for (const auto& [device, name] : kMachines)
      if (gpu.device_id == device) return {name, ""};
  if (gpu.device_id == 0) return {"", "the topology (" + topology.source + ") does not give the GPUs' PCI device id"};
  return {"", "the GPUs are " + listed + ", neither H200 (10de:2335, A3 Ultra) nor B200 (10de:2901, A4)"};
}

}  // namespace gpudirect
