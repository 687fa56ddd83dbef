// The network interfaces this process can see (its network namespace): what the names a topology
// file gives the node's NICs are checked against before a profile exports them to NCCL.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpudirect {

// Names in the kernel's order (if_nameindex); nullopt when the kernel cannot say.
std::optional<std::vector<std::string>> network_interface_names();

// The names of `wanted` that are not in `present`, in the order of `wanted`, without repeats.
std::vector<std::string> missing_interfaces(const std::vector<std::string>& wanted, const std::vector<std::string>& present);

}  // namespace gpudirect
