// Where a supervised run's wall time went (`gpudirect-launch supervise`): productive step time,
// and for each fault the time it cost, by cause. The effective training time ratio (ETTR) is
// productive time over wall time, as Meta's reliability study of its clusters defines it. Written
// as gpudirect_supervise_* gauges for node_exporter's textfile collector (docs/monitoring.md).
#pragma once

#include "reporting/prometheus_textfile.hpp"

#include <string>
#include <vector>

namespace gpudirect::launcher::metrics {

struct FaultCost {
  std::string kind;                  // "rank failure", "hang", "straggler", "slow steps", "start-up timeout"
  std::vector<std::string> nodes;    // the nodes taken out for it (none when it was transient)
  std::string reason;                // the drain reason of the first of them, "" when none
  std::vector<std::string> reasons;  // each node's own drain reason, in the order of `nodes`
  double detection_seconds = 0;      // last progress -> the supervisor saw the fault
  double handling_seconds = 0;       // stopping the step, checking, draining, choosing a spare
  double restart_seconds = 0;        // the new step's launch -> its first step
  long repeated_steps = 0;           // steps done again after resuming from an older checkpoint
  double repeated_seconds = 0;       // the step time those took the first time
  double lost_seconds() const { return detection_seconds + handling_seconds + restart_seconds + repeated_seconds; }
};

struct GoodputReport {
  std::string job_id;                 // SLURM_JOB_ID (no job_id label when empty)
  double wall_seconds = 0;            // the supervisor's start to now (or the end)
  double productive_seconds = 0;      // step time of every step that counts, each once
  long steps = 0, planned_steps = 0;  // steps: distinct steps this supervisor saw
  long last_step = 0;                 // the highest step done (a requeued job's run counts those before)
  int attempts = 0;                   // training steps launched
  int spare_nodes_left = 0;
  std::vector<FaultCost> faults;
  double ettr() const { return wall_seconds > 0 ? productive_seconds / wall_seconds : 0; }
  double lost_seconds() const;  // sum over the faults
  double updated_unix_seconds = 0;
};

PrometheusTextfile goodput_metrics(const GoodputReport& report);

}  // namespace gpudirect::launcher::metrics
