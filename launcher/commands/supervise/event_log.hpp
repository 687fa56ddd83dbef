// What the supervisor writes for scripts and dashboards: -J's JSON lines (every attempt's own
// train lines with "attempt": N, then the supervisor's events: fault, check, drain, restart,
// goodput) and the --metrics-file (gpudirect_supervise_* gauges, reporting/goodput_metrics.hpp).
#pragma once

#include "reporting/goodput_metrics.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <string>

namespace gpudirect::launcher::supervise {

class EventLog {
 public:
  // Opens -J for appending (a requeued job's supervisor continues the same file); throws
  // std::runtime_error naming the path. Either path may be empty.
  EventLog(const std::string& json_path, std::string metrics_path);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // A train JSON line of attempt `attempt`, passed on with the attempt's number added.
  void train_line(const std::string& line, int attempt);
  void event(nlohmann::json event);
  // The metrics file, at most every 5 s unless `force`. A failed write warns once per run and
  // does not stop the supervisor.
  void metrics(const metrics::GoodputReport& report, bool force);

 private:
  std::FILE* json_ = nullptr;
  std::string metrics_path_;
  std::chrono::steady_clock::time_point last_metrics_{};
  bool warned_ = false;
};

nlohmann::json to_json(const metrics::GoodputReport& report);

}  // namespace gpudirect::launcher::supervise
