#include "gpudirect/gpu_uuid.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <vector>

namespace gpudirect {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

}  // namespace

bool is_gpu_uuid(const std::string& item) { return item.starts_with("GPU-") || item.starts_with("MIG-"); }

std::string gpu_uuids_to_indices(const std::string& list, const std::string& what, const Topology& topology, GpuUuidResolver& resolver) {
  // Runs in every task: no stream here (constructing one costs more than the rest of this).
  if (list.find("GPU-") == std::string::npos && list.find("MIG-") == std::string::npos) return list;
  std::vector<std::string> items;
  for (std::string_view item : split(list, ',')) items.push_back(trimmed(std::string(item)));
  if (items.size() > 1 && items.back().empty()) items.pop_back();  // "a,b," lists a and b
  if (std::none_of(items.begin(), items.end(), is_gpu_uuid)) return list;

  std::vector<std::string> out;
  for (const std::string& item : items) {
    std::string index = item;
    if (is_gpu_uuid(item)) {
      // Drivers before R470 name MIG slices MIG-GPU-<gpu uuid>/<gi>/<ci>: the parent is in the name.
      std::string uuid = item;
      if (uuid.starts_with("MIG-GPU-")) uuid = uuid.substr(4, uuid.find('/') - 4);
      PciAddress address;
      try {
        address = resolver.parent_bus_id(uuid);
      } catch (const GpuUuidError& e) {
        throw GpuUuidError(what + "=" + list + ": " + e.what());
      }
      const auto gpu = std::find_if(topology.gpus.begin(), topology.gpus.end(), [&](const Gpu& g) { return g.address == address; });
      if (gpu == topology.gpus.end())
        throw GpuUuidError(what + "=" + list + ": " + item + " is on GPU " + address.to_string() + ", which the topology (" +
                           topology.source + ") does not list: check the topology= file against this node");
      index = std::to_string(gpu - topology.gpus.begin());
    }
    if (std::find(out.begin(), out.end(), index) == out.end()) out.push_back(index);  // slices of one GPU
  }
  std::string joined;
  for (const std::string& index : out) joined += (joined.empty() ? "" : ",") + index;
  return joined;
}

}  // namespace gpudirect
