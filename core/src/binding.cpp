#include "gpudirect/binding.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>
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

SwitchKey prefix(const std::vector<PciAddress>& path, int depth) { return SwitchKey(path.begin(), path.begin() + depth); }

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

std::string labels(const Topology& topology, const std::vector<int>& nics) {
  std::string out;
  for (int n : nics) out += (out.empty() ? "" : ",") + nic_label(topology.nics[static_cast<std::size_t>(n)]);
  return out;
}

std::string join(const std::vector<int>& values) {
  std::string out;
  for (int v : values) {
    if (!out.empty()) out += ',';
    out += std::to_string(v);
  }
  return out;
}

// The best NIC kind present: the data NICs' kind.
NicKind best_kind(const Topology& topology) {
  NicKind best = NicKind::unusable;
  for (const Nic& nic : topology.nics) best = std::max(best, nic.kind);
  return best;
}

// The control NIC: never RDMA or unusable; a kind below the data kind when there is one (the
// management port next to InfiniBand), else a NIC of the data kind on no GPU's switch (A3's
// enp0s12); off the GPUs' switches first, then the better kind, then the lowest bus id.
void choose_control_nic(const Topology& topology, NicKind best, NodePlan& plan) {
  std::optional<std::tuple<int, int, int, int>> control_key;
  for (int n = 0; n < static_cast<int>(topology.nics.size()); ++n) {
    const Nic& nic = topology.nics[static_cast<std::size_t>(n)];
    if (nic.kind == NicKind::unusable || nic.kind == NicKind::rdma) continue;
    const bool on_gpu_switch = nearest_shared_depth(nic.switch_path, topology.gpus) > 0;
    if (nic.kind == best && on_gpu_switch) continue;
    const std::tuple<int, int, int, int> key{nic.kind == best, on_gpu_switch, -static_cast<int>(nic.kind), n};
    if (!control_key || key < *control_key) control_key = key;
  }
  if (control_key) plan.control_nic = std::get<3>(*control_key);
  if (topology.nics.empty())
    plan.control_note = "this node has no NICs";
  else if (!plan.control_nic)
    plan.control_note = best == NicKind::unusable ? "no usable NIC (only wireless, USB or driverless functions)"
                                                  : "every usable NIC is an RDMA NIC or shares a PCIe switch with a GPU";
}

// The host NICs: the control NIC and its kind's other NICs that no GPU could use (A3 Ultra and
// A4 have two gVNICs next to their RDMA NICs; A3 Mega's other gVNICs are data NICs).
void collect_host_nics(const Topology& topology, NicKind best, NodePlan& plan) {
  if (!plan.control_nic) return;
  const NicKind control_kind = topology.nics[static_cast<std::size_t>(*plan.control_nic)].kind;
  for (int n = 0; n < static_cast<int>(topology.nics.size()); ++n) {
    const Nic& nic = topology.nics[static_cast<std::size_t>(n)];
    if (nic.kind != control_kind || nearest_shared_depth(nic.switch_path, topology.gpus) > 0) continue;
    if (n == *plan.control_nic || control_kind != best) plan.host_nics.push_back(n);
  }
}

// How fast a NIC is, in Gb/s: its port speed when the source gives one, else its PCIe link; 0 unknown.
float nic_speed(const Nic& nic) { return nic.port_speed_gbps > 0 ? nic.port_speed_gbps : nic.link_speed_gbs * 8; }

// The NICs that may carry GPU traffic: the best kind present, the control NIC excepted, and none at
// a quarter or less of the fastest such NIC's speed (a B200 VM's 100G front-end ports beside its 400G
// GPU ports, an x2 card beside x16 ones). A NIC of unknown speed is never called slow.
std::vector<int> data_nic_pool(const Topology& topology, NicKind best, const NodePlan& plan) {
  std::vector<int> pool;
  if (best == NicKind::unusable) return pool;
  float fastest = 0;
  for (int n = 0; n < static_cast<int>(topology.nics.size()); ++n) {
    const Nic& nic = topology.nics[static_cast<std::size_t>(n)];
    if (nic.kind == best && plan.control_nic != n) fastest = std::max(fastest, nic_speed(nic));
  }
  for (int n = 0; n < static_cast<int>(topology.nics.size()); ++n) {
    const Nic& nic = topology.nics[static_cast<std::size_t>(n)];
    const bool slow = nic_speed(nic) > 0 && nic_speed(nic) * 4 <= fastest;
    if (nic.kind == best && plan.control_nic != n && !slow) pool.push_back(n);
  }
  return pool;
}

// Pairs GPUs and pool NICs under their nearest shared switch. Returns the GPUs that share no
// switch with any pool NIC, for pair_by_numa.
std::vector<int> pair_on_switches(const Topology& topology, const std::vector<int>& pool, NodePlan& plan) {
  std::vector<Nic> pool_nics;
  for (int n : pool) pool_nics.push_back(topology.nics[static_cast<std::size_t>(n)]);
  // Each device's nearest switch shared with the other kind; devices with the same one pair up.
  std::map<SwitchKey, std::vector<int>> gpus_by_switch;
  std::map<SwitchKey, std::vector<int>> nics_by_switch;
  std::vector<int> fallback_gpus;
  for (int g = 0; g < static_cast<int>(topology.gpus.size()); ++g) {
    const auto& path = topology.gpus[static_cast<std::size_t>(g)].switch_path;
    const int depth = nearest_shared_depth(path, pool_nics);
    if (depth == 0)
      fallback_gpus.push_back(g);
    else
      gpus_by_switch[prefix(path, depth)].push_back(g);
  }
  for (int n : pool) {
    const auto& path = topology.nics[static_cast<std::size_t>(n)].switch_path;
    const int depth = nearest_shared_depth(path, topology.gpus);
    if (depth > 0) nics_by_switch[prefix(path, depth)].push_back(n);
  }
  for (const auto& [key, gpus] : gpus_by_switch) {
    std::vector<int> nics = nics_by_switch[key];
    if (nics.empty()) {
      // Nested switches: this GPU's nearest NICs pair more closely with other GPUs. Share those
      // under the switch where they meet rather than call it a fallback.
      for (int n : pool)
        if (shared_switch_depth(topology.nics[static_cast<std::size_t>(n)].switch_path, key) == static_cast<int>(key.size()))
          nics.push_back(n);
    }
    pair_in_order(gpus, nics, plan);
  }
  return fallback_gpus;
}

// The pool NICs in PCI domain `domain`, when the pool spans several domains: a VM's host bridges
// put each GPU and its fabric NICs in a domain of their own (no switch visible). Empty otherwise.
std::vector<int> same_domain_nics(const Topology& topology, const std::vector<int>& pool, unsigned domain) {
  std::vector<int> same;
  bool other_domain = false;
  for (int n : pool) {
    const Nic& nic = topology.nics[static_cast<std::size_t>(n)];
    const std::optional<unsigned> nic_domain = nic.address ? std::optional(nic.address->domain) : nic.pci_domain;
    if (nic_domain == domain)
      same.push_back(n);
    else
      other_domain = other_domain || nic_domain.has_value();
  }
  return other_domain ? same : std::vector<int>{};
}

// No data NIC on the GPU's switch: the data NICs of its own PCI domain when others are elsewhere,
// then the nearest by NUMA distance, then package, shared out among the fallback GPUs of that
// domain and NUMA node in bus order; each such GPU gets a note saying so.
void pair_by_numa(const Topology& topology, const std::vector<int>& all_pool, const std::vector<int>& fallback_gpus, NodePlan& plan) {
  const auto nic_at = [&](int n) -> const Nic& { return topology.nics[static_cast<std::size_t>(n)]; };
  std::map<std::pair<std::optional<unsigned>, int>, std::vector<int>> fallback_groups;  // (own domain, NUMA node)
  for (int g : fallback_gpus) {
    const Gpu& gpu = topology.gpus[static_cast<std::size_t>(g)];
    std::optional<unsigned> domain;
    if (!same_domain_nics(topology, all_pool, gpu.address.domain).empty()) domain = gpu.address.domain;
    fallback_groups[{domain, gpu.numa_node}].push_back(g);
  }
  for (const auto& [group, gpus] : fallback_groups) {
    const auto [domain, numa] = group;
    const std::vector<int> pool = domain ? same_domain_nics(topology, all_pool, *domain) : all_pool;
    const int package = topology.gpus[static_cast<std::size_t>(gpus.front())].package;
    const auto distance_key = [&, numa = numa](int n) {  // clang 14 (fuzz preset) cannot capture a structured binding
      const Nic& nic = nic_at(n);
      const bool other_package = package >= 0 && nic.package >= 0 && nic.package != package;
      return std::pair<unsigned, bool>{numa_distance(topology, numa, nic.numa_node), other_package};
    };
    std::vector<int> nearest;
    for (int n : pool) {
      if (!nearest.empty() && distance_key(n) > distance_key(nearest.front())) continue;
      if (!nearest.empty() && distance_key(n) < distance_key(nearest.front())) nearest.clear();
      nearest.push_back(n);
    }
    pair_in_order(gpus, nearest, plan);
    std::string note;
    if (nearest.empty()) {
      note = plan.control_nic ? "no NIC on this node can serve it (the only NIC is the control NIC)"
                              : "no NIC on this node can serve it (" +
                                    (topology.nics.empty() ? std::string("there are no NICs") : std::string("no usable NIC")) + ")";
    } else {
      const Nic& first = nic_at(nearest.front());
      if (domain) {
        char text[16];
        std::snprintf(text, sizeof text, "%04x", *domain);
        note = std::string("no NIC shares its PCIe switch; using a NIC of its PCI domain ") + text;
      } else if (numa >= 0 && first.numa_node == numa)
        note = "no NIC shares its PCIe switch; using a NIC of its NUMA node " + std::to_string(numa);
      else
        note = "no NIC shares its PCIe switch or its NUMA node; using the nearest, " + labels(topology, nearest) +
               (first.numa_node >= 0 && numa >= 0 ? " (NUMA node " + std::to_string(first.numa_node) + ", distance " +
                                                        std::to_string(distance_key(nearest.front()).first) + ")"
                                                  : "");
    }
    for (int g : gpus) {
      auto& placement = plan.gpus[static_cast<std::size_t>(g)];
      placement.nic_fallback = true;
      placement.nic_note = note;
    }
  }
}

}  // namespace

NodePlan plan_node(const Topology& topology) {
  NodePlan plan;
  plan.gpus.resize(topology.gpus.size());
  for (std::size_t g = 0; g < topology.gpus.size(); ++g) {
    plan.gpus[g].numa_node = topology.gpus[g].numa_node;
    plan.gpus[g].local_cpus = topology.gpus[g].local_cpus;
  }
  const NicKind best = best_kind(topology);
  choose_control_nic(topology, best, plan);
  collect_host_nics(topology, best, plan);
  const std::vector<int> pool = data_nic_pool(topology, best, plan);
  const std::vector<int> fallback_gpus = pair_on_switches(topology, pool, plan);
  pair_by_numa(topology, pool, fallback_gpus, plan);

  for (const auto& placement : plan.gpus) plan.data_nics.insert(plan.data_nics.end(), placement.nics.begin(), placement.nics.end());
  std::sort(plan.data_nics.begin(), plan.data_nics.end());
  plan.data_nics.erase(std::unique(plan.data_nics.begin(), plan.data_nics.end()), plan.data_nics.end());
  return plan;
}

TaskBinding bind_task(const Topology& topology, const NodePlan& plan, const std::vector<int>& task_gpus, const CpuSet& allowed_cpus) {
  if (plan.gpus.size() != topology.gpus.size())
    throw std::invalid_argument("the node plan covers " + std::to_string(plan.gpus.size()) + " GPUs but the topology (" + topology.source +
                                ") has " + std::to_string(topology.gpus.size()) + ": make the plan with plan_node on the same topology");
  TaskBinding binding;
  for (int g : task_gpus) {
    if (g < 0 || static_cast<std::size_t>(g) >= topology.gpus.size())
      throw std::invalid_argument("GPU index " + std::to_string(g) + " does not exist: the topology (" + topology.source + ") has " +
                                  std::to_string(topology.gpus.size()) + " GPUs");
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
  if (local.empty()) {  // an NCCL <cpu> without affinity: the file does not say which CPUs are near
    binding.cpus = allowed_cpus;
    binding.warning = "the topology (" + topology.source + ") does not say which CPUs are local to GPU(s) " + join(binding.gpus) +
                      "; keeping the CPUs Slurm gave the task";
    return binding;
  }
  binding.cpus = allowed_cpus.empty() ? local : (local & allowed_cpus);
  if (binding.cpus.empty()) {
    binding.cpus = allowed_cpus;
    binding.warning = "the CPUs local to GPU(s) " + join(binding.gpus) + " (" + local.to_list() +
                      ") are outside the CPUs Slurm gave the task (" + allowed_cpus.to_list() +
                      "); keeping Slurm's CPUs. Ask Slurm for CPUs near the GPUs, e.g. --cpus-per-gpu, "
                      "or leave cpu binding to the plugin";
  }
  return binding;
}

}  // namespace gpudirect
