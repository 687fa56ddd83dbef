#include "supervise/event_log.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace gpudirect::launcher::supervise {

EventLog::EventLog(const std::string& json_path, std::string metrics_path) : metrics_path_(std::move(metrics_path)) {
  if (json_path.empty()) return;
  json_ = std::fopen(json_path.c_str(), "a");
  if (json_ == nullptr) throw std::runtime_error("cannot open -J " + json_path + ": " + std::strerror(errno));
}

EventLog::~EventLog() {
  if (json_ != nullptr) std::fclose(json_);
}

void EventLog::train_line(const std::string& line, int attempt) {
  if (json_ == nullptr) return;
  nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
  if (record.is_discarded() || !record.is_object()) return;  // a torn line of a killed rank 0
  record["attempt"] = attempt;
  std::fprintf(json_, "%s\n", record.dump().c_str());
  std::fflush(json_);
}

void EventLog::event(nlohmann::json event) {
  if (json_ == nullptr) return;
  event["unix_time"] = static_cast<double>(std::time(nullptr));
  std::fprintf(json_, "%s\n", event.dump().c_str());
  std::fflush(json_);
}

void EventLog::metrics(const metrics::GoodputReport& report, bool force) {
  if (metrics_path_.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && last_metrics_ != std::chrono::steady_clock::time_point{} && now - last_metrics_ < std::chrono::seconds(5)) return;
  last_metrics_ = now;
  metrics::GoodputReport stamped = report;
  stamped.updated_unix_seconds = static_cast<double>(std::time(nullptr));
  try {
    metrics::goodput_metrics(stamped).write(metrics_path_);
  } catch (const std::runtime_error& e) {
    if (!warned_) std::fprintf(stderr, "gpudirect supervise: warning: %s; supervision goes on\n", e.what());
    warned_ = true;
  }
}

nlohmann::json to_json(const metrics::GoodputReport& r) {
  nlohmann::json faults = nlohmann::json::array();
  for (const metrics::FaultCost& f : r.faults)
    faults.push_back({{"kind", f.kind},
                      {"nodes", f.nodes},
                      {"reason", f.reason},
                      {"reasons", f.reasons},
                      {"detection_s", f.detection_seconds},
                      {"handling_s", f.handling_seconds},
                      {"restart_s", f.restart_seconds},
                      {"repeated_steps", f.repeated_steps},
                      {"repeated_s", f.repeated_seconds},
                      {"lost_s", f.lost_seconds()}});
  return {{"type", "goodput"},
          {"wall_s", r.wall_seconds},
          {"productive_s", r.productive_seconds},
          {"ettr", r.ettr()},
          {"lost_s", r.lost_seconds()},
          {"steps", r.steps},
          {"last_step", r.last_step},
          {"planned_steps", r.planned_steps},
          {"attempts", r.attempts},
          {"spare_nodes_left", r.spare_nodes_left},
          {"faults", faults}};
}

}  // namespace gpudirect::launcher::supervise
