// exp and tanh for the element-wise kernels, written so that `#pragma omp simd` loops vectorise
// them (glibc's expf/tanhf are scalar calls and were 15% of a step). exp_approx is Cephes' expf:
// x = n ln2 + r with |r| <= ln2/2, exp(r) by a degree-6 polynomial, 2^n put into the exponent
// bits; relative error about 2e-7 (2 ulp) on [-87, 88]; inputs are clamped to that range.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace gpudirect::train::cpu {

inline float exp_approx(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  // n = round(x / ln2) with the add-and-subtract 1.5 * 2^23 trick (vectorises on plain SSE2).
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693359375f;  // ln2 split in two parts: r stays exact
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(n) + 127) << 23;
  return p * std::bit_cast<float>(bits);
}

// tanh(u) = 1 - 2 / (exp(2u) + 1): exact limits +-1, absolute error about 2e-7.
inline float tanh_approx(float u) { return 1.0f - 2.0f / (exp_approx(2.0f * u) + 1.0f); }

}  // namespace gpudirect::train::cpu
