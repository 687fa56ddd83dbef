// The plugin's settings from its plugstack.conf line, e.g.
//   required spank_gpudirect.so default=off lib_dir=/var/lib/tcpxo/lib64 rxdm_ready=/run/rxdm.ready
#pragma once

#include "gpudirect/mode.hpp"

#include <string>
#include <vector>

namespace gpudirect {

struct PluginConfig {
  Mode default_mode = Mode::off;
  std::string lib_dir;      // "" -> per-mode default (default_lib_dir)
  std::string profile_dir;  // admin override, searched before the installed profiles
  std::string tcpxo_profile = "tcpxo";
  std::string gib_machine;                              // gIB tuner config suffix (a3u, a4); "" = from the GPUs (gib_machine.hpp)
  std::string topology;                                 // hwloc or NCCL XML instead of live discovery; "" = live
  std::string topology_cache = "/run/gpudirect-slurm";  // root-owned dir (topology_cache.hpp); "" = off
  bool cpu_bind = true;
  std::string rxdm_ready;  // a file, or a unix socket, that must exist before tcpxo tasks start
  int rxdm_timeout_s = 120;
  bool verbose = false;
};

// Throws std::invalid_argument naming the argument and what is accepted.
PluginConfig parse_plugin_config(const std::vector<std::string>& args);

// tcpxo: /var/lib/tcpxo/lib64, tcpx: /var/lib/tcpx/lib64, gib: /usr/local/gib/lib64 (nccl-gib's)
std::string default_lib_dir(Mode mode);
std::string lib_dir_for(const PluginConfig& config, Mode mode);
std::string installed_profile_dir();  // where `cmake --install` puts profiles/
std::vector<std::string> profile_search_path(const PluginConfig& config);
std::string describe(const PluginConfig& config);

}  // namespace gpudirect
