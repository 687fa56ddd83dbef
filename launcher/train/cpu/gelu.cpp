#include "train/cpu/gelu.hpp"

#include "train/cpu/fast_math.hpp"

namespace gpudirect::train::cpu {
namespace {
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;
}  // namespace

void gelu_forward(float* out, const float* inp, std::size_t n, int threads) {
  const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (std::ptrdiff_t i = 0; i < count; ++i) {
    const float x = inp[i];
    out[i] = 0.5f * x * (1.0f + tanh_approx(kSqrt2OverPi * (x + kCubic * x * x * x)));
  }
}

void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n, int threads) {
  const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (std::ptrdiff_t i = 0; i < count; ++i) {
    const float x = inp[i];
    const float th = tanh_approx(kSqrt2OverPi * (x + kCubic * x * x * x));
    const float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
    dinp[i] += dout[i] * (0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du);
  }
}

}  // namespace gpudirect::train::cpu
