#include "reporting/train_metrics.hpp"

namespace gpudirect::launcher::metrics {

PrometheusTextfile train_metrics(const TrainProgress& p) {
  Labels base{{"preset", p.preset}};
  if (!p.job_id.empty()) base.emplace_back("job_id", p.job_id);
  const auto who = [&](std::size_t rank) {
    Labels labels = base;
    labels.emplace_back("rank", std::to_string(rank));
    labels.emplace_back("host", rank < p.hosts.size() ? p.hosts[rank] : "unknown");
    return labels;
  };

  PrometheusTextfile file;
  file.declare("gpudirect_train_step", MetricType::gauge, "Optimizer steps finished, counting those before a --resume");
  file.declare("gpudirect_train_planned_steps", MetricType::gauge, "The run's --steps");
  file.declare("gpudirect_train_loss", MetricType::gauge, "Training loss of the last step (mean over ranks)");
  file.declare("gpudirect_train_step_seconds", MetricType::gauge, "Wall time of the last step on the slowest rank, in seconds");
  file.declare("gpudirect_train_median_step_seconds", MetricType::gauge,
               "Median step time of this run so far, in seconds (the first step left out when there are more)");
  file.declare("gpudirect_train_tokens_per_second", MetricType::gauge, "Tokens per second of the whole job in the last step");
  file.declare("gpudirect_train_mfu_ratio", MetricType::gauge, "Model FLOPs utilisation of the last step, 0 to 1");
  file.declare("gpudirect_train_exposed_comm_seconds", MetricType::gauge,
               "Communication the last step waited for (median over ranks), in seconds");
  file.declare("gpudirect_train_ranks", MetricType::gauge, "Ranks in the job");
  file.declare("gpudirect_train_slowest_rank_compute_seconds", MetricType::gauge,
               "The last step's slowest rank by compute time (its step minus the communication it waited for), in seconds "
               "(labels: its rank and host)");
  file.declare("gpudirect_train_median_rank_compute_seconds", MetricType::gauge,
               "The last step's median compute time over ranks, in seconds");
  file.declare("gpudirect_train_straggler", MetricType::gauge,
               "1 when the last step's slowest rank is a straggler (compute time " + describe(kTrainStragglerRule) +
                   "), else 0 (labels: its rank and host)");
  file.declare("gpudirect_train_straggler_steps", MetricType::gauge,
               "Steps of this run in which the rank was the straggler (only ranks named at least once)");
  file.declare("gpudirect_train_timestamp_seconds", MetricType::gauge, "When this file was written, in seconds since the Unix epoch");

  file.add("gpudirect_train_step", base, static_cast<double>(p.step));
  file.add("gpudirect_train_planned_steps", base, p.planned_steps);
  file.add("gpudirect_train_loss", base, p.loss);
  file.add("gpudirect_train_step_seconds", base, p.step_seconds);
  file.add("gpudirect_train_median_step_seconds", base, p.median_step_seconds);
  file.add("gpudirect_train_tokens_per_second", base, p.tokens_per_second);
  file.add("gpudirect_train_mfu_ratio", base, p.mfu);
  file.add("gpudirect_train_exposed_comm_seconds", base, p.exposed_comm_seconds);
  file.add("gpudirect_train_ranks", base, static_cast<double>(p.hosts.size()));
  if (p.slowest) {
    file.add("gpudirect_train_slowest_rank_compute_seconds", who(p.slowest->rank), p.slowest->seconds);
    file.add("gpudirect_train_median_rank_compute_seconds", base, p.slowest->median_seconds);
    file.add("gpudirect_train_straggler", who(p.slowest->rank), p.slowest->straggler ? 1 : 0);
  }
  for (const auto& [rank, steps] : p.straggler_steps) file.add("gpudirect_train_straggler_steps", who(rank), static_cast<double>(steps));
  file.add("gpudirect_train_timestamp_seconds", base, p.updated_unix_seconds);
  return file;
}

}  // namespace gpudirect::launcher::metrics
