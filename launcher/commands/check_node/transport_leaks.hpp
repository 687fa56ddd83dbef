// A transport's variables set where another transport runs. A global /etc/profile.d setting
// NCCL_NET=gIB makes NCCL fail with "network gIB not found" on a node without gIB; Google says the
// TCPX/TCPXO variables must not be set on A3 Ultra and A4. Each variable is named with where it
// was set (this process's environment, a profile.d file) and the node's own transport.
#pragma once

#include "check_node/finding.hpp"

#include <map>
#include <string>
#include <vector>

namespace gpudirect::launcher::check_node {

struct EnvSource {
  std::string origin;  // "the environment", "/etc/profile.d/nccl-gib.sh"
  std::map<std::string, std::string> variables;
};

// The transport a variable belongs to (tcpxo, tcpx, gib), or "" when it belongs to none or to all.
std::string transport_of(const std::string& name, const std::string& value);

// Findings for each variable of another transport than `mode` (tcpxo, tcpx, gib, rdma).
std::vector<Finding> judge_leaks(const std::vector<EnvSource>& sources, const std::string& mode);

// The NAME=VALUE and `export NAME=VALUE` lines of a shell profile or /etc/environment (quotes
// dropped); other lines are ignored.
std::map<std::string, std::string> shell_assignments(const std::string& text);

// This process's environment, /etc/environment and every /etc/profile.d/*.sh under `etc_dir`.
std::vector<EnvSource> node_env_sources(const std::string& etc_dir);

}  // namespace gpudirect::launcher::check_node
