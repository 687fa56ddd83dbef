// The supervisor's clock book: every step line, fault, drain and relaunch goes in, and out comes
// the GoodputReport (reporting/goodput_metrics.hpp): the time each fault cost and the run's
// effective training time ratio. Pure: the caller passes the (monotonic) clock.
#pragma once

#include "reporting/goodput_metrics.hpp"

#include <map>
#include <string>

namespace gpudirect::launcher::supervise {

class Goodput {
 public:
  explicit Goodput(double start) : start_(start) {}

  // A step line of any attempt. A step seen before is a repeat: its earlier run counts as lost to
  // the latest fault. The first step line after a relaunch ends that fault's restart time.
  void step(long step, double step_ms, double now);
  // A fault seen at `detected`, the step's last progress at `last_progress`. `slow_excess_s`: what
  // the slow steps that proved it took over the normal step: time lost before the detection, not
  // productive time.
  void fault(const std::string& kind, double last_progress, double detected, double slow_excess_s = 0);
  void taken_out(const std::string& node, const std::string& reason);
  void relaunched(double now);

  metrics::GoodputReport report(double now) const;
  const metrics::GoodputReport& so_far() const { return report_; }
  void set_planned_steps(long steps) { report_.planned_steps = steps; }
  void set_spares_left(int spares) { report_.spare_nodes_left = spares; }
  void set_job_id(std::string id) { report_.job_id = std::move(id); }

 private:
  double start_;
  std::map<long, double> step_ms_;  // the run that counts of each step
  double detected_at_ = 0, relaunched_at_ = 0;
  bool awaiting_first_step_ = false;
  double slow_excess_s_ = 0;
  metrics::GoodputReport report_;
};

}  // namespace gpudirect::launcher::supervise
