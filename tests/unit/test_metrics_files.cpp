#include <catch2/catch.hpp>

#include "reporting/bench_metrics.hpp"
#include "reporting/train_metrics.hpp"

using namespace gpudirect::launcher::metrics;
using Catch::Contains;

namespace {

BenchRunResult three_rank_run() {
  BenchRunResult run;
  run.collective = "all_gather";
  run.backend = "libfabric/tcp";
  run.hosts = {"n0", "n1", "n2"};
  // Rank 2 is slow at every size: 300 + 900 us against 100 + 300 us.
  run.rows = {{1024, "float", "none", false, 150, 0.5, 0.33, 0, {100, 100, 300}},
              {1024, "float", "none", true, 150, 0.5, 0.33, 0, {100, 110, 900}}};
  run.avg_busbw_gbps = 0.33;
  run.finished_unix_seconds = 1700000000.5;
  return run;
}

}  // namespace

TEST_CASE("bench: the run's slowest rank sums each rank's time over the rows", "[metrics]") {
  const auto run = three_rank_run();
  const auto seconds = bench_rank_seconds(run);
  REQUIRE(seconds.size() == 3);
  CHECK(seconds[0] == Approx(200e-6));
  CHECK(seconds[1] == Approx(210e-6));
  CHECK(seconds[2] == Approx(1200e-6));
  const auto slowest = bench_slowest_rank(run);
  REQUIRE(slowest);
  CHECK(slowest->rank == 2);
  CHECK(slowest->median_seconds == Approx(210e-6));
  CHECK(slowest->straggler);
}

TEST_CASE("bench: the metrics file has the average, every row, the straggler and the time", "[metrics]") {
  auto run = three_rank_run();
  const std::string text = bench_metrics(run).text();
  const std::string base = "collective=\"all_gather\",backend=\"libfabric/tcp\"";
  CHECK_THAT(text, Contains("# TYPE gpudirect_bench_busbw_gbps gauge\ngpudirect_bench_busbw_gbps{" + base + "} 0.33\n"));
  CHECK_THAT(text, Contains("gpudirect_bench_size_busbw_gbps{" + base +
                            ",size_bytes=\"1024\",type=\"float\",redop=\"none\",placement=\"in_place\"} 0.33\n"));
  CHECK_THAT(text, Contains("gpudirect_bench_size_time_seconds{" + base +
                            ",size_bytes=\"1024\",type=\"float\",redop=\"none\",placement=\"out_of_place\"} 0.00015\n"));
  CHECK_THAT(text, Contains("gpudirect_bench_ranks{" + base + "} 3\n"));
  CHECK_THAT(text, Contains("gpudirect_bench_passed{" + base + "} 1\n"));
  CHECK_THAT(text, Contains("gpudirect_bench_straggler{" + base + ",rank=\"2\",host=\"n2\"} 1\n"));
  CHECK_THAT(text, Contains("gpudirect_bench_slowest_rank_seconds{" + base + ",rank=\"2\",host=\"n2\"} 0.0012\n"));
  CHECK_THAT(text, Contains("gpudirect_bench_timestamp_seconds{" + base + "} 1700000000.5\n"));
  CHECK_THAT(text, Contains("over 1.5 x the median and 50 us above it"));
  CHECK(text.find("job_id") == std::string::npos);                          // outside Slurm: no job_id label
  CHECK(text.find("gpudirect_bench_min_busbw_gbps") == std::string::npos);  // no threshold given

  run.job_id = "4242";
  run.min_busbw_gbps = 150;
  run.passed = false;
  const std::string in_job = bench_metrics(run).text();
  CHECK_THAT(in_job, Contains("gpudirect_bench_busbw_gbps{" + base + ",job_id=\"4242\"} 0.33\n"));
  CHECK_THAT(in_job, Contains("gpudirect_bench_min_busbw_gbps{" + base + ",job_id=\"4242\"} 150\n"));
  CHECK_THAT(in_job, Contains("gpudirect_bench_passed{" + base + ",job_id=\"4242\"} 0\n"));
}

TEST_CASE("bench: rows that show the same size are written once", "[metrics]") {
  auto run = three_rank_run();
  run.rows.push_back(run.rows[0]);
  run.rows.back().busbw_gbps = 99;
  std::string text;
  REQUIRE_NOTHROW(text = bench_metrics(run).text());
  CHECK(text.find(" 99\n") == std::string::npos);
}

TEST_CASE("bench: one rank names no straggler", "[metrics]") {
  BenchRunResult run;
  run.collective = "all_reduce";
  run.backend = "nccl";
  run.hosts = {"solo"};
  run.rows = {{8, "float", "sum", false, 10, 0.0008, 0, 0, {10}}};
  const std::string text = bench_metrics(run).text();
  CHECK_THAT(text, Contains("gpudirect_bench_straggler{collective=\"all_reduce\",backend=\"nccl\",rank=\"0\",host=\"solo\"} 0\n"));
}

TEST_CASE("train: the metrics file has the step, throughput, MFU, loss and the straggler", "[metrics]") {
  TrainProgress p;
  p.preset = "tiny";
  p.job_id = "77";
  p.hosts = {"a", "b"};
  p.step = 12;
  p.planned_steps = 20;
  p.loss = 5.25;
  p.step_seconds = 0.5;
  p.median_step_seconds = 0.25;
  p.tokens_per_second = 1024;
  p.mfu = 0.375;
  p.exposed_comm_seconds = 0.125;
  p.slowest = slowest_rank({0.1, 0.3}, kTrainStragglerRule);
  p.straggler_steps = {{1, 4}};
  p.updated_unix_seconds = 1700000000;
  const std::string text = train_metrics(p).text();
  const std::string base = "preset=\"tiny\",job_id=\"77\"";
  for (const std::string& line :
       {"gpudirect_train_step{" + base + "} 12\n", "gpudirect_train_planned_steps{" + base + "} 20\n",
        "gpudirect_train_loss{" + base + "} 5.25\n", "gpudirect_train_step_seconds{" + base + "} 0.5\n",
        "gpudirect_train_median_step_seconds{" + base + "} 0.25\n", "gpudirect_train_tokens_per_second{" + base + "} 1024\n",
        "gpudirect_train_mfu_ratio{" + base + "} 0.375\n", "gpudirect_train_exposed_comm_seconds{" + base + "} 0.125\n",
        "gpudirect_train_ranks{" + base + "} 2\n", "gpudirect_train_slowest_rank_compute_seconds{" + base + ",rank=\"1\",host=\"b\"} 0.3\n",
        "gpudirect_train_median_rank_compute_seconds{" + base + "} 0.2\n",
        "gpudirect_train_straggler{" + base + ",rank=\"1\",host=\"b\"} 1\n",
        "gpudirect_train_straggler_steps{" + base + ",rank=\"1\",host=\"b\"} 4\n",
        "gpudirect_train_timestamp_seconds{" + base + "} 1700000000\n"}) {
    INFO(line);
    CHECK_THAT(text, Contains(line));
  }
}

TEST_CASE("train: before any straggler there are no straggler_steps samples", "[metrics]") {
  TrainProgress p;
  p.preset = "gpt2-124m";
  p.hosts = {"a"};
  p.slowest = slowest_rank({0.1}, kTrainStragglerRule);
  const std::string text = train_metrics(p).text();
  CHECK_THAT(text, Contains("gpudirect_train_straggler{preset=\"gpt2-124m\",rank=\"0\",host=\"a\"} 0\n"));
  CHECK(text.find("gpudirect_train_straggler_steps") == std::string::npos);
  CHECK(text.find("job_id") == std::string::npos);
}
