// The one ZeRO-1 split, used by both backends: every gradient bucket is padded to a multiple of the
// world size and cut into equal chunks; rank r reduce-scatters into chunk r and owns the part of it
// inside the bucket. One rule, so a checkpoint's AdamW state means the same on CPU and GPU.
#pragma once

#include "train/gradient_buckets.hpp"
#include "train/train_settings.hpp"
#include "train/optimizer.hpp"

#include <cstddef>
#include <vector>

namespace gpudirect::train {

// Whether the AdamW state is sharded: asked for, and more than one rank to shard over (or forced).
bool zero1_in_effect(const TrainSettings& settings, int world);

struct Shard {
  std::size_t chunk = 0;  // elements per rank (the padded bucket is chunk * world)
  std::size_t begin = 0;  // this rank's owned elements, relative to the bucket start
  std::size_t end = 0;    // (begin == end: the padding only)
};

// Throws std::invalid_argument for a rank outside [0, world).
Shard shard_of(const Bucket& bucket, int world, int rank);

// This rank's owned segments of the flat buffer, sorted by offset (the order of its AdamW state).
std::vector<Segment> owned_segments(const std::vector<Bucket>& buckets, int world, int rank);

// Where each bucket's owned segment starts inside the rank's AdamW state (the shard buffers).
std::vector<std::size_t> state_offsets(const std::vector<Bucket>& buckets, int world, int rank);

}  // namespace gpudirect::train
