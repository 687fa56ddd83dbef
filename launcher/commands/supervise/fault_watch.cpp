#include "supervise/fault_watch.hpp"

#include <algorithm>
#include <cstdio>

namespace gpudirect::launcher::supervise {
namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string ms(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f ms", value);
  return text;
}

}  // namespace

const char* to_string(FaultKind kind) {
  switch (kind) {
    case FaultKind::rank_failure:
      return "rank failure";
    case FaultKind::hang:
      return "hang";
    case FaultKind::straggler:
      return "straggler";
    case FaultKind::slow_steps:
      return "slow steps";
    case FaultKind::start_timeout:
      return "start-up timeout";
  }
  return "?";
}

FaultWatch::FaultWatch(WatchSettings settings) : s_(settings) {}

void FaultWatch::attempt_started(double now) {
  last_progress_ = now;
  steps_this_attempt_ = 0;
  attempt_ms_.clear();
  checkpoint_pending_ = false;
  straggler_host_.clear();
  straggler_streak_ = slow_streak_ = 0;
  straggler_excess_ms_ = slow_excess_ms_ = 0;
}

void FaultWatch::step(const StepRecord& r, double now, bool checkpoint_due) {
  last_progress_ = now;
  checkpoint_pending_ = checkpoint_due;
  // An attempt's first step carries its warm-up (first touches, the resume's broadcast): it says
  // nothing about the nodes' speed.
  if (++steps_this_attempt_ == 1) return;
  attempt_ms_.push_back(r.step_ms);
  if (normal_ms_ == 0) {
    baseline_.push_back(r.step_ms);
    if (static_cast<int>(baseline_.size()) >= std::max(1, s_.baseline_steps)) normal_ms_ = median_of(baseline_);
  }

  const double excess = normal_ms_ > 0 ? std::max(0.0, r.step_ms - normal_ms_) : 0;
  if (!r.straggler.empty() && r.straggler == straggler_host_) {
    ++straggler_streak_;
    straggler_excess_ms_ += excess;
  } else {
    straggler_host_ = r.straggler;
    straggler_streak_ = r.straggler.empty() ? 0 : 1;
    straggler_excess_ms_ = r.straggler.empty() ? 0 : excess;
  }
  if (straggler_streak_ > 0) straggler_detail_ = r.detail;

  if (normal_ms_ > 0 && r.step_ms > s_.slow_factor * normal_ms_) {
    ++slow_streak_;
    slow_excess_ms_ += excess;
    slow_detail_ = "step " + std::to_string(r.step) + " took " + ms(r.step_ms) + ", the run's normal step " + ms(normal_ms_);
  } else {
    slow_streak_ = 0;
    slow_excess_ms_ = 0;
  }
}

void FaultWatch::relearn_normal() {
  normal_ms_ = 0;
  baseline_.clear();
}

void FaultWatch::checkpoint_written(double seconds, double now) {
  last_progress_ = now;
  checkpoint_pending_ = false;
  longest_checkpoint_s_ = std::max(longest_checkpoint_s_, seconds);
}

double FaultWatch::allowance() const {
  if (steps_this_attempt_ == 0) return s_.start_s;
  const double normal_ms = normal_ms_ > 0 ? normal_ms_ : median_of(attempt_ms_);
  double allowance = std::max(s_.hang_min_s, s_.hang_factor * normal_ms / 1e3);
  if (checkpoint_pending_) allowance += std::max(s_.checkpoint_s, 3 * longest_checkpoint_s_);
  return allowance;
}

std::optional<Fault> FaultWatch::check(double now) const {
  if (s_.straggler_steps > 0 && straggler_streak_ >= s_.straggler_steps)
    return Fault{FaultKind::straggler, straggler_host_,
                 "the straggler on " + std::to_string(straggler_streak_) + " consecutive steps (last: " + straggler_detail_ + ")",
                 last_progress_, straggler_excess_ms_ / 1e3};
  if (s_.slow_steps > 0 && slow_streak_ >= s_.slow_steps)
    return Fault{FaultKind::slow_steps, "",
                 std::to_string(slow_streak_) + " consecutive steps over " +
                     [&] {
                       char f[16];
                       std::snprintf(f, sizeof f, "%g", s_.slow_factor);
                       return std::string(f);
                     }() +
                     "x the normal step (last: " + slow_detail_ + ")",
                 last_progress_, slow_excess_ms_ / 1e3};
  const double quiet = now - last_progress_;
  if (quiet > allowance()) {
    char text[160];
    if (steps_this_attempt_ == 0) {
      std::snprintf(text, sizeof text, "no first step within %.0f s of the launch (--start-timeout)", allowance());
      return Fault{FaultKind::start_timeout, "", text, last_progress_};
    }
    std::snprintf(text, sizeof text, "no step for %.1f s (allowance %.1f s%s)", quiet, allowance(),
                  checkpoint_pending_ ? ", a checkpoint write included" : "");
    return Fault{FaultKind::hang, "", text, last_progress_};
  }
  return std::nullopt;
}

}  // namespace gpudirect::launcher::supervise
