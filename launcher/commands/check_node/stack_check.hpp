// The GPUDirect stack of the node's transport: the net plugin in the lib dir loads (the same check
// the doctor runs on a task), NCCL's version (dlopen, ncclGetVersion), TCPXO's aperture devices
// and, in a job's prolog after RxDM's, RxDM readiness.
#pragma once

#include "check_node/expectations.hpp"
#include "check_node/finding.hpp"

#include "gpudirect/plugin_config.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpudirect::launcher::check_node {

struct StackFacts {
  std::string lib_dir;
  std::string net_plugin;    // the library that loaded
  std::string nccl_library;  // the libnccl that answered ncclGetVersion
  std::string nccl_version;  // "2.23.4"; "" when no NCCL was found
};

// NCCL's version code as text: 22304 -> "2.23.4" (2.9 and later), 2708 -> "2.7.8" (before).
std::string nccl_version_text(int code);

// Findings go to `out`; what was measured is returned for the report and the fleet comparison.
// nccl_library: the NCCL to ask for its version (check-node --nccl-library); empty: the lib dir's,
// else the loader's.
StackFacts check_stack(const Expectations& expected, const PluginConfig& config, bool check_rxdm, std::vector<Finding>& out,
                       const std::string& nccl_library = "");

// The aperture directory rule alone: missing or empty is a finding (slurmd started before udev
// populated it, which the A3 Mega blueprint guards against).
std::optional<Finding> judge_aperture_devices(const std::string& dir);

}  // namespace gpudirect::launcher::check_node
