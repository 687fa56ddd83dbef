// When a supervised training step is in trouble, from its own progress: rank 0's JSON step lines
// and the time between them. Pure (the caller passes the clock), so every rule is tested without a
// cluster. What it cannot see, a rank that died, the supervisor learns from srun's exit instead.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpudirect::launcher::supervise {

struct WatchSettings {
  int straggler_steps = 5;    // the same host named the straggler on K consecutive steps; 0: off
  int slow_steps = 5;         // K consecutive steps over slow_factor x the run's normal step; 0: off
  double slow_factor = 2.0;   // "slow" against the run's normal step time
  int baseline_steps = 10;    // the normal step: median of the run's first N steps (each attempt's first left out)
  double hang_factor = 20;    // no step for max(hang_min_s, hang_factor x the normal step) is a hang
  double hang_min_s = 30;     // never less than this: a loaded machine has slow steps that are not hangs
  double start_s = 300;       // from a step's launch to its first step line (rendezvous, resume, warm-up)
  double checkpoint_s = 120;  // more after a step that writes a checkpoint (at least 3x the longest write seen)
};

struct StepRecord {
  long step = 0;          // 1-based, as the JSON's "step"
  double step_ms = 0;     // the slowest rank's step time
  std::string straggler;  // the straggler's host ("" when the step had none)
  std::string detail;     // its "rank R computed X ms, median Y ms" for the report
};

enum class FaultKind { rank_failure, hang, straggler, slow_steps, start_timeout };

const char* to_string(FaultKind kind);

struct Fault {
  FaultKind kind = FaultKind::rank_failure;
  std::string host;          // the node the rule names ("" when it names none: a hang, slow steps)
  std::string detail;        // the evidence, for the log, the drain comment and the report
  double last_progress = 0;  // when the step last made progress (the detection delay runs from here)
  double excess_s = 0;       // slow steps, straggler: what the streak's steps took over the normal step
};

class FaultWatch {
 public:
  explicit FaultWatch(WatchSettings settings);

  // A new step was launched at `now`: the streaks and the progress clock start again; the
  // normal step time learnt so far is kept (a restart must not hide a slow node behind a new normal).
  void attempt_started(double now);
  // A step line arrived. `checkpoint_due`: the step is one after which rank 0 writes a checkpoint.
  void step(const StepRecord& record, double now, bool checkpoint_due);
  // A checkpoint line arrived: the write took `seconds` (learnt for the checkpoint allowance).
  void checkpoint_written(double seconds, double now);

  // The normal step time is learnt again from the next steps: slow steps that no node explains
  // (the pair test and the checks found nothing) are the run's new normal.
  void relearn_normal();

  // The fault the rules see at `now`, if any: a straggler or slow-step streak that reached K, a
  // step that has run past its allowance, or no first step within the start-up allowance.
  std::optional<Fault> check(double now) const;

  // The run's normal step time in ms (0 until baseline_steps steps have been seen).
  double normal_step_ms() const { return normal_ms_; }
  // How long the current step may go without progress, in s.
  double allowance() const;
  double last_progress() const { return last_progress_; }
  long steps_this_attempt() const { return steps_this_attempt_; }

 private:
  WatchSettings s_;
  std::vector<double> baseline_;  // step times until the normal is known
  double normal_ms_ = 0;
  std::vector<double> attempt_ms_;  // this attempt's step times, for the hang allowance before the normal is known
  double last_progress_ = 0;
  long steps_this_attempt_ = 0;
  bool checkpoint_pending_ = false;
  double longest_checkpoint_s_ = 0;
  std::string straggler_host_;
  int straggler_streak_ = 0;
  std::string straggler_detail_;
  int slow_streak_ = 0;
  double straggler_excess_ms_ = 0, slow_excess_ms_ = 0;
  std::string slow_detail_;
};

}  // namespace gpudirect::launcher::supervise
