#include <catch2/catch.hpp>

#include "reporting/straggler.hpp"

#include <cmath>

using namespace gpudirect::launcher::metrics;

namespace {
constexpr StragglerRule kRule{1.5, 0.010, 3};  // 1.5 x the median and 10 ms above it, from 3 ranks
}

TEST_CASE("median: the middle value, the mean of the middle two for an even count", "[straggler]") {
  CHECK(median({}) == 0);
  CHECK(median({4}) == 4);
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 3, 2}) == 2.5);
}

TEST_CASE("the slowest rank is named a straggler only past both the ratio and the gap", "[straggler]") {
  const auto far = slowest_rank({0.10, 0.11, 0.30, 0.10}, kRule);
  REQUIRE(far);
  CHECK(far->rank == 2);
  CHECK(far->seconds == 0.30);
  CHECK(far->median_seconds == Approx(0.105));
  CHECK(far->straggler);

  // 1.4 x the median: under the ratio.
  CHECK_FALSE(slowest_rank({0.10, 0.10, 0.14}, kRule)->straggler);
  // 3 x the median but only 4 ms above it: under the gap (noise on a tiny row).
  const auto tiny = slowest_rank({0.002, 0.002, 0.006}, kRule);
  CHECK(tiny->rank == 2);
  CHECK_FALSE(tiny->straggler);
  // Just over both.
  CHECK(slowest_rank({0.100, 0.100, 0.151}, kRule)->straggler);
}

TEST_CASE("too few ranks, zero or non-finite times name no straggler", "[straggler]") {
  CHECK_FALSE(slowest_rank({}, kRule));
  CHECK_FALSE(slowest_rank({0.1, 0.9}, kRule)->straggler);                  // 2 ranks, rule wants 3
  CHECK(slowest_rank({0.1, 0.9}, StragglerRule{1.5, 0.01, 2})->straggler);  // a 2-rank rule: 0.9 > 1.5 x 0.5
  CHECK_FALSE(slowest_rank({0, 0, 0.5}, kRule)->straggler);                 // median 0
  CHECK_FALSE(slowest_rank({0.1, 0.1, NAN, 0.9}, kRule)->straggler);
  CHECK_FALSE(slowest_rank({0.1, 0.1, INFINITY}, kRule)->straggler);
  CHECK(slowest_rank({0.2, 0.2, 0.2}, kRule)->rank == 0);  // equals: the lowest rank
  CHECK_FALSE(slowest_rank({0.2, 0.2, 0.2}, kRule)->straggler);
}

TEST_CASE("bench and train rules: bench 1.5x and 50 us from 3 ranks, train 1.2x and 2 ms from 2 ranks", "[straggler]") {
  CHECK(slowest_rank({100e-6, 100e-6, 160e-6}, kBenchStragglerRule)->straggler);
  CHECK_FALSE(slowest_rank({100e-6, 100e-6, 140e-6}, kBenchStragglerRule)->straggler);
  CHECK_FALSE(slowest_rank({10e-6, 10e-6, 40e-6}, kBenchStragglerRule)->straggler);  // 4x but 30 us
  CHECK(slowest_rank({0.100, 0.200}, kTrainStragglerRule)->straggler);               // 0.2 > 1.2 x 0.15
  CHECK_FALSE(slowest_rank({0.100, 0.110}, kTrainStragglerRule)->straggler);
  CHECK_FALSE(slowest_rank({0.001, 0.003}, kTrainStragglerRule)->straggler);  // 1.5x but 1 ms above the median
}

TEST_CASE("the rule in words", "[straggler]") {
  CHECK(describe(kBenchStragglerRule) == "over 1.5 x the median and 50 us above it");
  CHECK(describe(kTrainStragglerRule) == "over 1.2 x the median and 2 ms above it");
}
