// The nodes Slurm lists for the sweep and whether each can run a pair now: parsed from
// `sinfo -h -N -o '%N|%T|%E'` (node, long state with Slurm's flag suffixes, reason).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpudirect::launcher::health {

inline constexpr std::string_view kSinfoFormat = "%N|%T|%E";

struct NodeState {
  std::string node;
  std::string state;    // as sinfo gives it: "idle", "drained", "down*", "mixed"
  std::string reason;   // Slurm's reason ("none" when there is none)
  bool usable = false;  // idle, allocated, mixed, completing or planned, and responding
};

// One entry per node in sinfo's order (a node listed in several partitions once). Throws
// std::invalid_argument naming the line when one does not have the three fields.
std::vector<NodeState> parse_sinfo_nodes(std::string_view text);

// Down, drained, failing, in maintenance or not responding nodes cannot run a pair now.
bool usable_state(std::string_view state);

bool drained_state(std::string_view state);

}  // namespace gpudirect::launcher::health
