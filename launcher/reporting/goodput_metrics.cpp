#include "reporting/goodput_metrics.hpp"

#include <map>

namespace gpudirect::launcher::metrics {

double GoodputReport::lost_seconds() const {
  double lost = 0;
  for (const FaultCost& f : faults) lost += f.lost_seconds();
  return lost;
}

PrometheusTextfile goodput_metrics(const GoodputReport& r) {
  Labels base;
  if (!r.job_id.empty()) base.emplace_back("job_id", r.job_id);
  const auto with = [&](const char* name, const std::string& value) {
    Labels labels = base;
    labels.emplace_back(name, value);
    return labels;
  };
  PrometheusTextfile file;
  file.declare("gpudirect_supervise_ettr_ratio", MetricType::gauge,
               "Effective training time ratio: productive step time over wall time since the supervisor started, 0 to 1");
  file.declare("gpudirect_supervise_wall_seconds", MetricType::gauge, "Wall time since the supervisor started, in seconds");
  file.declare("gpudirect_supervise_productive_seconds", MetricType::gauge,
               "Step time of the steps that count (each step once, its last run), in seconds");
  file.declare("gpudirect_supervise_lost_seconds", MetricType::gauge,
               "Wall time the faults cost, by cause: detection, handling (stop, check, drain), restart (launch to first step), "
               "repeated_steps, in seconds");
  file.declare("gpudirect_supervise_faults", MetricType::gauge, "Faults the supervisor acted on, by kind");
  file.declare("gpudirect_supervise_drained_nodes", MetricType::gauge, "Nodes taken out of the run, by drain reason");
  file.declare("gpudirect_supervise_step", MetricType::gauge, "The highest step done, counting steps before a requeue's resume");
  file.declare("gpudirect_supervise_planned_steps", MetricType::gauge, "The training's --steps");
  file.declare("gpudirect_supervise_attempts", MetricType::gauge, "Training steps (srun) launched");
  file.declare("gpudirect_supervise_spare_nodes", MetricType::gauge, "Spare nodes left");
  file.declare("gpudirect_supervise_timestamp_seconds", MetricType::gauge, "When this file was written, in seconds since the Unix epoch");

  file.add("gpudirect_supervise_ettr_ratio", base, r.ettr());
  file.add("gpudirect_supervise_wall_seconds", base, r.wall_seconds);
  file.add("gpudirect_supervise_productive_seconds", base, r.productive_seconds);
  double detection = 0, handling = 0, restart = 0, repeated = 0;
  std::map<std::string, double> kinds, reasons;
  for (const FaultCost& f : r.faults) {
    detection += f.detection_seconds;
    handling += f.handling_seconds;
    restart += f.restart_seconds;
    repeated += f.repeated_seconds;
    ++kinds[f.kind];
    for (const std::string& reason : f.reasons) ++reasons[reason.empty() ? "unspecified" : reason];
  }
  file.add("gpudirect_supervise_lost_seconds", with("cause", "detection"), detection);
  file.add("gpudirect_supervise_lost_seconds", with("cause", "handling"), handling);
  file.add("gpudirect_supervise_lost_seconds", with("cause", "restart"), restart);
  file.add("gpudirect_supervise_lost_seconds", with("cause", "repeated_steps"), repeated);
  for (const auto& [kind, count] : kinds) file.add("gpudirect_supervise_faults", with("kind", kind), count);
  for (const auto& [reason, count] : reasons) file.add("gpudirect_supervise_drained_nodes", with("reason", reason), count);
  file.add("gpudirect_supervise_step", base, static_cast<double>(r.last_step));
  file.add("gpudirect_supervise_planned_steps", base, static_cast<double>(r.planned_steps));
  file.add("gpudirect_supervise_attempts", base, r.attempts);
  file.add("gpudirect_supervise_spare_nodes", base, r.spare_nodes_left);
  file.add("gpudirect_supervise_timestamp_seconds", base, r.updated_unix_seconds);
  return file;
}

}  // namespace gpudirect::launcher::metrics
