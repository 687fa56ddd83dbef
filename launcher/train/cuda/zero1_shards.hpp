// ZeRO-1 over NCCL, as plain arithmetic: every gradient bucket is padded to a multiple of the world
// size and split into equal chunks; rank r reduce-scatters into chunk r and owns the part of it that
// lies inside the bucket. The CPU path (gradient_sync.cpp) uses the same split, so a checkpoint's
// AdamW state means the same on both.
#pragma once

#include "train/gradient_buckets.hpp"
#include "train/optimizer.hpp"

#include <cstddef>
#include <vector>

namespace gpudirect::train::cuda {

struct Shard {
  std::size_t chunk = 0;  // elements per rank (the padded bucket is chunk * world)
  std::size_t begin = 0;  // this rank's owned elements, relative to the bucket start
  std::size_t end = 0;    // (begin == end: the padding only)
};

Shard shard_of(const Bucket& bucket, int world, int rank);

// This rank's owned segments of the flat buffer, sorted by offset (the order of its AdamW state).
std::vector<Segment> owned_segments(const std::vector<Bucket>& buckets, int world, int rank);

// Where each bucket's owned segment starts inside the rank's AdamW state (the shard buffers).
std::vector<std::size_t> state_offsets(const std::vector<Bucket>& buckets, int world, int rank);

}  // namespace gpudirect::train::cuda
