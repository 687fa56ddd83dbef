// `train --fused-classifier` (speed_options.hpp): the head's GEMM writes the logits in bf16 into the
// dlogits buffer (no fp32 logits), and one kernel per row (cross_entropy.cu) reads them once for the
// softmax statistics (each thread an online max and sum over columns tid, tid + blockDim, ..., then
// the block's maximum and the threads' sums rescaled to it), writes the loss, and overwrites each
// logit with its gradient in place (llm.c's fused_classifier). The per-thread steps are written once,
// here, for the kernel and for the host test that emulates it
// (tests/unit/test_train_cuda_fused_classifier.cpp).
#pragma once

#include "train/cuda/host_device.hpp"

#include <cmath>

namespace gpudirect::train::cuda {

// A thread's running softmax statistics: the largest logit seen and the sum of exp(x - max).
struct SoftmaxStats {
  float max = -INFINITY;
  float sum = 0.0f;
};

// One more logit: the sum is rescaled to the new maximum (nothing to rescale while it is empty).
GPUDIRECT_HOST_DEVICE inline SoftmaxStats softmax_add(SoftmaxStats s, float x) {
  const float m = fmaxf(s.max, x);
  return {m, (s.sum == 0.0f ? 0.0f : s.sum * expf(s.max - m)) + expf(x - m)};
}

// A thread's sum rescaled to the block's maximum, before the block adds them up.
GPUDIRECT_HOST_DEVICE inline float softmax_rescaled_sum(SoftmaxStats s, float block_max) {
  return s.sum == 0.0f ? 0.0f : s.sum * expf(s.max - block_max);
}

// The loss of a row in log-sum-exp form, as the reference kernel writes it.
GPUDIRECT_HOST_DEVICE inline float classifier_loss(float max, float sum, float target_logit) { return logf(sum) + max - target_logit; }

// The gradient of one logit, before rounding to bf16, as the reference kernel computes it.
GPUDIRECT_HOST_DEVICE inline float classifier_dlogit(float x, float max, float inv_sum, float dloss, bool is_target) {
  const float p = expf(x - max) * inv_sum;
  return dloss * (p - (is_target ? 1.0f : 0.0f));
}

}  // namespace gpudirect::train::cuda
