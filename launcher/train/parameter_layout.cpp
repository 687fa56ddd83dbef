#include "train/model.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpudirect::train {

ParameterLayout::ParameterLayout(const GptConfig& config) {
  validate(config);
  const int V = config.vocab, T = config.seq_len, C = config.width;
  auto add = [&](std::string name, std::vector<int> shape, int layer, bool decay) {
    std::size_t count = 1;
    for (int d : shape) count *= static_cast<std::size_t>(d);
    tensors_.push_back(TensorSpan{std::move(name), total_, count, std::move(shape), layer, decay});
    total_ += count;
  };
  add("wte", {V, C}, -1, true);
  add("wpe", {T, C}, -1, true);
  for (int l = 0; l < config.layers; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    add(p + "ln1.w", {C}, l, false);
    add(p + "ln1.b", {C}, l, false);
    add(p + "qkv.w", {3 * C, C}, l, true);
    add(p + "qkv.b", {3 * C}, l, false);
    add(p + "proj.w", {C, C}, l, true);
    add(p + "proj.b", {C}, l, false);
    add(p + "ln2.w", {C}, l, false);
    add(p + "ln2.b", {C}, l, false);
    add(p + "fc.w", {4 * C, C}, l, true);
    add(p + "fc.b", {4 * C}, l, false);
    add(p + "fcproj.w", {C, 4 * C}, l, true);
    add(p + "fcproj.b", {C}, l, false);
  }
  add("lnf.w", {C}, -1, false);
  add("lnf.b", {C}, -1, false);
}

const TensorSpan& ParameterLayout::find(const std::string& name) const {
  for (const auto& t : tensors_) {
    if (t.name == name) return t;
  }
  throw std::out_of_range("gpudirect-launch train: no parameter tensor named '" + name + "' (names look like wte, wpe, h.0.qkv.w, lnf.b)");
}

std::pair<std::size_t, std::size_t> ParameterLayout::layer_range(int layer) const {
  std::size_t begin = total_, end = 0;
  for (const auto& t : tensors_) {
    if (t.layer != layer) continue;
    begin = std::min(begin, t.offset);
    end = std::max(end, t.offset + t.count);
  }
  if (layer < 0 || end == 0) {
    throw std::out_of_range("gpudirect-launch train: layer " + std::to_string(layer) + " is out of range");
  }
  return {begin, end - begin};
}

std::pair<std::size_t, std::size_t> ParameterLayout::embedding_range() const {
  const auto& wpe = find("wpe");
  return {0, wpe.offset + wpe.count};
}

std::pair<std::size_t, std::size_t> ParameterLayout::final_norm_range() const {
  const auto& w = find("lnf.w");
  return {w.offset, total_ - w.offset};
}

}  // namespace gpudirect::train
