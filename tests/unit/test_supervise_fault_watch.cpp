#include <catch2/catch.hpp>

#include "supervise/fault_watch.hpp"

using namespace gpudirect::launcher::supervise;

namespace {

WatchSettings settings() {
  WatchSettings s;
  s.straggler_steps = 3;
  s.slow_steps = 3;
  s.slow_factor = 2;
  s.baseline_steps = 4;
  s.hang_factor = 10;
  s.hang_min_s = 5;
  s.start_s = 60;
  s.checkpoint_s = 20;
  return s;
}

// Feeds steps first..last, each `ms` long, one second apart from `t`; returns the time after.
double feed(FaultWatch& w, long first, long last, double ms, double t, const std::string& straggler = "") {
  for (long s = first; s <= last; ++s) w.step({s, ms, straggler, straggler.empty() ? "" : "rank 3 computed 90 ms"}, t += 1, false);
  return t;
}

}  // namespace

TEST_CASE("the normal step is the median of the first steps, each attempt's first left out", "[supervise]") {
  FaultWatch w(settings());
  w.attempt_started(0);
  w.step({1, 900, "", ""}, 1, false);  // warm-up: not part of the normal
  CHECK(w.normal_step_ms() == 0);
  feed(w, 2, 4, 100, 1);
  CHECK(w.normal_step_ms() == 0);  // 3 of 4
  feed(w, 5, 5, 120, 4);
  CHECK(w.normal_step_ms() == Approx(100));
  w.attempt_started(10);  // a restart keeps what was learnt
  CHECK(w.normal_step_ms() == Approx(100));
}

TEST_CASE("slow steps: K consecutive steps over the factor are a fault, a normal step in between resets the count", "[supervise]") {
  FaultWatch w(settings());
  w.attempt_started(0);
  double t = feed(w, 1, 5, 100, 0);
  t = feed(w, 6, 7, 250, t);
  CHECK_FALSE(w.check(t));
  t = feed(w, 8, 8, 150, t);  // under 2x: the streak ends
  t = feed(w, 9, 10, 250, t);
  CHECK_FALSE(w.check(t));
  t = feed(w, 11, 11, 260, t);
  const auto fault = w.check(t);
  REQUIRE(fault);
  CHECK(fault->kind == FaultKind::slow_steps);
  CHECK(fault->host.empty());
  CHECK(fault->detail == "3 consecutive steps over 2x the normal step (last: step 11 took 260.0 ms, the run's normal step 100.0 ms)");
  CHECK(fault->excess_s == Approx((150 + 150 + 160) / 1e3));
}

TEST_CASE("slow steps are not judged before the normal is known, nor on an attempt's first step", "[supervise]") {
  FaultWatch w(settings());
  w.attempt_started(0);
  double t = feed(w, 1, 4, 1000, 0);  // slow from the start: this is the normal
  CHECK_FALSE(w.check(t));
  t = feed(w, 5, 9, 1000, t);
  CHECK_FALSE(w.check(t));
  w.attempt_started(t);
  w.step({10, 5000, "", ""}, t + 1, false);  // a resumed attempt's warm-up step
  CHECK_FALSE(w.check(t + 1));
}

TEST_CASE("relearn_normal takes the next steps as the new normal", "[supervise]") {
  FaultWatch w(settings());
  w.attempt_started(0);
  double t = feed(w, 1, 5, 100, 0);
  w.relearn_normal();
  CHECK(w.normal_step_ms() == 0);
  t = feed(w, 6, 9, 300, t);
  CHECK(w.normal_step_ms() == Approx(300));
  CHECK_FALSE(w.check(t));
}

TEST_CASE("a straggler: the same host on K consecutive steps, not K steps of different hosts", "[supervise]") {
  FaultWatch w(settings());
  w.attempt_started(0);
  double t = feed(w, 1, 5, 100, 0);
  t = feed(w, 6, 7, 100, t, "node3");
  t = feed(w, 8, 8, 100, t, "node2");
  t = feed(w, 9, 10, 100, t, "node3");
  CHECK_FALSE(w.check(t));
  t = feed(w, 11, 11, 100, t, "node3");
  const auto fault = w.check(t);
  REQUIRE(fault);
  CHECK(fault->kind == FaultKind::straggler);
  CHECK(fault->host == "node3");
  CHECK(fault->detail == "the straggler on 3 consecutive steps (last: rank 3 computed 90 ms)");
}

TEST_CASE("rules set to 0 never fire", "[supervise]") {
  WatchSettings s = settings();
  s.straggler_steps = 0;
  s.slow_steps = 0;
  FaultWatch w(s);
  w.attempt_started(0);
  double t = feed(w, 1, 5, 100, 0);
  t = feed(w, 6, 20, 900, t, "node3");
  CHECK_FALSE(w.check(t));
}

TEST_CASE("a hang: no step for the allowance, learnt from the step times, never under the minimum", "[supervise]") {
  FaultWatch w(settings());
  w.attempt_started(0);
  CHECK(w.allowance() == 60);  // before the first step: the start-up allowance
  CHECK_FALSE(w.check(59));
  const auto start = w.check(61);
  REQUIRE(start);
  CHECK(start->kind == FaultKind::start_timeout);

  w.attempt_started(100);
  double t = feed(w, 1, 5, 100, 100);
  CHECK(w.allowance() == 5);  // 10 x 0.1 s is under the 5 s minimum
  CHECK_FALSE(w.check(t + 4.9));
  const auto hang = w.check(t + 5.1);
  REQUIRE(hang);
  CHECK(hang->kind == FaultKind::hang);
  CHECK(hang->last_progress == t);

  FaultWatch slow(settings());
  slow.attempt_started(0);
  t = feed(slow, 1, 5, 2000, 0);
  CHECK(slow.allowance() == Approx(20));  // 10 x 2 s
}

TEST_CASE("a step that writes a checkpoint gets the checkpoint allowance, at least 3x the longest write", "[supervise]") {
  FaultWatch w(settings());
  w.attempt_started(0);
  double t = feed(w, 1, 5, 100, 0);
  w.step({6, 100, "", ""}, t += 1, true);
  CHECK(w.allowance() == Approx(5 + 20));
  CHECK_FALSE(w.check(t + 24));
  w.checkpoint_written(12, t + 12);
  CHECK(w.allowance() == Approx(5));  // written: back to the step allowance
  w.step({7, 100, "", ""}, t + 13, true);
  CHECK(w.allowance() == Approx(5 + 36));  // 3 x the 12 s write
  const auto hang = w.check(t + 13 + 42);
  REQUIRE(hang);
  CHECK(hang->detail.find("a checkpoint write included") != std::string::npos);
}
