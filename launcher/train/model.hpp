// The contract between a GPT implementation (cpu/ fp32 reference, cuda/ later) and everything that
// trains it (optimizer, data parallelism, checkpoints, the train command). Parameters and gradients
// are each ONE contiguous fp32 buffer laid out by ParameterLayout, so gradient buckets, optimizer
// shards and checkpoints are plain views of it.
#pragma once

#include "train/gpt_config.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace gpudirect::train {

// One named tensor inside the contiguous buffer. Layout order (per-layer contiguous, so that the
// gradients of one block are one range and become final together during backward):
//   wte [V,C], wpe [T,C],
//   for each layer l: ln1.w [C], ln1.b [C], qkv.w [3C,C], qkv.b [3C], proj.w [C,C], proj.b [C],
//                     ln2.w [C], ln2.b [C], fc.w [4C,C], fc.b [4C], fcproj.w [C,4C], fcproj.b [C],
//   lnf.w [C], lnf.b [C].
// Matrices are row-major [out, in] as PyTorch's nn.Linear stores them; the output head is tied to wte.
struct TensorSpan {
  std::string name;        // "wte", "wpe", "h.3.qkv.w", "lnf.b" ...
  std::size_t offset = 0;  // in elements from the start of the buffer
  std::size_t count = 0;
  std::vector<int> shape;     // e.g. {3*C, C}
  int layer = -1;             // block index, -1 for embeddings and the final layer norm
  bool weight_decay = false;  // AdamW decays matrices and embeddings, not biases or norms
};

class ParameterLayout {
 public:
  explicit ParameterLayout(const GptConfig& config);
  const std::vector<TensorSpan>& tensors() const { return tensors_; }
  std::size_t total() const { return total_; }
  const TensorSpan& find(const std::string& name) const;  // throws std::out_of_range
  // [offset, offset+count) of block l's tensors; of the embeddings (wte, wpe); of the final norm.
  std::pair<std::size_t, std::size_t> layer_range(int layer) const;
  std::pair<std::size_t, std::size_t> embedding_range() const;
  std::pair<std::size_t, std::size_t> final_norm_range() const;

 private:
  std::vector<TensorSpan> tensors_;
  std::size_t total_ = 0;
};

// GPT-2 initialisation, deterministic from the seed: N(0, 0.02) for matrices and embeddings,
// N(0, 0.02/sqrt(2L)) for the two residual projections (proj.w, fcproj.w), zeros for biases,
// ones for norm weights.
void initialize_parameters(const GptConfig& config, std::span<float> parameters, std::uint64_t seed);

// Called during backward each time a range of the gradient buffer is final for this micro-batch:
// the final norm first, then block L-1 ... block 0, then the embeddings (wte last, since the tied
// head and the token embedding both write it). Same order on every rank.
using GradientReady = std::function<void(std::size_t offset, std::size_t count)>;

class Model {
 public:
  virtual ~Model() = default;
  virtual const GptConfig& config() const = 0;
  virtual const ParameterLayout& layout() const = 0;
  virtual std::span<float> parameters() = 0;  // fp32 master weights
  virtual std::span<float> gradients() = 0;
  virtual void zero_gradients() = 0;
  // Forward and backward of one micro-batch: `inputs` and `targets` are micro_batch x seq_len
  // token ids in [0, vocab). Adds grad_scale * d(mean loss)/d(parameters) into gradients() (so
  // micro-batches accumulate) and returns the mean cross-entropy loss. `on_ready` may be empty.
  virtual float forward_backward(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, float grad_scale,
                                 const GradientReady& on_ready) = 0;
  // Forward only: the mean loss.
  virtual float forward(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets) = 0;
};

}  // namespace gpudirect::train
