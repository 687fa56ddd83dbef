// The NIC rules: each data NIC of the machine type present, up, with carrier, its MTU and speed;
// every RDMA port ACTIVE and as many RDMA devices as the type has; the NUMA layout.
#pragma once

#include "check_node/expectations.hpp"
#include "check_node/finding.hpp"
#include "check_node/sysfs_probe.hpp"

#include <vector>

namespace gpudirect::launcher::check_node {

std::vector<Finding> judge_nics(const SysfsView& view, const Expectations& expected);

}  // namespace gpudirect::launcher::check_node
