// Which nodes are bad: a node is good when one of its pairs passed; bad when none passed and it
// failed with a peer that is good (so the fault is on its side); suspect when it only failed with
// peers that are not known good (the sweep cannot tell which of the two is at fault).
#pragma once

#include "health/sweep_run.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpudirect::launcher::health {

enum class Verdict {
  good,
  bad,
  suspect,   // failed only with unproven peers
  untested,  // no pair of it ran (no peer, or the nodes were busy)
  skipped,   // not swept: down, drained, ... (Slurm's state says why)
};

const char* to_string(Verdict verdict);

struct NodeVerdict {
  std::string node;
  Verdict verdict = Verdict::untested;
  std::vector<std::size_t> runs;        // indices into the sweep's runs (pairs only) that include the node
  std::optional<std::size_t> evidence;  // bad: the latest failing run with a good peer, which proves it
  std::string slurm_state;              // skipped: Slurm's state and reason
  std::string node_check;               // bad by check-node, before any pair: its reason and findings
};

// Verdicts for `nodes` (in that order) from the pair runs (group runs are ignored: a slow group
// cannot name its node).
std::vector<NodeVerdict> judge_nodes(const std::vector<std::string>& nodes, const std::vector<SweepRun>& runs, double threshold);

// The nodes of failing pairs whose verdict is still open (no passing pair), in order of `nodes`.
std::vector<std::string> suspects(const std::vector<NodeVerdict>& verdicts);
std::vector<std::string> nodes_with(const std::vector<NodeVerdict>& verdicts, Verdict verdict);

}  // namespace gpudirect::launcher::health
