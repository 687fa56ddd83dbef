// GPT-2 initialisation from a counter-based generator, so any element can be computed on its own
// (parallel, independent of thread count) and other tools can reproduce it if they need to:
//   key(t)  = mix(seed ^ mix(t + 1))                 t = tensor index in ParameterLayout order
//   r(t, i) = mix(key(t) + i)                        i = element index inside the tensor
//   u1 = ((r >> 32) + 0.5) / 2^32,  u2 = ((r & 0xffffffff) + 0.5) / 2^32
//   value = std * sqrt(-2 ln u1) * cos(2 pi u2)      (Box-Muller)
// where mix is SplitMix64's step: z = x + 0x9e3779b97f4a7c15, then the two xor-shift-multiply rounds.
// The PyTorch cross-check loads our weights instead of reproducing this.
#include "train/model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpudirect::train {
namespace {

std::uint64_t mix(std::uint64_t x) {
  std::uint64_t z = x + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void fill_normal(std::span<float> out, std::uint64_t key, double stddev) {
  constexpr double two_pi = 6.283185307179586476925286766559;
  constexpr double inv_2_32 = 1.0 / 4294967296.0;
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(out.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    const std::uint64_t r = mix(key + static_cast<std::uint64_t>(i));
    const double u1 = (static_cast<double>(r >> 32) + 0.5) * inv_2_32;
    const double u2 = (static_cast<double>(r & 0xffffffffULL) + 0.5) * inv_2_32;
    out[static_cast<std::size_t>(i)] = static_cast<float>(stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2));
  }
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void initialize_parameters(const GptConfig& config, std::span<float> parameters, std::uint64_t seed) {
  const ParameterLayout layout(config);
  if (parameters.size() != layout.total()) {
    throw std::invalid_argument("gpudirect-launch train: parameter buffer has " + std::to_string(parameters.size()) +
                                " floats but the model needs " + std::to_string(layout.total()));
  }
  const double residual_std = 0.02 / std::sqrt(2.0 * config.layers);
  for (std::size_t t = 0; t < layout.tensors().size(); ++t) {
    const TensorSpan& span = layout.tensors()[t];
    std::span<float> out = parameters.subspan(span.offset, span.count);
    const bool is_norm = span.name.find(".ln") != std::string::npos || span.name.rfind("lnf", 0) == 0;
    if (is_norm && ends_with(span.name, ".w")) {
      std::fill(out.begin(), out.end(), 1.0f);
    } else if (ends_with(span.name, ".b")) {
      std::fill(out.begin(), out.end(), 0.0f);
    } else {
      const bool residual_projection = ends_with(span.name, ".proj.w") || ends_with(span.name, ".fcproj.w");
      fill_normal(out, mix(seed ^ mix(t + 1)), residual_projection ? residual_std : 0.02);
    }
  }
}

}  // namespace gpudirect::train
