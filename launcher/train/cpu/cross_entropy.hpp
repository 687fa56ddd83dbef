// Softmax cross-entropy over the vocabulary, one row per token.
#pragma once

#include <cstdint>

namespace gpudirect::train::cpu {

// losses [N] = -log softmax(logits)[target]; probs [N, V] = softmax(logits) (may be the logits
// buffer itself: computed in place).
void softmax_cross_entropy_forward(float* losses, float* probs, const float* logits, const std::int32_t* targets, int N, int V,
                                   int threads);
// dlogits = dloss * (probs - onehot(target)) for every row: the gradient of dloss * sum(losses).
// Overwrites dlogits, which may be the probs buffer itself.
void softmax_cross_entropy_backward(float* dlogits, const float* probs, const std::int32_t* targets, float dloss, int N, int V,
                                    int threads);

}  // namespace gpudirect::train::cpu
