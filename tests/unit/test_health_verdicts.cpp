#include <catch2/catch.hpp>

#include "health/threshold.hpp"
#include "health/verdicts.hpp"

using namespace gpudirect::launcher::health;
using V = std::vector<std::string>;

namespace {

SweepRun measured(std::string a, std::string b, double busbw, Phase phase = Phase::first_pass) {
  SweepRun run;
  run.nodes = {std::move(a), std::move(b)};
  run.phase = phase;
  run.outcome = Outcome::measured;
  run.busbw = busbw;
  return run;
}

SweepRun ended(std::string a, std::string b, Outcome outcome, Phase phase = Phase::first_pass) {
  SweepRun run;
  run.nodes = {std::move(a), std::move(b)};
  run.phase = phase;
  run.outcome = outcome;
  return run;
}

Verdict verdict_of(const std::vector<NodeVerdict>& verdicts, const std::string& node) {
  for (const auto& v : verdicts)
    if (v.node == node) return v.verdict;
  FAIL("no verdict for " << node);
  return Verdict::untested;
}

}  // namespace

TEST_CASE("known machine types have cluster-health-scanner's thresholds", "[health]") {
  CHECK(machine_type_threshold("a3-megagpu-8g") == 150.0);
  CHECK(machine_type_threshold("a3-highgpu-8g") == 60.0);
  CHECK_FALSE(machine_type_threshold("n2-standard-8"));
  CHECK_THROWS_WITH(choose_threshold(std::nullopt, "a3-mega", 0.7, {}), Catch::Contains("a3-megagpu-8g (150 GB/s)"));
}

TEST_CASE("the threshold: given, else the machine type's, else a factor of the median", "[health]") {
  const std::vector<SweepRun> runs{measured("a", "b", 10), measured("c", "d", 2), measured("e", "f", 12), ended("g", "h", Outcome::failed)};
  CHECK(median_busbw(runs) == 10.0);
  CHECK(median_busbw({measured("a", "b", 10), measured("c", "d", 20)}) == 15.0);
  CHECK(median_busbw({ended("a", "b", Outcome::timed_out)}) == 0.0);
  CHECK(choose_threshold(5.0, "a3-megagpu-8g", 0.7, runs).gbps == 5.0);
  CHECK(choose_threshold(std::nullopt, "a3-megagpu-8g", 0.7, runs).gbps == 150.0);
  const Threshold relative = choose_threshold(std::nullopt, "", 0.7, runs);
  CHECK(relative.gbps == Approx(7.0));
  CHECK(relative.source == "0.7 x the median 10 GB/s");
}

TEST_CASE("a node that fails with a good peer is bad, its first peer is cleared by the second pass", "[health]") {
  // Pass 1: (n1,n2) slow, (n3,n4) fine. Pass 2: n1 with n3 fine, n2 with n4 slow.
  const std::vector<SweepRun> runs{measured("n1", "n2", 0.4), measured("n3", "n4", 5), measured("n1", "n3", 5, Phase::second_pass),
                                   measured("n2", "n4", 0.5, Phase::second_pass)};
  const auto first = judge_nodes({"n1", "n2", "n3", "n4"}, {runs[0], runs[1]}, 3);
  CHECK(suspects(first) == V{"n1", "n2"});
  CHECK(nodes_with(first, Verdict::good) == V{"n3", "n4"});
  const auto verdicts = judge_nodes({"n1", "n2", "n3", "n4"}, runs, 3);
  CHECK(verdict_of(verdicts, "n1") == Verdict::good);
  CHECK(verdict_of(verdicts, "n2") == Verdict::bad);
  CHECK(verdict_of(verdicts, "n3") == Verdict::good);
  CHECK(verdict_of(verdicts, "n4") == Verdict::good);
  const auto& n2 = verdicts[1];
  REQUIRE(n2.evidence);
  CHECK(*n2.evidence == 3);  // the run with n4, a good peer; not the first pair with n1
  CHECK(n2.runs == std::vector<std::size_t>{0, 3});
}

TEST_CASE("failed and timed out runs fail, a run that never started says nothing", "[health]") {
  const std::vector<SweepRun> runs{measured("a", "b", 5), ended("c", "a", Outcome::timed_out, Phase::second_pass),
                                   ended("d", "b", Outcome::failed, Phase::second_pass), ended("e", "f", Outcome::not_started)};
  const auto verdicts = judge_nodes({"a", "b", "c", "d", "e", "f"}, runs, 1);
  CHECK(verdict_of(verdicts, "c") == Verdict::bad);
  CHECK(verdict_of(verdicts, "d") == Verdict::bad);
  CHECK(verdict_of(verdicts, "e") == Verdict::untested);
  CHECK(verdict_of(verdicts, "f") == Verdict::untested);
}

TEST_CASE("without a good peer both nodes of a failing pair stay suspect, groups never decide", "[health]") {
  SweepRun group = measured("a", "b", 0.1, Phase::group);
  group.nodes = {"a", "b", "c", "d"};
  const auto verdicts = judge_nodes({"a", "b", "c"}, {measured("a", "b", 0.1), group}, 1);
  CHECK(verdict_of(verdicts, "a") == Verdict::suspect);
  CHECK(verdict_of(verdicts, "b") == Verdict::suspect);
  CHECK(verdict_of(verdicts, "c") == Verdict::untested);
  CHECK(verdicts[0].runs.size() == 1);
}
