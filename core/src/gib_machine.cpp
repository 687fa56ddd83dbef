#include "gpudirect/gib_machine.hpp"

#include <array>
#include <cstdio>
#include <set>
#include <utility>

namespace gpudirect {
namespace {

constexpr unsigned kNvidia = 0x10de;
struct Machine {
  unsigned device;
  const char* name;
  bool image_values_public;  // Google's images/job scripts for it show the gIB values (docs/profiles.md)
};

// PCI device ids as pci.ids and lspci name them: GH100 [H200 SXM 141GB], GB100 [B200]; GB200
// (10de:2941) as lspci -nn shows it on a GB200 tray (docs/profiles.md names the sources).
constexpr std::array<Machine, 3> kMachines{{{0x2335, "a3u", true}, {0x2901, "a4", true}, {0x2941, "a4x", false}}};

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
    for (const Machine& machine : kMachines)
      if (gpu.device_id == machine.device) return {machine.name, ""};
  if (gpu.device_id == 0) return {"", "the topology (" + topology.source + ") does not give the GPUs' PCI device id"};
  return {"", "the GPUs are " + listed + ", neither H200 (10de:2335, A3 Ultra), B200 (10de:2901, A4) nor GB200 (10de:2941, A4X)"};
}

std::string gib_image_machine(const GibMachine& machine) {
  for (const Machine& known : kMachines)
    if (machine.name == known.name && !known.image_values_public) return "";
  return machine.name;
}

}  // namespace gpudirect
