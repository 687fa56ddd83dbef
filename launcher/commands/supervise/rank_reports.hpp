// The nodes a failed training step's own output blames. Strong evidence names the lost peer
// itself: "rank 2 on node2 is unreachable from rank 0 on node1", "... made no progress", "...
// did not contribute", "rank 2 of 8 never reached the rendezvous" (its host from Slurm's block
// layout of ranks), srun's "Node failure on node2". Weak evidence, "rank 0 on node1 is gone", is
// also what every survivor says of a rank that exited on an error caused by another's loss: it
// counts only when there is no strong evidence. A survivor exiting with an error is never blamed.
#pragma once

#include <string>
#include <vector>

namespace gpudirect::launcher::supervise {

// `rank_hosts`: the step's host of each rank. The blamed hosts, most often named first (ties: first
// named first), each once.
std::vector<std::string> blamed_hosts(const std::string& step_output, const std::vector<std::string>& rank_hosts);

// Slurm's block distribution of `tasks_per_node` ranks on each node: rank r on nodes[r / tasks_per_node].
std::vector<std::string> block_rank_hosts(const std::vector<std::string>& nodes, int tasks_per_node);

}  // namespace gpudirect::launcher::supervise
