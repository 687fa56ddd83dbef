// Gradient buckets as PyTorch DDP forms them: whole tensors in reverse layout order (the order in
// which backward finishes them), a small first bucket so communication starts early, then buckets of
// about `bucket_bytes`. The plan depends only on the layout and the sizes, so every rank builds the
// same buckets in the same order (a different order on one rank would hang the collectives).
#pragma once

#include "train/model.hpp"

#include <cstddef>
#include <vector>

namespace gpudirect::train {

struct Bucket {
  std::size_t offset = 0;  // first element in the flat gradient buffer
  std::size_t count = 0;   // elements (whole tensors, contiguous)
};

inline constexpr std::size_t kFirstBucketBytes = 1u << 20;  // 1 MiB, as DDP
inline constexpr std::size_t kBucketBytes = 25u << 20;      // 25 MiB, as DDP

// Buckets cover every tensor exactly once, in decreasing offset order. A tensor larger than the
// bucket size gets a bucket of its own.
std::vector<Bucket> plan_buckets(const std::vector<TensorSpan>& tensors, std::size_t first_bucket_bytes = kFirstBucketBytes,
                                 std::size_t bucket_bytes = kBucketBytes);

// Counts which buckets are complete as GradientReady ranges arrive (in any order, any split) and
// hands out the complete ones strictly in bucket order.
class BucketTracker {
 public:
  explicit BucketTracker(const std::vector<Bucket>& buckets);
  void reset();
  // Marks [offset, offset+count) final; returns the indices of buckets that are now launchable.
  std::vector<std::size_t> mark_ready(std::size_t offset, std::size_t count);
  std::size_t launched() const { return next_; }

 private:
  const std::vector<Bucket>& buckets_;
  std::vector<std::size_t> ready_;  // elements marked per bucket
  std::size_t next_ = 0;
};

}  // namespace gpudirect::train
