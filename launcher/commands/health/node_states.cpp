#include "health/node_states.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace gpudirect::launcher::health {
namespace {

// Without Slurm's suffixes: * not responding, ~ powered off, # powering up, ! pending power down,
// % powering down, $ maintenance reservation, @ pending reboot, ^ reboot issued, - planned.
std::string_view base_state(std::string_view state) {
  while (!state.empty() && std::string_view("*~#!%$@^-").find(state.back()) != std::string_view::npos) state.remove_suffix(1);
  return state;
}

}  // namespace

bool usable_state(std::string_view state) {
  if (state.find('*') != std::string_view::npos || state.find('~') != std::string_view::npos) return false;
  constexpr std::array<std::string_view, 5> kUsable{"idle", "allocated", "mixed", "completing", "planned"};
  const std::string_view base = base_state(state);
  return std::find(kUsable.begin(), kUsable.end(), base) != kUsable.end();
}

bool drained_state(std::string_view state) {
  const std::string_view base = base_state(state);
  return base == "drained" || base == "draining" || base == "drain";
}

std::vector<NodeState> parse_sinfo_nodes(std::string_view text) {
  std::vector<NodeState> nodes;
  for (std::string_view line : split(text, '\n')) {
    line = trim(line);
    if (line.empty()) continue;
    const auto fields = split(line, '|');
    if (fields.size() < 3 || trim(fields[0]).empty())
      throw std::invalid_argument("sinfo printed '" + quote_bounded(line, 120) + "', expected NODE|STATE|REASON (format " +
                                  std::string(kSinfoFormat) + ")");
    NodeState node{std::string(trim(fields[0])), std::string(trim(fields[1])), ""};
    // The reason may itself contain '|': it is everything after the second separator.
    node.reason = std::string(trim(line.substr(fields[0].size() + fields[1].size() + 2)));
    node.usable = usable_state(node.state);
    if (std::none_of(nodes.begin(), nodes.end(), [&](const NodeState& n) { return n.node == node.node; })) nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace gpudirect::launcher::health
