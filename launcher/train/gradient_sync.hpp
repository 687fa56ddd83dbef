// Data parallelism over a Communicator: the gradient buckets are averaged across ranks as soon as
// backward has finished them (all-reduce, or reduce-scatter under ZeRO-1), so communication overlaps
// the backward of earlier layers; what is left to wait for after backward is the exposed time.
// Under ZeRO-1 each rank owns 1/world of every bucket: it updates only those elements (its AdamW
// state is that size) and the updated parameters are all-gathered afterwards.
#pragma once

#include "comm/communicator.hpp"
#include "train/gradient_buckets.hpp"
#include "train/model.hpp"
#include "train/optimizer.hpp"
#include "train/zero1_shards.hpp"

#include <chrono>
#include <memory>
#include <span>
#include <vector>

namespace gpudirect::train {

class GradientSync {
 public:
  // zero1: shard (zero1_in_effect() decides; at one rank only when forced).
  GradientSync(comm::Communicator& comm, const ParameterLayout& layout, bool zero1, std::size_t first_bucket_bytes = kFirstBucketBytes,
               std::size_t bucket_bytes = kBucketBytes);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // Call before the last micro-batch's backward; the model's GradientReady for that micro-batch
  // calls ready(), which launches each bucket as soon as all of it is final.
  void begin(std::span<float> gradients);
  void ready(std::size_t offset, std::size_t count);
  // Launches any bucket the model did not report, waits for all of them and leaves the averaged
  // gradients in the owned segments (all of the buffer without ZeRO-1). Returns the seconds this
  // rank was blocked on communication in this step: waiting here, and inside launches during backward
  // (a small collective runs in the calling thread, so a stalled peer stalls backward there too).
  double finish();

  // The elements this rank's optimizer updates.
  const std::vector<Segment>& owned() const { return owned_; }
  // The global sum of squares of the averaged gradients (one small all-reduce under ZeRO-1).
  double global_sum_of_squares(std::span<const float> gradients, double& comm_seconds);
  // Under ZeRO-1: every rank's updated elements to every rank. Returns seconds spent. No-op otherwise.
  double gather_parameters(std::span<float> parameters);
  // Under ZeRO-1: the full AdamW moments assembled from every rank's shard (for a checkpoint), and back.
  void gather_state(std::span<const float> shard, std::span<float> full);
  void scatter_state(std::span<const float> full, std::span<float> shard) const;

  const std::vector<Bucket>& buckets() const { return buckets_; }
  bool zero1() const { return zero1_; }

 private:
  void launch(std::size_t bucket);
  Shard bucket_shard(std::size_t bucket) const;  // this rank's part of the bucket (zero1_shards.hpp)

  comm::Communicator& comm_;
  bool zero1_;
  int world_, rank_;
  std::vector<Bucket> buckets_;
  BucketTracker tracker_;
  std::vector<std::unique_ptr<comm::Request>> pending_;
  double launch_seconds_ = 0;  // blocked inside launch() since begin()
  std::vector<Segment> owned_;
  std::vector<std::size_t> state_at_;  // ZeRO-1: where each bucket's owned part sits in the AdamW state
  std::vector<float*> staging_;        // ZeRO-1: one padded buffer per bucket (chunk * world floats)
  std::span<float> gradients_;
};

}  // namespace gpudirect::train
