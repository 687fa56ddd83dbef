#include "train/zero1_shards.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpudirect::train {

bool zero1_in_effect(const TrainSettings& settings, int world) { return settings.zero1 && (world > 1 || settings.zero1_at_one_rank); }

Shard shard_of(const Bucket& bucket, int world, int rank) {
  if (world < 1 || rank < 0 || rank >= world)
    throw std::invalid_argument("shard_of: rank " + std::to_string(rank) + " outside a world of " + std::to_string(world));
  const auto w = static_cast<std::size_t>(world);
  Shard s;
  s.chunk = (bucket.count + w - 1) / w;
  s.begin = std::min(bucket.count, static_cast<std::size_t>(rank) * s.chunk);
  s.end = std::min(bucket.count, s.begin + s.chunk);
  return s;
}

std::vector<Segment> owned_segments(const std::vector<Bucket>& buckets, int world, int rank) {
  std::vector<Segment> owned;
  for (const Bucket& b : buckets) {
    const Shard s = shard_of(b, world, rank);
    if (s.end > s.begin) owned.push_back({b.offset + s.begin, s.end - s.begin});
  }
  std::sort(owned.begin(), owned.end(), [](const Segment& a, const Segment& b) { return a.offset < b.offset; });
  return owned;
}

std::vector<std::size_t> state_offsets(const std::vector<Bucket>& buckets, int world, int rank) {
  const std::vector<Segment> owned = owned_segments(buckets, world, rank);
  std::vector<std::size_t> offsets;
  for (const Bucket& b : buckets) {
    const Shard s = shard_of(b, world, rank);
    std::size_t at = 0;
    for (const Segment& seg : owned) {
      if (seg.offset >= b.offset + s.begin) break;
      at += seg.count;
    }
    offsets.push_back(at);
  }
  return offsets;
}

}  // namespace gpudirect::train
