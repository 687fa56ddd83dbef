#include "train/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace gpudirect::train {

float LrSchedule::at(int step) const {
  if (warmup > 0 && step < warmup) return lr * static_cast<float>(step + 1) / static_cast<float>(warmup);
  if (step >= total) return min_lr;
  const int decay_steps = total - warmup;
  if (decay_steps <= 0) return lr;
  const double progress = static_cast<double>(step - warmup) / static_cast<double>(decay_steps);
  const double coefficient = 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
  return static_cast<float>(min_lr + coefficient * (lr - min_lr));
}

float clip_scale(double global_norm, float max_norm) {
  if (max_norm <= 0 || !(global_norm > max_norm)) return 1.0f;
  return static_cast<float>(max_norm / (global_norm + 1e-6));
}

double sum_of_squares(std::span<const float> values) {
  double sum = 0;
  for (const float v : values) sum += static_cast<double>(v) * v;
  return sum;
}

std::vector<AdamWPiece> adamw_pieces(const ParameterLayout& layout, const std::vector<Segment>& segments) {
  std::vector<AdamWPiece> pieces;
  std::size_t state = 0;
  for (const Segment& segment : segments) {
    if (segment.offset + segment.count > layout.total())
      throw std::out_of_range("AdamW: segment [" + std::to_string(segment.offset) + ", +" + std::to_string(segment.count) +
                              ") is outside the parameter buffer of " + std::to_string(layout.total()));
    for (const TensorSpan& tensor : layout.tensors()) {
      const std::size_t begin = std::max(segment.offset, tensor.offset);
      const std::size_t end = std::min(segment.offset + segment.count, tensor.offset + tensor.count);
      if (begin >= end) continue;
      pieces.push_back({begin, state + (begin - segment.offset), end - begin, tensor.weight_decay});
    }
    state += segment.count;
  }
  return pieces;
}

AdamW::AdamW(const ParameterLayout& layout, std::vector<Segment> segments, AdamWSettings settings)
    : segments_(std::move(segments)), pieces_(adamw_pieces(layout, segments_)), settings_(settings) {
  std::size_t state = 0;
  for (const Segment& segment : segments_) state += segment.count;
  m_.assign(state, 0.0f);
  v_.assign(state, 0.0f);
}

void AdamW::step(std::span<float> parameters, std::span<const float> gradients, float lr, float grad_scale, long t) {
  const float beta1 = settings_.beta1, beta2 = settings_.beta2, eps = settings_.epsilon;
  const float correction1 = 1.0f - std::pow(beta1, static_cast<float>(t));
  const float correction2 = 1.0f - std::pow(beta2, static_cast<float>(t));
  for (const AdamWPiece& piece : pieces_) {
    float* p = parameters.data() + piece.offset;
    const float* g = gradients.data() + piece.offset;
    float* m = m_.data() + piece.state;
    float* v = v_.data() + piece.state;
    const float decay = piece.decay ? settings_.weight_decay : 0.0f;
    for (std::size_t i = 0; i < piece.count; ++i) {
      const float grad = g[i] * grad_scale;
      m[i] = beta1 * m[i] + (1.0f - beta1) * grad;
      v[i] = beta2 * v[i] + (1.0f - beta2) * grad * grad;
      const float m_hat = m[i] / correction1;
      const float v_hat = v[i] / correction2;
      p[i] -= lr * (m_hat / (std::sqrt(v_hat) + eps) + decay * p[i]);
    }
  }
}

}  // namespace gpudirect::train
