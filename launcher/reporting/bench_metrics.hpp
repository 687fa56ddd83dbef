// What `gpudirect-launch bench --metrics-file` writes: one run's results as Prometheus gauges
// (gpudirect_bench_*, documented in docs/monitoring.md), and the run's slowest rank.
#pragma once

#include "reporting/prometheus_textfile.hpp"
#include "reporting/straggler.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpudirect::launcher::metrics {

// One table row, one of its two halves (out-of-place or in-place).
struct BenchRowResult {
  std::size_t bytes = 0;
  std::string type, redop;  // redop "none" for collectives that do not reduce
  bool in_place = false;
  double time_us = 0, algbw_gbps = 0, busbw_gbps = 0;
  std::size_t wrong = 0;
  std::vector<double> rank_times_us;  // every rank's time per call
};

struct BenchRunResult {
  std::string collective, backend;
  std::string job_id;              // SLURM_JOB_ID; empty outside Slurm (no job_id label then)
  std::vector<std::string> hosts;  // rank -> host
  std::vector<BenchRowResult> rows;
  double avg_busbw_gbps = 0;
  double min_busbw_gbps = 0;  // the threshold; 0 when none was given
  std::size_t wrong_total = 0;
  bool passed = true;
  double finished_unix_seconds = 0;
};

// Every rank's time per call summed over all rows (seconds), so one rank slow at every size
// stands out even when each row's difference is small.
std::vector<double> bench_rank_seconds(const BenchRunResult& run);

// The slowest rank of the run by bench_rank_seconds, judged by kBenchStragglerRule.
std::optional<SlowestRank> bench_slowest_rank(const BenchRunResult& run);

// The run as gpudirect_bench_* gauges, every sample labelled with collective, backend and job_id.
PrometheusTextfile bench_metrics(const BenchRunResult& run);

}  // namespace gpudirect::launcher::metrics
