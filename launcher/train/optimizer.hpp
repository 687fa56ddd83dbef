// AdamW with decoupled weight decay, global-norm gradient clipping and the warmup + cosine learning
// rate schedule. The optimizer works on segments of the flat parameter buffer (offset, count), so
// one rank may own all of it or, under ZeRO-1, only its shard of every gradient bucket.
#pragma once

#include "train/model.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gpudirect::train {

struct AdamWSettings {
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float epsilon = 1e-8f;
  float weight_decay = 0.1f;  // decoupled: p -= lr * wd * p, only on tensors with weight_decay=true
};

// Linear warmup from lr/warmup to lr over `warmup` steps, then cosine decay to min_lr at `total`
// steps (steps are 0-based; step >= total stays at min_lr).
struct LrSchedule {
  float lr = 6e-4f;
  float min_lr = 6e-5f;
  int warmup = 0;
  int total = 1;
  float at(int step) const;
};

// Scale so that the global L2 norm is at most max_norm: min(1, max_norm / (norm + 1e-6)); 1 when
// max_norm <= 0 (clipping off).
float clip_scale(double global_norm, float max_norm);

// Sum of squares of a range, in double so the norm does not depend on the order of ranks' partial sums
// more than rounding of doubles.
double sum_of_squares(std::span<const float> values);

// One contiguous range [offset, offset+count) of the parameter buffer that this optimizer updates.
struct Segment {
  std::size_t offset = 0;
  std::size_t count = 0;
};

// A part of a segment inside one tensor: the unit AdamW updates (the decay flag is per tensor).
struct AdamWPiece {
  std::size_t offset = 0;  // in the parameter buffer
  std::size_t state = 0;   // in the moment buffers (segments stored one after another)
  std::size_t count = 0;
  bool decay = false;
};

// Splits `segments` at tensor boundaries. Throws std::out_of_range for a segment outside the buffer.
std::vector<AdamWPiece> adamw_pieces(const ParameterLayout& layout, const std::vector<Segment>& segments);

class AdamW {
 public:
  // `segments` must not overlap; the moment buffers are stored segment after segment.
  AdamW(const ParameterLayout& layout, std::vector<Segment> segments, AdamWSettings settings);

  // One update of every owned element: g is scaled by grad_scale (clipping) first; t is the 1-based
  // step count used for bias correction. parameters/gradients are the whole flat buffers.
  void step(std::span<float> parameters, std::span<const float> gradients, float lr, float grad_scale, long t);

  const std::vector<Segment>& segments() const { return segments_; }
  std::size_t state_size() const { return m_.size(); }
  std::span<float> first_moment() { return m_; }
  std::span<float> second_moment() { return v_; }
  const AdamWSettings& settings() const { return settings_; }

 private:
  std::vector<Segment> segments_;
  std::vector<AdamWPiece> pieces_;
  std::vector<float> m_, v_;
  AdamWSettings settings_;
};

}  // namespace gpudirect::train
