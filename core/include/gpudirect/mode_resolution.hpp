// The mode a step runs with, decided in one place. The plugin (user_init: whether to wait for
// RxDM; task_init: what to apply), plan_task and `gpudirect-launch doctor` all call
// resolve_mode, so they cannot disagree about what `auto` means on a node.
#pragma once

#include "gpudirect/mode.hpp"
#include "gpudirect/plugin_config.hpp"
#include "gpudirect/topology.hpp"

#include <string>
#include <utility>

namespace gpudirect {

// What is on this node's disk that decides and validates a mode (probed, or given in tests).
struct NodeFacts {
  bool tcpxo_plugin = false;  // libnccl-net.so in the tcpxo lib dir
  bool tcpx_plugin = false;   // libnccl-net.so in the tcpx lib dir
  bool gib_plugin = false;    // libnccl-net.so in the gib lib dir (nccl-gib: /usr/local/gib/lib64)
};
NodeFacts probe_node_facts(const PluginConfig& config);

// What `auto` picks on this node, and why in words: gIB where its plugin is installed and the node
// has RDMA NICs (a TCPXO/TCPX node has none, so one lib_dir= naming another plugin's directory
// cannot make it gib), then TCPXO, TCPX, plain RDMA, off.
std::pair<Mode, std::string> detect_mode(const Topology& topology, const NodeFacts& facts);

// The mode asked for: the user's --gpu-direct, else the plugstack default. May be auto; when it is
// off nothing about the node needs to be read.
Mode requested_mode(const ModeRequest& request, const PluginConfig& config);

struct ModeDecision {
  Mode requested = Mode::off;  // as asked (may be auto)
  Mode mode = Mode::off;       // what runs: never auto
  std::string reason;          // "auto: tcpxo (8 GPUs, TCPXO NCCL plugin present)"; empty when asked explicitly
  bool wait_for_rxdm = false;  // TCPXO with rxdm_ready= set: RxDM must be up before the tasks start
};

ModeDecision resolve_mode(const ModeRequest& request, const PluginConfig& config, const Topology& topology, const NodeFacts& facts);

}  // namespace gpudirect
