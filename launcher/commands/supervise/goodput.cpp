#include "supervise/goodput.hpp"

namespace gpudirect::launcher::supervise {

void Goodput::step(long step, double step_ms, double now) {
  auto [at, fresh] = step_ms_.try_emplace(step, step_ms);
  if (!fresh) {
    if (!report_.faults.empty()) {
      ++report_.faults.back().repeated_steps;
      report_.faults.back().repeated_seconds += at->second / 1e3;
    }
    at->second = step_ms;
  }
  if (awaiting_first_step_) {
    awaiting_first_step_ = false;
    // Up to the end of the new attempt's first step, less that step, which counts as productive.
    if (!report_.faults.empty()) report_.faults.back().restart_seconds += now - relaunched_at_ - step_ms / 1e3;
  }
}

void Goodput::fault(const std::string& kind, double last_progress, double detected, double slow_excess_s) {
  metrics::FaultCost cost;
  cost.kind = kind;
  cost.detection_seconds = (detected > last_progress ? detected - last_progress : 0) + slow_excess_s;
  slow_excess_s_ += slow_excess_s;
  report_.faults.push_back(cost);
  detected_at_ = detected;
  awaiting_first_step_ = false;
}

void Goodput::taken_out(const std::string& node, const std::string& reason) {
  if (report_.faults.empty()) return;
  metrics::FaultCost& f = report_.faults.back();
  if (f.nodes.empty()) f.reason = reason;
  f.nodes.push_back(node);
  f.reasons.push_back(reason);
}

void Goodput::relaunched(double now) {
  ++report_.attempts;
  relaunched_at_ = now;
  // The first launch is start-up, not a fault's cost.
  if (report_.attempts == 1 || report_.faults.empty()) return;
  report_.faults.back().handling_seconds += now - detected_at_;
  detected_at_ = now;  // a relaunch that itself fails to start adds from here
  awaiting_first_step_ = true;
}

metrics::GoodputReport Goodput::report(double now) const {
  metrics::GoodputReport r = report_;
  r.wall_seconds = now - start_;
  r.productive_seconds = 0;
  for (const auto& [step, ms] : step_ms_) r.productive_seconds += ms / 1e3;
  r.productive_seconds -= slow_excess_s_;
  r.steps = static_cast<long>(step_ms_.size());
  r.last_step = step_ms_.empty() ? 0 : step_ms_.rbegin()->first;
  return r;
}

}  // namespace gpudirect::launcher::supervise
