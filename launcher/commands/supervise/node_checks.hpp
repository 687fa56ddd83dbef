// Proving a blamed node bad, or clearing it: check-node's rules on the node itself (one srun per
// node, all at once, each bounded: a node that cannot run a step gives no answer and that is the
// proof), and the health sweep's pair test over the training nodes when every rank is slowed alike
// and no rank's own numbers can name the node.
#pragma once

#include "supervise/supervise_options.hpp"

#include <functional>
#include <string>
#include <vector>

namespace gpudirect::launcher::supervise {

enum class Answer { passed, failed, silent };

struct NodeFinding {
  std::string node;
  Answer answer = Answer::silent;
  std::string reason;   // the drain reason: check-node's (XID, PERFORMANCE, unspecified), unspecified when silent
  std::string comment;  // the findings, or why there was no answer
};

using Progress = std::function<void(const std::string&)>;

// srun --nodes=1 --nodelist=NODE --overlap ... PROGRAM check-node --machine-type T --json ARGS, its
// JSON in json_path; without --node-check the node only has to run a step (PROGRAM --version).
std::vector<std::string> node_check_command(const std::string& node, const SuperviseOptions& options, const std::string& json_path);

// check-node on every node at once, within --check-timeout.
std::vector<NodeFinding> check_nodes(const std::vector<std::string>& nodes, const SuperviseOptions& options, const std::string& dir,
                                     const Progress& progress);

// `gpudirect-launch health --nodelist NODES ...` (the pair test), within the sweep's own bounds.
// The nodes it names bad, each with health's evidence as the comment and PERFORMANCE as reason.
std::vector<NodeFinding> sweep_pairs(const std::vector<std::string>& nodes, const SuperviseOptions& options, const std::string& dir,
                                     const Progress& progress);

// From health's --json report: its bad nodes (the pure part of sweep_pairs).
std::vector<NodeFinding> bad_nodes_in_sweep(const std::string& report_json);

}  // namespace gpudirect::launcher::supervise
