// Slurm's compressed host lists: "node[01-03,7],login1", "a[1-2]-b[3-4]".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpudirect {

// Expands in Slurm's order (cartesian product for several brackets, last varying fastest),
// keeping zero padding. Throws std::invalid_argument quoting the list.
std::vector<std::string> expand_hostlist(std::string_view list);

}  // namespace gpudirect
