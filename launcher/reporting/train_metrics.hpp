// What `gpudirect-launch train --metrics-file` writes: the run's latest step, its throughput and
// its straggler as Prometheus gauges (gpudirect_train_*, documented in docs/monitoring.md).
#pragma once

#include "reporting/prometheus_textfile.hpp"
#include "reporting/straggler.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpudirect::launcher::metrics {

struct TrainProgress {
  std::string preset;
  std::string job_id;              // SLURM_JOB_ID; empty outside Slurm (no job_id label then)
  std::vector<std::string> hosts;  // rank -> host
  long step = 0;                   // steps finished, counting those before a --resume
  int planned_steps = 0;           // --steps
  double loss = 0;
  double step_seconds = 0;         // the last step, slowest rank's wall time
  double median_step_seconds = 0;  // over this run's steps, the first left out when there are more
  double tokens_per_second = 0, mfu = 0, exposed_comm_seconds = 0;
  std::optional<SlowestRank> slowest;           // the last step's, by compute time (kTrainStragglerRule)
  std::map<std::size_t, long> straggler_steps;  // rank -> steps of this run in which it was the straggler
  double updated_unix_seconds = 0;
};

// The run as gpudirect_train_* gauges, every sample labelled with preset and job_id.
PrometheusTextfile train_metrics(const TrainProgress& progress);

}  // namespace gpudirect::launcher::metrics
