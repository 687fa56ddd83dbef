#include "gpudirect/slurm_tasks.hpp"

#include "gpudirect/text.hpp"

#include <optional>
#include <stdexcept>

namespace gpudirect {

int tasks_on_node(const std::string& per_node, int node) {
  const auto malformed = [&] {
    return std::invalid_argument("SLURM_STEP_TASKS_PER_NODE=" + quote_bounded(per_node) + " is not Slurm's N(xM),... form");
  };
  // The whole list is checked, not just the part before `node`: a malformed one is refused everywhere.
  int index = 0;
  std::optional<int> found;
  for (const std::string_view entry : split(per_node, ',')) {
    // "N" or "N(xM)": N tasks on each of M nodes.
    std::string_view count_text = entry, repeat_text = "1";
    if (const auto open = entry.find("(x"); open != std::string_view::npos) {
      if (!entry.ends_with(')')) throw malformed();
      count_text = entry.substr(0, open);
      repeat_text = entry.substr(open + 2, entry.size() - open - 3);
    }
    const auto count = try_parse_integer<int>(count_text, 1, 1 << 20);
    const auto repeat = try_parse_integer<int>(repeat_text, 1, 1 << 20);
    if (!count || !repeat) throw malformed();
    if (!found && node < index + *repeat) found = *count;
    if (index > (1 << 24)) throw malformed();  // more nodes than any cluster; keeps the sum from overflowing
    index += *repeat;
  }
  if (found) return *found;
  throw std::invalid_argument("SLURM_STEP_TASKS_PER_NODE=" + quote_bounded(per_node) + " has no entry for node " + std::to_string(node));
}

const std::string* slurm_variable(const std::map<std::string, std::string>& env, const std::string& name) {
  const auto it = env.find(name);
  return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

}  // namespace gpudirect
