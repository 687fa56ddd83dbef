#include "train/gradient_buckets.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpudirect::train {

std::vector<Bucket> plan_buckets(const std::vector<TensorSpan>& tensors, std::size_t first_bucket_bytes, std::size_t bucket_bytes) {
  std::vector<const TensorSpan*> order;
  for (const TensorSpan& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const TensorSpan* a, const TensorSpan* b) { return a->offset > b->offset; });
  std::vector<Bucket> buckets;
  std::size_t limit = first_bucket_bytes / sizeof(float);
  for (const TensorSpan* tensor : order) {
    if (tensor->count == 0) continue;
    if (!buckets.empty()) {
      Bucket& open = buckets.back();
      if (tensor->offset + tensor->count != open.offset)
        throw std::invalid_argument("plan_buckets: tensor " + tensor->name + " is not contiguous with the next one");
      if (open.count + tensor->count <= limit || open.count == 0) {
        open.offset = tensor->offset;
        open.count += tensor->count;
        continue;
      }
      limit = bucket_bytes / sizeof(float);
    }
    buckets.push_back({tensor->offset, tensor->count});
  }
  return buckets;
}

BucketTracker::BucketTracker(const std::vector<Bucket>& buckets) : buckets_(buckets), ready_(buckets.size(), 0) {}

void BucketTracker::reset() {
  std::fill(ready_.begin(), ready_.end(), 0);
  next_ = 0;
}

std::vector<std::size_t> BucketTracker::mark_ready(std::size_t offset, std::size_t count) {
  const std::size_t end = offset + count;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    const std::size_t begin = std::max(offset, buckets_[i].offset);
    const std::size_t stop = std::min(end, buckets_[i].offset + buckets_[i].count);
    if (begin < stop) ready_[i] += stop - begin;
    if (ready_[i] > buckets_[i].count)
      throw std::logic_error("gradient bucket " + std::to_string(i) +
                             " marked ready twice: the model reported a range twice in one backward");
  }
  std::vector<std::size_t> launch;
  while (next_ < buckets_.size() && ready_[next_] == buckets_[next_].count) launch.push_back(next_++);
  return launch;
}

}  // namespace gpudirect::train
