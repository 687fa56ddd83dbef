#include <catch2/catch.hpp>

#include "health/pair_job.hpp"

#include <algorithm>

using namespace gpudirect::launcher::health;
using V = std::vector<std::string>;

TEST_CASE("a pair's srun line: nodes, tasks, GPUs, the user's options, then bench", "[health]") {
  JobOptions o;
  o.launcher = "/usr/bin/gpudirect-launch";
  o.gpu_direct = "tcpxo";
  o.srun_args = {"--reservation=maint"};
  o.bench_args = {"-c", "0"};
  o.pair_timeout_s = 90;
  const V argv = srun_command({"a3-1", "a3-7"}, o, "/shared/h/1.json");
  CHECK(shell_line(argv) ==
        "srun --nodes=2 --nodelist=a3-1,a3-7 --ntasks=16 --ntasks-per-node=8 --job-name=gpudirect-health --time=3 --kill-on-bad-exit=1 "
        "--gpus-per-task=1 --gpu-direct=tcpxo --reservation=maint /usr/bin/gpudirect-launch --timeout 60 bench all_gather "
        "-b 2G -e 8G -f 2 -n 20 -w 5 -c 0 --json /shared/h/1.json");
  o.gpus_per_task = 0;
  o.gpu_direct.clear();
  const V bare = srun_command({"a", "b", "c", "d"}, o, "x.json");
  CHECK(std::find(bare.begin(), bare.end(), "--nodes=4") != bare.end());
  CHECK(std::find(bare.begin(), bare.end(), "--ntasks=32") != bare.end());
  CHECK(std::none_of(bare.begin(), bare.end(), [](const std::string& a) { return a.rfind("--gpu", 0) == 0; }));
  CHECK(shell_line({"echo", "it's", "a b", ""}) == "echo 'it'\\''s' 'a b' ''");
}

TEST_CASE("bench's result from its JSON or its forwarded table", "[health]") {
  const auto json = bench_result_from_json(R"({"avg_busbw": 3.25, "wrong_total": 0, "rows": []})");
  REQUIRE(json);
  CHECK(*json->busbw == 3.25);
  CHECK_FALSE(bench_result_from_json("{\"rows\": []}"));
  CHECK_FALSE(bench_result_from_json("not json"));
  const auto table = bench_result_from_output("0: # Out of bounds values : 2 FAILED\n0: # Avg bus bandwidth    : 0.412 \n");
  REQUIRE(table);
  CHECK(*table->busbw == Approx(0.412));
  CHECK(table->wrong == 2);
  CHECK_FALSE(bench_result_from_output("srun: error: Unable to create step"));
}

TEST_CASE("a finished job becomes a run: measured, failed, timed out or never started", "[health]") {
  const std::string table = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 4.5 \n";
  CHECK(judge_job({"a", "b"}, Phase::first_pass, 0, false, 3, table, std::nullopt).outcome == Outcome::measured);
  CHECK(judge_job({"a", "b"}, Phase::first_pass, 0, false, 3, "", std::string(R"({"avg_busbw": 4.5})")).busbw == 4.5);
  const auto failed = judge_job({"a", "b"}, Phase::first_pass, 3, false, 3,
                                "gpudirect bench: rank 9 on b is gone\nsrun: error: b: task 9: Killed\n", std::nullopt);
  CHECK(failed.outcome == Outcome::failed);
  CHECK(failed.detail == "exit 3: gpudirect bench: rank 9 on b is gone");
  CHECK(
      judge_job({"a", "b"}, Phase::first_pass, 1, false, 1, "srun: error: Unable to create step\nsrun: error: Invalid gres\n", std::nullopt)
          .detail == "exit 1: srun: error: Invalid gres");
  const auto wrong = judge_job({"a", "b"}, Phase::first_pass, 7, false, 3,
                               "# Out of bounds values : 5 FAILED\n# Avg bus bandwidth    : 4.5\n", std::nullopt);
  CHECK(wrong.outcome == Outcome::failed);
  CHECK(wrong.detail == "5 wrong values");
  CHECK(judge_job({"a", "b"}, Phase::first_pass, -1, true, 60, "bench started\n", std::nullopt).outcome == Outcome::timed_out);
  CHECK(judge_job({"a", "b"}, Phase::first_pass, -1, true, 60, "srun: job 7 queued and waiting for resources\n", std::nullopt).outcome ==
        Outcome::not_started);
  CHECK(judge_job({"a", "b"}, Phase::first_pass, -1, true, 60,
                  "srun: job 7 queued and waiting for resources\nsrun: job 7 has been allocated resources\n", std::nullopt)
            .outcome == Outcome::timed_out);
}
