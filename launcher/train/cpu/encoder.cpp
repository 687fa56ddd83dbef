#include "train/cpu/encoder.hpp"

#include "train/cpu/parallel.hpp"

#include <cstddef>

namespace gpudirect::train::cpu {

void encoder_forward(float* out, const std::int32_t* tokens, const float* wte, const float* wpe, int B, int T, int C, int threads) {
  const std::size_t c_ = static_cast<std::size_t>(C);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int bt = 0; bt < B * T; ++bt) {
    const float* te = wte + static_cast<std::size_t>(tokens[bt]) * c_;
    const float* pe = wpe + static_cast<std::size_t>(bt % T) * c_;
    float* o = out + static_cast<std::size_t>(bt) * c_;
    for (std::size_t i = 0; i < c_; ++i) o[i] = te[i] + pe[i];
  }
}

void encoder_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* tokens, int B, int T, int C, int threads) {
  const std::size_t c_ = static_cast<std::size_t>(C);
  const int blocks = column_blocks(C);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int blk = 0; blk < blocks; ++blk) {
    const auto [c0, c1] = column_block(blk, C);
    for (int bt = 0; bt < B * T; ++bt) {
      const float* d = dout + static_cast<std::size_t>(bt) * c_;
      float* te = dwte + static_cast<std::size_t>(tokens[bt]) * c_;
      float* pe = dwpe + static_cast<std::size_t>(bt % T) * c_;
      for (std::size_t i = c0; i < c1; ++i) {
        te[i] += d[i];
        pe[i] += d[i];
      }
    }
  }
}

}  // namespace gpudirect::train::cpu
