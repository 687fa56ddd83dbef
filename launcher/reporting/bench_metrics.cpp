#include "reporting/bench_metrics.hpp"

#include <set>
#include <tuple>

namespace gpudirect::launcher::metrics {
namespace {

std::string host_of(const BenchRunResult& run, std::size_t rank) { return rank < run.hosts.size() ? run.hosts[rank] : "unknown"; }

}  // namespace

std::vector<double> bench_rank_seconds(const BenchRunResult& run) {
  std::vector<double> total(run.hosts.size(), 0.0);
  for (const auto& row : run.rows) {
    if (row.rank_times_us.size() > total.size()) total.resize(row.rank_times_us.size(), 0.0);
    for (std::size_t r = 0; r < row.rank_times_us.size(); ++r) total[r] += row.rank_times_us[r] * 1e-6;
  }
  return total;
}

std::optional<SlowestRank> bench_slowest_rank(const BenchRunResult& run) {
  return slowest_rank(bench_rank_seconds(run), kBenchStragglerRule);
}

PrometheusTextfile bench_metrics(const BenchRunResult& run) {
  Labels base{{"collective", run.collective}, {"backend", run.backend}};
  if (!run.job_id.empty()) base.emplace_back("job_id", run.job_id);
  const auto with = [&base](Labels extra) {
    Labels labels = base;
    labels.insert(labels.end(), extra.begin(), extra.end());
    return labels;
  };

  PrometheusTextfile file;
  file.declare("gpudirect_bench_busbw_gbps", MetricType::gauge,
               "Average bus bandwidth of the run over every row, in GB/s (1e9 bytes/s): nccl-tests' '# Avg bus bandwidth'");
  file.declare("gpudirect_bench_size_busbw_gbps", MetricType::gauge,
               "Bus bandwidth of one row (message size, type, op, placement), in GB/s (1e9 bytes/s)");
  file.declare("gpudirect_bench_size_algbw_gbps", MetricType::gauge,
               "Algorithm bandwidth (bytes / time) of one row, in GB/s (1e9 bytes/s)");
  file.declare("gpudirect_bench_size_time_seconds", MetricType::gauge,
               "Time per collective call of one row (averaged over ranks as -a says), in seconds");
  file.declare("gpudirect_bench_ranks", MetricType::gauge, "Ranks in the run");
  file.declare("gpudirect_bench_wrong_values", MetricType::gauge,
               "Values that failed the correctness check over every row (nccl-tests' '# Out of bounds values')");
  file.declare("gpudirect_bench_min_busbw_gbps", MetricType::gauge,
               "The --min-busbw / NCCL_TESTS_MIN_BW threshold in GB/s (only when one was given)");
  file.declare("gpudirect_bench_passed", MetricType::gauge,
               "1 when no value was wrong and the average bus bandwidth was not under 0.9 x the threshold, else 0");
  file.declare("gpudirect_bench_slowest_rank_seconds", MetricType::gauge,
               "The slowest rank's time per call summed over every row, in seconds (labels: its rank and host)");
  file.declare("gpudirect_bench_median_rank_seconds", MetricType::gauge,
               "The median over ranks of each rank's time per call summed over every row, in seconds");
  file.declare("gpudirect_bench_straggler", MetricType::gauge,
               "1 when the slowest rank is a straggler (" + describe(kBenchStragglerRule) + "), else 0 (labels: its rank and host)");
  file.declare("gpudirect_bench_timestamp_seconds", MetricType::gauge, "When the run finished, in seconds since the Unix epoch");

  file.add("gpudirect_bench_busbw_gbps", base, run.avg_busbw_gbps);
  // Two requested sizes can round to the same shown size (element counts that do not divide by the
  // rank count): one sample per label set, the first row's.
  std::set<std::tuple<std::size_t, std::string, std::string, bool>> written;
  for (const auto& row : run.rows) {
    if (!written.emplace(row.bytes, row.type, row.redop, row.in_place).second) continue;
    const Labels labels = with({{"size_bytes", std::to_string(row.bytes)},
                                {"type", row.type},
                                {"redop", row.redop},
                                {"placement", row.in_place ? "in_place" : "out_of_place"}});
    file.add("gpudirect_bench_size_busbw_gbps", labels, row.busbw_gbps);
    file.add("gpudirect_bench_size_algbw_gbps", labels, row.algbw_gbps);
    file.add("gpudirect_bench_size_time_seconds", labels, row.time_us * 1e-6);
  }
  file.add("gpudirect_bench_ranks", base, static_cast<double>(run.hosts.size()));
  file.add("gpudirect_bench_wrong_values", base, static_cast<double>(run.wrong_total));
  if (run.min_busbw_gbps > 0) file.add("gpudirect_bench_min_busbw_gbps", base, run.min_busbw_gbps);
  file.add("gpudirect_bench_passed", base, run.passed ? 1 : 0);
  if (const auto slowest = bench_slowest_rank(run)) {
    const Labels who = with({{"rank", std::to_string(slowest->rank)}, {"host", host_of(run, slowest->rank)}});
    file.add("gpudirect_bench_slowest_rank_seconds", who, slowest->seconds);
    file.add("gpudirect_bench_median_rank_seconds", base, slowest->median_seconds);
    file.add("gpudirect_bench_straggler", who, slowest->straggler ? 1 : 0);
  }
  file.add("gpudirect_bench_timestamp_seconds", base, run.finished_unix_seconds);
  return file;
}

}  // namespace gpudirect::launcher::metrics
