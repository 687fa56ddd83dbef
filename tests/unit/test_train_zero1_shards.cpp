// The one ZeRO-1 split (train/zero1_shards.hpp), used by both backends: the ranks' owned parts cover
// every element exactly once, and each rank's AdamW state offsets match its segments.
#include <catch2/catch.hpp>

#include "train/zero1_shards.hpp"

#include <vector>

using namespace gpudirect::train;

TEST_CASE("zero1 shards: equal chunks of the padded bucket, the last rank takes the remainder", "[train][zero1]") {
  const Bucket bucket{100, 10};
  CHECK(shard_of(bucket, 4, 0).chunk == 3);
  CHECK(shard_of(bucket, 4, 0).begin == 0);
  CHECK(shard_of(bucket, 4, 0).end == 3);
  CHECK(shard_of(bucket, 4, 3).begin == 9);
  CHECK(shard_of(bucket, 4, 3).end == 10);
  // More ranks than elements: the tail ranks own only padding.
  const Bucket small{0, 2};
  CHECK(shard_of(small, 4, 1).end - shard_of(small, 4, 1).begin == 1);
  CHECK(shard_of(small, 4, 2).begin == shard_of(small, 4, 2).end);
  CHECK(shard_of(small, 4, 3).begin == shard_of(small, 4, 3).end);
  CHECK_THROWS(shard_of(bucket, 4, 4));
  CHECK_THROWS(shard_of(bucket, 0, 0));
}

TEST_CASE("zero1 shards: every element is owned by exactly one rank, state offsets follow the segments", "[train][zero1]") {
  GptConfig config = preset_config("tiny");
  const ParameterLayout layout(config);
  const auto buckets = plan_buckets(layout.tensors(), 16 * 1024, 64 * 1024);
  for (int world = 1; world <= 5; ++world) {
    std::vector<int> owners(layout.total(), 0);
    for (int rank = 0; rank < world; ++rank) {
      const std::vector<Segment> owned = owned_segments(buckets, world, rank);
      for (std::size_t i = 1; i < owned.size(); ++i) REQUIRE(owned[i - 1].offset + owned[i - 1].count <= owned[i].offset);
      for (const Segment& s : owned)
        for (std::size_t e = s.offset; e < s.offset + s.count; ++e) ++owners[e];
      const std::vector<std::size_t> at = state_offsets(buckets, world, rank);
      REQUIRE(at.size() == buckets.size());
      for (std::size_t b = 0; b < buckets.size(); ++b) {
        const Shard s = shard_of(buckets[b], world, rank);
        if (s.end == s.begin) continue;
        // The segment that starts this bucket's owned part sits at at[b] in the state.
        std::size_t state = 0;
        bool found = false;
        for (const Segment& seg : owned) {
          if (seg.offset == buckets[b].offset + s.begin) {
            found = true;
            break;
          }
          state += seg.count;
        }
        REQUIRE(found);
        CHECK(at[b] == state);
      }
    }
    for (std::size_t e = 0; e < owners.size(); ++e) REQUIRE(owners[e] == 1);
  }
}
