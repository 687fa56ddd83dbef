#include "gpudirect/binding.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace gpudirect {
namespace {

// The deepest switch a GPU shares with any NIC; 0 when it shares none.
int best_depth(const Gpu& gpu, const Topology& topology) {
  int best = 0;
  for (const Nic& nic : topology.nics) best = std::max(best, shared_switch_depth(gpu.switch_path, nic.switch_path));
  return best;
}

void add_unique(std::vector<int>& list, int value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

}  // namespace

NodePlan plan_node(const Topology& topology) {
  NodePlan plan;
  plan.gpus.resize(topology.gpus.size());

  // Group GPUs by the switch (path prefix) where they meet their nearest NICs.
  std::map<std::vector<PciAddress>, std::vector<int>> gpus_by_switch;
  for (std::size_t g = 0; g < topology.gpus.size(); ++g) {
    const Gpu& gpu = topology.gpus[g];
    const int depth = best_depth(gpu, topology);
    if (depth == 0) continue;
    std::vector<PciAddress> key(gpu.switch_path.begin(), gpu.switch_path.begin() + depth);
    gpus_by_switch[key].push_back(static_cast<int>(g));
  }
  std::vector<bool> nic_paired(topology.nics.size(), false);
  for (const auto& [key, gpus] : gpus_by_switch) {
    std::vector<int> nics;  // already in address order, as are the GPUs
    for (std::size_t n = 0; n < topology.nics.size(); ++n) {
      const auto& path = topology.nics[n].switch_path;
      if (path.size() >= key.size() && std::equal(key.begin(), key.end(), path.begin()))
        nics.push_back(static_cast<int>(n));
    }
    const std::size_t gpu_count = gpus.size();
    const std::size_t nic_count = nics.size();
    for (std::size_t i = 0; i < gpu_count; ++i) {
      auto& placement = plan.gpus[static_cast<std::size_t>(gpus[i])];
      if (nic_count >= gpu_count) {  // one or more NICs each: a contiguous slice
        const std::size_t first = i * nic_count / gpu_count;
        const std::size_t last = (i + 1) * nic_count / gpu_count;
        for (std::size_t k = first; k < last; ++k) placement.nics.push_back(nics[k]);
      } else {  // GPUs share: GPU i gets NIC floor(i * nics / gpus)
        placement.nics.push_back(nics[i * nic_count / gpu_count]);
      }
    }
    for (int n : nics) nic_paired[static_cast<std::size_t>(n)] = true;
  }

  // The control NIC shares no switch with any GPU.
  for (std::size_t n = 0; n < topology.nics.size(); ++n) {
    bool near_gpu = false;
    for (const Gpu& gpu : topology.gpus)
      near_gpu = near_gpu || shared_switch_depth(gpu.switch_path, topology.nics[n].switch_path) > 0;
    if (!near_gpu && !plan.control_nic) plan.control_nic = static_cast<int>(n);
  }
  for (std::size_t n = 0; n < topology.nics.size(); ++n)
    if (nic_paired[n]) plan.data_nics.push_back(static_cast<int>(n));

  // GPUs without a NIC on their switch: the data NICs of their NUMA node, else any data NIC.
  for (std::size_t g = 0; g < topology.gpus.size(); ++g) {
    auto& placement = plan.gpus[g];
    if (!placement.nics.empty()) continue;
    std::vector<int> candidates = plan.data_nics;
    if (candidates.empty())
      for (std::size_t n = 0; n < topology.nics.size(); ++n)
        if (!plan.control_nic || *plan.control_nic != static_cast<int>(n)) candidates.push_back(static_cast<int>(n));
    std::vector<int> same_numa;
    for (int n : candidates)
      if (topology.nics[static_cast<std::size_t>(n)].numa_node == topology.gpus[g].numa_node) same_numa.push_back(n);
    const std::vector<int>& pool = same_numa.empty() ? candidates : same_numa;
    if (pool.empty()) continue;
    placement.nics.push_back(pool[g % pool.size()]);
    placement.nic_fallback = true;
  }
  return plan;
}

TaskBinding bind_task(const Topology& topology, const NodePlan& plan, const std::vector<int>& task_gpus,
                      const CpuSet& allowed_cpus) {
  TaskBinding binding;
  CpuSet local;
  for (int g : task_gpus) {
    if (g < 0 || static_cast<std::size_t>(g) >= topology.gpus.size())
      throw std::invalid_argument("GPU index " + std::to_string(g) + " does not exist: the topology (" +
                                  topology.source + ") has " + std::to_string(topology.gpus.size()) + " GPUs");
    add_unique(binding.gpus, g);
    const Gpu& gpu = topology.gpus[static_cast<std::size_t>(g)];
    for (int n : plan.gpus[static_cast<std::size_t>(g)].nics) add_unique(binding.nics, n);
    local = local | gpu.local_cpus;
    if (gpu.numa_node >= 0) add_unique(binding.numa_nodes, gpu.numa_node);
  }
  std::sort(binding.nics.begin(), binding.nics.end());
  std::sort(binding.numa_nodes.begin(), binding.numa_nodes.end());
  if (task_gpus.empty()) {
    binding.cpus = allowed_cpus;
    return binding;
  }
  binding.cpus = allowed_cpus.empty() ? local : (local & allowed_cpus);
  if (binding.cpus.empty()) {
    binding.cpus = allowed_cpus;
    binding.warning = "the CPUs local to GPU(s) (" + local.to_list() + ") are outside the CPUs Slurm gave the task (" +
                      allowed_cpus.to_list() + "); keeping Slurm's CPUs";
  }
  return binding;
}

}  // namespace gpudirect
