#include "gpudirect/slurm_tasks.hpp"

#include <cstdio>
#include <stdexcept>

namespace gpudirect {

int tasks_on_node(const std::string& per_node, int node) {
  int index = 0;
  std::size_t start = 0;
  while (start < per_node.size()) {
    std::size_t comma = per_node.find(',', start);
    if (comma == std::string::npos) comma = per_node.size();
    int count = 0, repeat = 1;
    if (std::sscanf(per_node.substr(start, comma - start).c_str(), "%d(x%d)", &count, &repeat) < 1 || count < 1 || repeat < 1)
      throw std::invalid_argument("SLURM_STEP_TASKS_PER_NODE=" + per_node + " is not Slurm's N(xM),... form");
    if (node < index + repeat) return count;
    index += repeat;
    start = comma + 1;
  }
  throw std::invalid_argument("SLURM_STEP_TASKS_PER_NODE=" + per_node + " has no entry for node " + std::to_string(node));
}

}  // namespace gpudirect
