#include "train/gradient_sync.hpp"

#include <algorithm>
#include <cstring>

namespace gpudirect::train {

using Clock = std::chrono::steady_clock;

namespace {
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }
}  // namespace

GradientSync::GradientSync(comm::Communicator& comm, const ParameterLayout& layout, bool zero1, std::size_t first_bucket_bytes,
                           std::size_t bucket_bytes)
    : comm_(comm),
      zero1_(zero1),
      world_(comm.size()),
      rank_(comm.rank()),
      buckets_(plan_buckets(layout.tensors(), first_bucket_bytes, bucket_bytes)),
      tracker_(buckets_) {
  if (!zero1_) {
    owned_.push_back({0, layout.total()});
    return;
  }
  owned_ = owned_segments(buckets_, world_, rank_);
  state_at_ = state_offsets(buckets_, world_, rank_);
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    const std::size_t padded = bucket_shard(b).chunk * static_cast<std::size_t>(world_);
    auto* buffer = static_cast<float*>(comm_.allocate(padded * sizeof(float)));
    std::fill(buffer, buffer + padded, 0.0f);
    staging_.push_back(buffer);
  }
}

GradientSync::~GradientSync() {
  for (auto& request : pending_) {
    try {
      if (request) request->wait();
    } catch (...) {  // a failed collective has already been reported by finish()
    }
  }
  for (float* buffer : staging_) comm_.release(buffer);
}

Shard GradientSync::bucket_shard(std::size_t bucket) const { return shard_of(buckets_[bucket], world_, rank_); }

void GradientSync::begin(std::span<float> gradients) {
  gradients_ = gradients;
  tracker_.reset();
  pending_.clear();
  launch_seconds_ = 0;
}

void GradientSync::ready(std::size_t offset, std::size_t count) {
  for (const std::size_t bucket : tracker_.mark_ready(offset, count)) launch(bucket);
}

void GradientSync::launch(std::size_t b) {
  if (world_ == 1 && !zero1_) return;  // nothing to average
  float* grads = gradients_.data() + buckets_[b].offset;
  if (!zero1_) {
    const auto start = Clock::now();
    pending_.push_back(comm_.all_reduce(grads, grads, buckets_[b].count, comm::DataType::float32, comm::ReduceOp::avg));
    launch_seconds_ += seconds_since(start);
    return;
  }
  const std::size_t size = bucket_shard(b).chunk;
  std::memcpy(staging_[b], grads, buckets_[b].count * sizeof(float));
  // The padding beyond count stays zero from the constructor and from gather_parameters.
  std::fill(staging_[b] + buckets_[b].count, staging_[b] + size * static_cast<std::size_t>(world_), 0.0f);
  const auto call = Clock::now();
  pending_.push_back(comm_.reduce_scatter(staging_[b], staging_[b] + static_cast<std::size_t>(rank_) * size, size, comm::DataType::float32,
                                          comm::ReduceOp::avg));
  launch_seconds_ += seconds_since(call);
}

double GradientSync::finish() {
  for (std::size_t b = tracker_.launched(); b < buckets_.size(); ++b) {
    tracker_.mark_ready(buckets_[b].offset, buckets_[b].count);
    launch(b);
  }
  const auto start = Clock::now();
  for (auto& request : pending_) request->wait();
  pending_.clear();
  if (zero1_) {
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      const Shard s = bucket_shard(b);
      std::memcpy(gradients_.data() + buckets_[b].offset + s.begin, staging_[b] + s.begin, (s.end - s.begin) * sizeof(float));
    }
  }
  return launch_seconds_ + seconds_since(start);
}

double GradientSync::global_sum_of_squares(std::span<const float> gradients, double& comm_seconds) {
  double sum = 0;
  for (const Segment& s : owned_) sum += sum_of_squares(gradients.subspan(s.offset, s.count));
  if (zero1_) {
    const auto start = Clock::now();
    comm_.all_reduce(&sum, &sum, 1, comm::DataType::float64, comm::ReduceOp::sum)->wait();
    comm_seconds += seconds_since(start);
  }
  return sum;
}

double GradientSync::gather_parameters(std::span<float> parameters) {
  if (!zero1_) return 0;
  const auto start = Clock::now();
  std::vector<std::unique_ptr<comm::Request>> requests;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    const std::size_t size = bucket_shard(b).chunk;
    float* buffer = staging_[b];
    std::fill(buffer, buffer + size * static_cast<std::size_t>(world_), 0.0f);
    std::memcpy(buffer, parameters.data() + buckets_[b].offset, buckets_[b].count * sizeof(float));
    float* mine = buffer + static_cast<std::size_t>(rank_) * size;
    requests.push_back(comm_.all_gather(mine, buffer, size, comm::DataType::float32));
  }
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    requests[b]->wait();
    std::memcpy(parameters.data() + buckets_[b].offset, staging_[b], buckets_[b].count * sizeof(float));
  }
  return seconds_since(start);
}

void GradientSync::gather_state(std::span<const float> shard, std::span<float> full) {
  if (!zero1_) {
    std::copy(shard.begin(), shard.end(), full.begin());
    return;
  }
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    const Shard s = bucket_shard(b);
    float* buffer = staging_[b];
    std::fill(buffer, buffer + s.chunk * static_cast<std::size_t>(world_), 0.0f);
    std::memcpy(buffer + s.begin, shard.data() + state_at_[b], (s.end - s.begin) * sizeof(float));
    comm_.all_gather(buffer + static_cast<std::size_t>(rank_) * s.chunk, buffer, s.chunk, comm::DataType::float32)->wait();
    std::memcpy(full.data() + buckets_[b].offset, buffer, buckets_[b].count * sizeof(float));
  }
}

void GradientSync::scatter_state(std::span<const float> full, std::span<float> shard) const {
  std::size_t at = 0;
  for (const Segment& s : owned_) {
    std::copy_n(full.begin() + static_cast<long>(s.offset), s.count, shard.begin() + static_cast<long>(at));
    at += s.count;
  }
}

}  // namespace gpudirect::train
