#include "gpudirect/binding.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace gpudirect {
namespace {

using SwitchKey = std::vector<PciAddress>;  // bridges from the root down to a switch

// The deepest switch `path` shares with any of `others`; 0 when it meets them only at the root.
template <typename Devices>
int nearest_shared_depth(const std::vector<PciAddress>& path, const Devices& others) {
  int best = 0;
  for (const auto& other : others) best = std::max(best, shared_switch_depth(path, other.switch_path));
  return best;
}

SwitchKey prefix(const std::vector<PciAddress>& path, int depth) {
  return SwitchKey(path.begin(), path.begin() + depth);
}

// GPU i of `gpus` gets its share of `nics`, both in bus order (see plan_node in binding.hpp).
void pair_in_order(const std::vector<int>& gpus, const std::vector<int>& nics, NodePlan& plan) {
  const std::size_t g_count = gpus.size();
  const std::size_t n_count = nics.size();
  if (n_count == 0) return;
  for (std::size_t i = 0; i < g_count; ++i) {
    auto& placement = plan.gpus[static_cast<std::size_t>(gpus[i])];
    const std::size_t first = i * n_count / g_count;
    const std::size_t last = std::max(first + 1, (i + 1) * n_count / g_count);
    for (std::size_t k = first; k < last; ++k) placement.nics.push_back(nics[k]);
  }
}

std::string join(const std::vector<int>& values) {
  std::string out;
  for (int v : values) {
    if (!out.empty()) out += ',';
    out += std::to_string(v);
  }
  return out;
}

}  // namespace

NodePlan plan_node(const Topology& topology) {
  NodePlan plan;
  plan.gpus.resize(topology.gpus.size());
  for (std::size_t g = 0; g < topology.gpus.size(); ++g) {
    plan.gpus[g].numa_node = topology.gpus[g].numa_node;
    plan.gpus[g].local_cpus = topology.gpus[g].local_cpus;
  }

  // Each device's nearest switch shared with the other kind; devices with the same one pair up.
  std::map<SwitchKey, std::vector<int>> gpus_by_switch;
  std::map<SwitchKey, std::vector<int>> nics_by_switch;
  std::vector<int> fallback_gpus;
  for (std::size_t g = 0; g < topology.gpus.size(); ++g) {
    const auto& path = topology.gpus[g].switch_path;
    const int depth = nearest_shared_depth(path, topology.nics);
    if (depth == 0)
      fallback_gpus.push_back(static_cast<int>(g));
    else
      gpus_by_switch[prefix(path, depth)].push_back(static_cast<int>(g));
  }
  std::vector<int> switch_nics;  // NICs that share a switch with some GPU
  for (std::size_t n = 0; n < topology.nics.size(); ++n) {
    const auto& path = topology.nics[n].switch_path;
    const int depth = nearest_shared_depth(path, topology.gpus);
    if (depth > 0) {
      nics_by_switch[prefix(path, depth)].push_back(static_cast<int>(n));
      switch_nics.push_back(static_cast<int>(n));
    } else if (!plan.control_nic) {
      plan.control_nic = static_cast<int>(n);  // NICs are in address order: the first is the lowest
    }
  }

  for (const auto& [key, gpus] : gpus_by_switch) {
    std::vector<int> nics = nics_by_switch[key];
    if (nics.empty()) {
      // Nested switches: this GPU's nearest NICs pair more closely with other GPUs. Share those
      // under the switch where they meet rather than call it a fallback.
      for (std::size_t n = 0; n < topology.nics.size(); ++n)
        if (shared_switch_depth(topology.nics[n].switch_path, key) == static_cast<int>(key.size()))
          nics.push_back(static_cast<int>(n));
    }
    pair_in_order(gpus, nics, plan);
  }

  if (!fallback_gpus.empty()) {
    std::vector<int> pool = switch_nics;
    if (pool.empty())
      for (std::size_t n = 0; n < topology.nics.size(); ++n)
        if (plan.control_nic != static_cast<int>(n)) pool.push_back(static_cast<int>(n));
    // Per NUMA node: the fallback GPUs there share the pool's NICs there (or the whole pool).
    std::map<int, std::vector<int>> gpus_by_numa;
    for (int g : fallback_gpus) gpus_by_numa[topology.gpus[static_cast<std::size_t>(g)].numa_node].push_back(g);
    for (const auto& [numa, gpus] : gpus_by_numa) {
      std::vector<int> local;
      if (numa >= 0)
        for (int n : pool)
          if (topology.nics[static_cast<std::size_t>(n)].numa_node == numa) local.push_back(n);
      const std::vector<int>& nics = local.empty() ? pool : local;
      pair_in_order(gpus, nics, plan);
      for (int g : gpus) {
        auto& placement = plan.gpus[static_cast<std::size_t>(g)];
        placement.nic_fallback = true;
        if (nics.empty())
          placement.nic_note = "no NIC on this node can serve it (the only NIC is the control NIC)";
        else if (!local.empty())
          placement.nic_note = "no NIC shares its PCIe switch; using a NIC of its NUMA node " + std::to_string(numa);
        else
          placement.nic_note = "no NIC shares its PCIe switch or its NUMA node; using NICs " + join(nics);
      }
    }
  }

  for (const auto& placement : plan.gpus)
    plan.data_nics.insert(plan.data_nics.end(), placement.nics.begin(), placement.nics.end());
  std::sort(plan.data_nics.begin(), plan.data_nics.end());
  plan.data_nics.erase(std::unique(plan.data_nics.begin(), plan.data_nics.end()), plan.data_nics.end());
  return plan;
}

TaskBinding bind_task(const Topology& topology, const NodePlan& plan, const std::vector<int>& task_gpus,
                      const CpuSet& allowed_cpus) {
  if (plan.gpus.size() != topology.gpus.size())
    throw std::invalid_argument("the node plan covers " + std::to_string(plan.gpus.size()) + " GPUs but the topology (" +
                                topology.source + ") has " + std::to_string(topology.gpus.size()) +
                                ": make the plan with plan_node on the same topology");
  TaskBinding binding;
  for (int g : task_gpus) {
    if (g < 0 || static_cast<std::size_t>(g) >= topology.gpus.size())
      throw std::invalid_argument("GPU index " + std::to_string(g) + " does not exist: the topology (" +
                                  topology.source + ") has " + std::to_string(topology.gpus.size()) + " GPUs");
    binding.gpus.push_back(g);
  }
  std::sort(binding.gpus.begin(), binding.gpus.end());
  binding.gpus.erase(std::unique(binding.gpus.begin(), binding.gpus.end()), binding.gpus.end());

  CpuSet local;
  for (int g : binding.gpus) {
    const GpuPlacement& placement = plan.gpus[static_cast<std::size_t>(g)];
    binding.nics.insert(binding.nics.end(), placement.nics.begin(), placement.nics.end());
    const Gpu& gpu = topology.gpus[static_cast<std::size_t>(g)];
    local = local | gpu.local_cpus;
    if (gpu.numa_node >= 0) binding.numa_nodes.push_back(gpu.numa_node);
  }
  for (auto* list : {&binding.nics, &binding.numa_nodes}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }

  if (binding.gpus.empty()) {
    binding.cpus = allowed_cpus;
    return binding;
  }
  binding.cpus = allowed_cpus.empty() ? local : (local & allowed_cpus);
  if (binding.cpus.empty()) {
    binding.cpus = allowed_cpus;
    binding.warning = "the CPUs local to GPU(s) " + join(binding.gpus) + " (" +
                      (local.empty() ? std::string("unknown") : local.to_list()) +
                      ") are outside the CPUs Slurm gave the task (" + allowed_cpus.to_list() +
                      "); keeping Slurm's CPUs. Ask Slurm for CPUs near the GPUs, e.g. --cpus-per-gpu, "
                      "or leave cpu binding to the plugin";
  }
  return binding;
}

}  // namespace gpudirect
