#include "gpudirect/mode_resolution.hpp"

#include <filesystem>

namespace gpudirect {

NodeFacts probe_node_facts(const PluginConfig& config) {
  std::error_code ec;
  NodeFacts facts;
  facts.tcpxo_plugin = std::filesystem::exists(lib_dir_for(config, Mode::tcpxo) + "/libnccl-net.so", ec);
  facts.tcpx_plugin = std::filesystem::exists(lib_dir_for(config, Mode::tcpx) + "/libnccl-net.so", ec);
  facts.gib_plugin = std::filesystem::exists(lib_dir_for(config, Mode::gib) + "/libnccl-net.so", ec);
  return facts;
}

std::pair<Mode, std::string> detect_mode(const Topology& topology, const NodeFacts& facts) {
  if (topology.gpus.empty()) return {Mode::off, "no GPUs on this node"};
  const std::string gpus = std::to_string(topology.gpus.size()) + " GPUs";
  const Nic* rdma = nullptr;
  for (const Nic& nic : topology.nics)
    if (!rdma && nic.kind == NicKind::rdma) rdma = &nic;
  if (facts.gib_plugin && rdma) return {Mode::gib, gpus + ", gIB NCCL plugin present, RDMA NIC " + nic_label(*rdma)};
  if (facts.tcpxo_plugin) return {Mode::tcpxo, gpus + ", TCPXO NCCL plugin present"};
  if (facts.tcpx_plugin) return {Mode::tcpx, gpus + ", TCPX NCCL plugin present"};
  if (rdma) return {Mode::rdma, gpus + ", RDMA NIC " + nic_label(*rdma)};
  return {Mode::off, gpus + " but no GPUDirect transport (no TCPXO/TCPX/gIB plugin, no RDMA NIC)"};
}

Mode requested_mode(const ModeRequest& request, const PluginConfig& config) { return request.mode.value_or(config.default_mode); }

ModeDecision resolve_mode(const ModeRequest& request, const PluginConfig& config, const Topology& topology, const NodeFacts& facts) {
  ModeDecision decision;
  decision.requested = requested_mode(request, config);
  decision.mode = decision.requested;
  if (decision.requested == Mode::auto_detect) {
    auto [mode, why] = detect_mode(topology, facts);
    decision.mode = mode;
    decision.reason = "auto: " + std::string(to_string(mode)) + " (" + why + ")";
  }
  decision.wait_for_rxdm = decision.mode == Mode::tcpxo && !config.rxdm_ready.empty();
  return decision;
}

}  // namespace gpudirect
