// One measurement of the health sweep: a bench all_gather job on a pair (or a group) of nodes,
// and what came out of it. Every other part of the sweep (pairing, verdicts, report, picture,
// drain lines) reads these; only the Slurm driver fills them in.
#pragma once

#include <string>
#include <vector>

namespace gpudirect::launcher::health {

enum class Outcome {
  measured,     // the job ran and reported an average bus bandwidth (which may be under the threshold)
  failed,       // the job ended without a usable result (bench error, wrong values, srun refused)
  timed_out,    // still running at --pair-timeout: killed
  not_started,  // still waiting for resources at --pair-timeout (nodes busy): says nothing about the nodes
};

const char* to_string(Outcome outcome);

enum class Phase { first_pass, second_pass, group };

const char* to_string(Phase phase);

struct SweepRun {
  std::vector<std::string> nodes;  // 2 for a pair, more for a group
  Phase phase = Phase::first_pass;
  Outcome outcome = Outcome::not_started;
  double busbw = 0;    // GB/s, average over the bench's rows, when measured
  std::string detail;  // why it failed ("exit 3: rank 9 on node2 is gone ..."), for the table and the drain reason
  double seconds = 0;  // wall time of the job
};

// A run passes when it was measured at or above the threshold (GB/s).
bool passes(const SweepRun& run, double threshold);

// The other node of a pair run ("" when `node` is not in it or the run is a group).
std::string peer_of(const SweepRun& run, const std::string& node);

}  // namespace gpudirect::launcher::health
