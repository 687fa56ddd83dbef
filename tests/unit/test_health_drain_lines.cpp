#include <catch2/catch.hpp>

#include "health/drain_lines.hpp"

using namespace gpudirect::launcher::health;

TEST_CASE("the drain reason names the measurement, the peer and the threshold", "[health]") {
  const SweepRun slow{{"node1", "node3"}, Phase::second_pass, Outcome::measured, 0.41, "", 3};
  const std::string reason = drain_reason(slow, "node3", 1.2);
  CHECK(reason == "gpudirect health: all_gather 0.41 GB/s with node1, threshold 1.2");
  CHECK(drain_line("node3", reason) ==
        "scontrol update nodename=node3 state=drain reason='gpudirect health: all_gather 0.41 GB/s with node1, threshold 1.2'");
  CHECK(drain_command("node3", reason) ==
        std::vector<std::string>{"scontrol", "update", "nodename=node3", "state=drain", "reason=" + reason});
  CHECK(resume_command("node3") == std::vector<std::string>{"scontrol", "update", "nodename=node3", "state=resume"});
}

TEST_CASE("failed and timed out pairs have their own reasons, without quotes", "[health]") {
  SweepRun timed_out{{"a", "b"}, Phase::first_pass, Outcome::timed_out, 0, "", 60.2};
  CHECK(drain_reason(timed_out, "a", 100) == "gpudirect health: all_gather timed out after 60.2 s with b");
  SweepRun failed{{"a", "b"}, Phase::first_pass, Outcome::failed, 0, "exit 3: rank \"9\" gone\n", 2};
  CHECK(drain_reason(failed, "b", 100) == "gpudirect health: all_gather failed with a (exit 3: rank '9' gone')");
}

TEST_CASE("only reasons we wrote count as drained by us", "[health]") {
  CHECK(drained_by_us("gpudirect health: all_gather 0.41 GB/s with node1, threshold 1.2"));
  CHECK_FALSE(drained_by_us("Failed DCGM"));
  CHECK_FALSE(drained_by_us("gpudirect"));
  CHECK_FALSE(drained_by_us(""));
}
