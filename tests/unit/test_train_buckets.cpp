// Gradient buckets: reverse layout order, whole tensors, a small first bucket, every element once,
// and launches strictly in bucket order whatever order the ready ranges arrive in.
#include "train/gradient_buckets.hpp"

#include <catch2/catch.hpp>

using namespace gpudirect::train;

TEST_CASE("buckets cover every tensor once, last tensors first, first bucket small", "[train][buckets]") {
  GptConfig config = preset_config("tiny");
  config.layers = 4;
  const ParameterLayout layout(config);
  const std::size_t first = 64 * 1024, rest = 256 * 1024;  // bytes
  const auto buckets = plan_buckets(layout.tensors(), first, rest);
  REQUIRE(buckets.size() > 2);
  CHECK(buckets.front().offset + buckets.front().count == layout.total());
  CHECK(buckets.back().offset == 0);
  std::size_t covered = 0;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    covered += buckets[i].count;
    if (i > 0) CHECK(buckets[i].offset + buckets[i].count == buckets[i - 1].offset);
    // Bucket edges are tensor edges.
    bool starts_at_tensor = false;
    for (const TensorSpan& t : layout.tensors()) starts_at_tensor = starts_at_tensor || t.offset == buckets[i].offset;
    CHECK(starts_at_tensor);
  }
  CHECK(covered == layout.total());
  CHECK(buckets.front().count * sizeof(float) <= first);
  // A bucket over the limit holds a single tensor bigger than the limit.
  for (const Bucket& b : buckets) {
    if (b.count * sizeof(float) > rest) {
      bool single = false;
      for (const TensorSpan& t : layout.tensors()) single = single || (t.offset == b.offset && t.count == b.count);
      CHECK(single);
    }
  }
  // Deterministic: the same plan every time (every rank computes it alone).
  const auto again = plan_buckets(layout.tensors(), first, rest);
  REQUIRE(again.size() == buckets.size());
  for (std::size_t i = 0; i < buckets.size(); ++i) CHECK(again[i].offset == buckets[i].offset);
}

TEST_CASE("the default 25 MiB buckets put the tiny model in one or two buckets", "[train][buckets]") {
  const ParameterLayout layout(preset_config("tiny"));
  const auto buckets = plan_buckets(layout.tensors());
  CHECK(buckets.size() <= 2);
}

TEST_CASE("buckets launch in order once complete, whatever the ready order", "[train][buckets]") {
  const std::vector<Bucket> buckets{{60, 40}, {20, 40}, {0, 20}};
  BucketTracker tracker(buckets);
  CHECK(tracker.mark_ready(30, 30).empty());  // part of bucket 1 first: bucket 0 not done
  CHECK(tracker.mark_ready(80, 20).empty());
  CHECK(tracker.mark_ready(60, 20) == std::vector<std::size_t>{0});
  CHECK(tracker.mark_ready(0, 20).empty());  // bucket 2 done, but bucket 1 is not launched yet
  CHECK(tracker.mark_ready(20, 10) == std::vector<std::size_t>{1, 2});
  CHECK(tracker.launched() == 3);
  CHECK_THROWS_AS(tracker.mark_ready(0, 5), std::logic_error);
  tracker.reset();
  CHECK(tracker.mark_ready(0, 100) == std::vector<std::size_t>{0, 1, 2});
}
