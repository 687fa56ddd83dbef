// `train --multi-tensor-adamw` (speed_options.hpp): one AdamW launch over every piece this rank owns
// of the contiguous parameter buffer, in place of one launch per tensor (optimizer.cu's adamw_step,
// the reference). The pieces become a table on the device, each with the flat index of its first
// element; thread i of a grid-stride loop over the flat index finds its piece by binary search once
// and then walks forward. The walk and the per-element update are written once, here, for the kernel
// and for the host test that emulates the launch (tests/unit/test_train_cuda_multi_tensor_adamw.cpp).
#pragma once

#include "train/cuda/host_device.hpp"
#include "train/optimizer.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

namespace gpudirect::train::cuda {

struct MultiTensorPiece {
  std::uint64_t begin = 0;   // flat index of the piece's first element (pieces one after another)
  std::uint64_t offset = 0;  // in the parameter and gradient buffers
  std::uint64_t state = 0;   // in the moment buffers
  float decay = 0;           // the weight decay of this tensor (0 for biases and norms)
};

struct MultiTensorTable {
  std::vector<MultiTensorPiece> pieces;  // non-empty pieces only, begin ascending
  std::uint64_t total = 0;               // elements in all pieces
};

// The table for `pieces` (adamw_pieces of the owned segments), empty pieces left out.
MultiTensorTable multi_tensor_table(const std::vector<AdamWPiece>& pieces, float weight_decay);

// The last piece whose begin is <= i (count >= 1, table[0].begin == 0).
GPUDIRECT_HOST_DEVICE inline int piece_of(const MultiTensorPiece* table, int count, std::uint64_t i) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (table[mid].begin <= i)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// One thread's share of the launch: flat indices first, first + step, ... below total, each handed to
// f(piece, index within the piece) exactly once.
template <typename F>
GPUDIRECT_HOST_DEVICE void for_each_owned_element(const MultiTensorPiece* table, int count, std::uint64_t total, std::uint64_t first,
                                                  std::uint64_t step, const F& f) {
  if (first >= total) return;
  int k = piece_of(table, count, first);
  for (std::uint64_t i = first; i < total; i += step) {
    while (k + 1 < count && table[k + 1].begin <= i) ++k;
    f(table[k], i - table[k].begin);
  }
}

// The update of ../optimizer.cpp for one element, in fp32 (the same expressions as AdamW::step).
struct AdamWElement {
  float* p;
  const float* g;
  float* m;
  float* v;
  float lr, beta1, beta2, eps, grad_scale, correction1, correction2;
  GPUDIRECT_HOST_DEVICE void operator()(const MultiTensorPiece& piece, std::uint64_t j) const {
    const std::uint64_t at = piece.offset + j, s = piece.state + j;
    const float grad = g[at] * grad_scale;
    const float mi = beta1 * m[s] + (1.0f - beta1) * grad;
    const float vi = beta2 * v[s] + (1.0f - beta2) * grad * grad;
    m[s] = mi;
    v[s] = vi;
    const float m_hat = mi / correction1;
    const float v_hat = vi / correction2;
    p[at] -= lr * (m_hat / (sqrtf(v_hat) + eps) + piece.decay * p[at]);
  }
};

}  // namespace gpudirect::train::cuda
