#include <catch2/catch.hpp>

#include "train/rank_step_report.hpp"

#include <vector>

using namespace gpudirect::train;

TEST_CASE("rank step reports: mean loss, every rank's times, stop when any rank asks", "[train]") {
  StepResult mine;
  mine.seconds = 1.5;
  mine.exposed_comm_seconds = 0.25;
  const RankReport a = rank_report(2.0, mine, false);
  CHECK(a == RankReport{2.0, 1.5, 0.25, 0.0});
  std::vector<double> all(a.begin(), a.end());
  for (const double v : {4.0, 3.0, 0.5, 1.0}) all.push_back(v);  // rank 1 asks to stop
  StepResult result;
  result.loss = 99;  // stale values are replaced, not added to
  result.rank_seconds = {7};
  merge_rank_reports(all, result);
  CHECK(result.loss == 3.0);
  CHECK(result.rank_seconds == std::vector<double>{1.5, 3.0});
  CHECK(result.rank_exposed_seconds == std::vector<double>{0.25, 0.5});
  CHECK(result.stop);
  all[7] = 0;
  merge_rank_reports(all, result);
  CHECK_FALSE(result.stop);
  CHECK_THROWS_WITH(merge_rank_reports(std::vector<double>(5), result), Catch::Contains("not a multiple of 4"));
}
