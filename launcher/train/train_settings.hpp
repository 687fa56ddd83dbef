// What a training run is told: the learning-rate schedule, AdamW, clipping, ZeRO-1 and the bucket
// sizes. The Trainer and both backends read the same struct, so they cannot disagree.
#pragma once

#include "train/gradient_buckets.hpp"
#include "train/optimizer.hpp"

#include <cstddef>

namespace gpudirect::train {

struct TrainSettings {
  LrSchedule schedule;
  AdamWSettings adamw;
  float grad_clip = 1.0f;  // global-norm clipping; <= 0 turns it off
  bool zero1 = false;
  // Tests: ZeRO-1's shard, reduce-scatter and gather paths even at one rank (where they only copy),
  // so a one-GPU machine runs them (GPUDIRECT_TRAIN_ZERO1_AT_ONE_RANK=1).
  bool zero1_at_one_rank = false;
  std::size_t first_bucket_bytes = kFirstBucketBytes;
  std::size_t bucket_bytes = kBucketBytes;
};

}  // namespace gpudirect::train
