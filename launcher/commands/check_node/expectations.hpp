// What a healthy node of one machine type has, kept as data like the network profiles: one file
// per machine type (expectations/a3-megagpu-8g.conf ...), so a new image or machine needs an
// edited file, not a rebuild. Format (docs/commands/check-node.md):
//   # comment                     also after a value
//   KEY=VALUE                     one of the keys below; VALUE `unknown` (or a key left out) is not checked
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpudirect::launcher::check_node {

class ExpectationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Expectations {
  std::string machine_type;  // the file's name without .conf
  std::string origin;        // the file, for messages
  std::string mode;          // tcpxo, tcpx, gib, rdma: the transport the node's jobs use
  std::optional<int> gpu_count;
  std::string gpu_model;  // a word of NVML's name ("H100" in "NVIDIA H100 80GB HBM3"); "" = not checked
  std::optional<int> gpu_pcie_generation, gpu_pcie_width;
  std::optional<int> nvlink_links;  // active NVLink links per GPU
  std::vector<std::string> data_nics;
  std::optional<int> data_nic_mtu, data_nic_speed_mbps;
  std::optional<int> rdma_devices;  // RDMA devices (RoCE/IB), every port ACTIVE
  std::optional<int> numa_nodes;
  std::string aperture_devices;  // a directory that must hold devices (TCPXO's /dev/aperture_devices); "" = not checked
};

// Throws ExpectationError naming origin, line and what is accepted.
Expectations parse_expectations(const std::string& text, const std::string& machine_type, const std::string& origin);

// <dir>/<machine_type>.conf from the first dir that has it; the error lists where it looked and the
// machine types there are.
Expectations load_expectations(const std::string& machine_type, const std::vector<std::string>& dirs);

// Where `cmake --install` puts expectations/ (share/gpudirect-slurm/expectations).
std::string installed_expectations_dir();

// The machine types (file names without .conf) in `dirs`, sorted, each once.
std::vector<std::string> known_machine_types(const std::vector<std::string>& dirs);

}  // namespace gpudirect::launcher::check_node
