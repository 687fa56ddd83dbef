// Whether the NCCL network plugin a task's environment asks for would load. NCCL that cannot load
// its plugin falls back to its own socket transport, 4-5x slower and without an error, unless
// NCCL_NET names the plugin; this finds the library the way NCCL does and loads it first.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpudirect {

struct NetPluginCheck {
  std::string wanted;              // why a plugin is expected: "NCCL_NET=FasTrak", "NCCL_NET_PLUGIN=ofi"
  std::vector<std::string> names;  // the names NCCL tries, in order ("libnccl-net.so")
  std::string library;             // the file that loaded, or the first one found that did not
  std::string problem;             // empty when a library loads and exports an ncclNetPlugin_vN symbol
};

// None when the environment asks for no external plugin (no NCCL_NET, or NCCL's own IB/Socket, and
// no NCCL_NET_PLUGIN). Names are looked up in the environment's LD_LIBRARY_PATH directories first
// (the task's, which this process may not have started with), then as the dynamic loader would.
std::optional<NetPluginCheck> check_net_plugin(const std::map<std::string, std::string>& env);

}  // namespace gpudirect
