// What the kernel says about the node's NICs, RDMA ports and NUMA nodes, read from sysfs under a
// root that tests replace with a fake tree ("/sys" on a node). Plain data; judged by nic_rules.cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpudirect::launcher::check_node {

struct NicState {
  std::string name;
  bool present = false;
  std::string operstate;        // "up", "down", "unknown" ...
  std::optional<bool> carrier;  // unreadable while the link is administratively down
  std::optional<int> mtu;
  std::optional<int> speed_mbps;  // the driver's link speed; unreadable or -1 when it does not say
};

struct RdmaPort {
  std::string device;  // "mlx5_0"
  std::string port;    // "1"
  std::string state;   // "ACTIVE", "DOWN" ... (the word after "N: ")
};

struct SysfsView {
  std::vector<NicState> data_nics;  // in the order asked for
  std::vector<std::string> rdma_devices;
  std::vector<RdmaPort> rdma_ports;
  std::optional<int> numa_nodes;  // node[0-9]* under devices/system/node; nullopt when unreadable
};

SysfsView read_sysfs(const std::string& sysfs_root, const std::vector<std::string>& data_nics);

}  // namespace gpudirect::launcher::check_node
