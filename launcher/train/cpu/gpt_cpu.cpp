// The GPT forward and backward on the CPU, composed from the per-layer kernels in this folder.
// Every activation that backward needs is kept, in buffers allocated once for micro_batch x seq_len
// tokens; a handful of gradient buffers are reused by every layer in backward.
#include "train/cpu/attention.hpp"
#include "train/cpu/cpu_model.hpp"
#include "train/cpu/cross_entropy.hpp"
#include "train/cpu/encoder.hpp"
#include "train/cpu/gelu.hpp"
#include "train/cpu/layernorm.hpp"
#include "train/cpu/matmul.hpp"
#include "train/cpu/residual.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gpudirect::train {
namespace {

using namespace cpu;

// Pointers to one block's tensors inside the parameter (or gradient) buffer.
struct Block {
  float *ln1w, *ln1b, *qkvw, *qkvb, *projw, *projb, *ln2w, *ln2b, *fcw, *fcb, *fcprojw, *fcprojb;
};

Block block_at(float* base, const ParameterLayout& layout, int l) {
  const std::string p = "h." + std::to_string(l) + ".";
  auto at = [&](const char* name) { return base + layout.find(p + name).offset; };
  return Block{at("ln1.w"), at("ln1.b"), at("qkv.w"), at("qkv.b"), at("proj.w"),   at("proj.b"),
               at("ln2.w"), at("ln2.b"), at("fc.w"),  at("fc.b"),  at("fcproj.w"), at("fcproj.b")};
}

// One buffer per kind of activation holding all layers, plus the layer's slice.
struct Stacked {
  std::vector<float> data;
  std::size_t per_layer = 0;
  void allocate(int layers, std::size_t n) {
    per_layer = n;
    data.assign(static_cast<std::size_t>(layers) * n, 0.0f);
  }
  float* at(int l) { return data.data() + static_cast<std::size_t>(l) * per_layer; }
};

void zero(std::span<float> v) { std::fill(v.begin(), v.end(), 0.0f); }

class CpuGpt final : public Model {
 public:
  CpuGpt(const GptConfig& config, int threads, GradientMemory gradient_memory)
      : config_((validate(config), config)),
        layout_(config),
        threads_(threads > 0 ? threads : default_cpu_threads()),
        gradient_memory_(std::move(gradient_memory)) {
    openblas_set_num_threads(threads_);
    params_.assign(layout_.total(), 0.0f);
    if (gradient_memory_.allocate) {
      grads_ = {static_cast<float*>(gradient_memory_.allocate(layout_.total() * sizeof(float))), layout_.total()};
    } else {
      own_grads_.assign(layout_.total(), 0.0f);
      grads_ = own_grads_;
    }
    zero(grads_);
    initialize_parameters(config_, params_, config_.seed);

    const int L = config_.layers;
    const std::size_t BT = static_cast<std::size_t>(config_.micro_batch) * config_.seq_len;
    const std::size_t C = static_cast<std::size_t>(config_.width);
    const std::size_t att =
        static_cast<std::size_t>(config_.micro_batch) * config_.heads * config_.seq_len * static_cast<std::size_t>(config_.seq_len);
    encoded_.assign(BT * C, 0.0f);
    ln1_.allocate(L, BT * C);
    ln1_mean_.allocate(L, BT);
    ln1_rstd_.allocate(L, BT);
    qkv_.allocate(L, BT * 3 * C);
    att_.allocate(L, att);
    atty_.allocate(L, BT * C);
    attproj_.allocate(L, BT * C);
    res2_.allocate(L, BT * C);
    ln2_.allocate(L, BT * C);
    ln2_mean_.allocate(L, BT);
    ln2_rstd_.allocate(L, BT);
    fch_.allocate(L, BT * 4 * C);
    fch_gelu_.allocate(L, BT * 4 * C);
    fcproj_.allocate(L, BT * C);
    res3_.allocate(L, BT * C);
    lnf_.assign(BT * C, 0.0f);
    lnf_mean_.assign(BT, 0.0f);
    lnf_rstd_.assign(BT, 0.0f);
    logits_.assign(BT * static_cast<std::size_t>(config_.vocab), 0.0f);
    losses_.assign(BT, 0.0f);

    dresidual_.assign(BT * C, 0.0f);
    dln_.assign(BT * C, 0.0f);
    datty_.assign(BT * C, 0.0f);
    dqkv_.assign(BT * 3 * C, 0.0f);
    dscores_.assign(static_cast<std::size_t>(config_.seq_len) * static_cast<std::size_t>(config_.seq_len), 0.0f);
    dfch_.assign(BT * 4 * C, 0.0f);
    dfch_gelu_.assign(BT * 4 * C, 0.0f);
  }

  ~CpuGpt() override {
    if (gradient_memory_.allocate && gradient_memory_.release) gradient_memory_.release(grads_.data());
  }
  CpuGpt(const CpuGpt&) = delete;
  CpuGpt& operator=(const CpuGpt&) = delete;

  const GptConfig& config() const override { return config_; }
  const ParameterLayout& layout() const override { return layout_; }
  std::span<float> parameters() override { return params_; }
  std::span<float> gradients() override { return grads_; }
  void zero_gradients() override { zero(grads_); }

  float forward(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets) override {
    check_tokens(inputs, "inputs");
    check_tokens(targets, "targets");
    return run_forward(inputs.data(), targets.data());
  }

  float forward_backward(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, float grad_scale,
                         const GradientReady& on_ready) override {
    check_tokens(inputs, "inputs");
    check_tokens(targets, "targets");
    const float loss = run_forward(inputs.data(), targets.data());
    run_backward(inputs.data(), targets.data(), grad_scale, on_ready);
    return loss;
  }

 private:
  void check_tokens(std::span<const std::int32_t> tokens, const char* what) const {
    const std::size_t want = static_cast<std::size_t>(config_.micro_batch) * config_.seq_len;
    if (tokens.size() != want) {
      throw std::invalid_argument("gpudirect-launch train: " + std::string(what) + " hold " + std::to_string(tokens.size()) +
                                  " tokens but micro_batch x seq_len is " + std::to_string(want) + " (pass exactly one micro-batch)");
    }
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i] < 0 || tokens[i] >= config_.vocab) {
        throw std::invalid_argument("gpudirect-launch train: " + std::string(what) + "[" + std::to_string(i) + "] is token " +
                                    std::to_string(tokens[i]) + ", outside the vocabulary [0, " + std::to_string(config_.vocab) +
                                    ") (raise --vocab or fix the token file)");
      }
    }
  }

  float run_forward(const std::int32_t* inputs, const std::int32_t* targets) {
    const int B = config_.micro_batch, T = config_.seq_len, C = config_.width, V = config_.vocab, NH = config_.heads;
    const int BT = B * T, nt = threads_;
    const std::size_t btc = static_cast<std::size_t>(BT) * static_cast<std::size_t>(C);
    float* P = params_.data();
    encoder_forward(encoded_.data(), inputs, P + layout_.find("wte").offset, P + layout_.find("wpe").offset, B, T, C, nt);
    for (int l = 0; l < config_.layers; ++l) {
      const Block w = block_at(P, layout_, l);
      const float* x = l == 0 ? encoded_.data() : res3_.at(l - 1);
      layernorm_forward(ln1_.at(l), ln1_mean_.at(l), ln1_rstd_.at(l), x, w.ln1w, w.ln1b, BT, C, nt);
      matmul_forward(qkv_.at(l), ln1_.at(l), w.qkvw, w.qkvb, BT, C, 3 * C, nt);
      attention_forward(atty_.at(l), att_.at(l), qkv_.at(l), B, T, C, NH, nt);
      matmul_forward(attproj_.at(l), atty_.at(l), w.projw, w.projb, BT, C, C, nt);
      residual_forward(res2_.at(l), x, attproj_.at(l), btc, nt);
      layernorm_forward(ln2_.at(l), ln2_mean_.at(l), ln2_rstd_.at(l), res2_.at(l), w.ln2w, w.ln2b, BT, C, nt);
      matmul_forward(fch_.at(l), ln2_.at(l), w.fcw, w.fcb, BT, C, 4 * C, nt);
      gelu_forward(fch_gelu_.at(l), fch_.at(l), 4 * btc, nt);
      matmul_forward(fcproj_.at(l), fch_gelu_.at(l), w.fcprojw, w.fcprojb, BT, 4 * C, C, nt);
      residual_forward(res3_.at(l), res2_.at(l), fcproj_.at(l), btc, nt);
    }
    layernorm_forward(lnf_.data(), lnf_mean_.data(), lnf_rstd_.data(), res3_.at(config_.layers - 1), P + layout_.find("lnf.w").offset,
                      P + layout_.find("lnf.b").offset, BT, C, nt);
    matmul_forward(logits_.data(), lnf_.data(), P + layout_.find("wte").offset, nullptr, BT, C, V, nt);
    softmax_cross_entropy_forward(losses_.data(), logits_.data(), logits_.data(), targets, BT, V, nt);
    double sum = 0.0;  // fixed order: the same loss for any thread count
    for (float v : losses_) sum += v;
    return static_cast<float>(sum / BT);
  }

  void run_backward(const std::int32_t* inputs, const std::int32_t* targets, float grad_scale, const GradientReady& on_ready) {
    const int B = config_.micro_batch, T = config_.seq_len, C = config_.width, V = config_.vocab, NH = config_.heads;
    const int BT = B * T, nt = threads_;
    const std::size_t btc = static_cast<std::size_t>(BT) * static_cast<std::size_t>(C);
    float* P = params_.data();
    float* G = grads_.data();
    auto ready = [&](std::pair<std::size_t, std::size_t> range) {
      if (on_ready) on_ready(range.first, range.second);
    };
    const std::size_t wte = layout_.find("wte").offset, wpe = layout_.find("wpe").offset;
    const std::size_t lnfw = layout_.find("lnf.w").offset, lnfb = layout_.find("lnf.b").offset;

    // The mean over B*T tokens and the caller's scale enter once, at the top: everything below is linear.
    float* dlogits = logits_.data();
    softmax_cross_entropy_backward(dlogits, logits_.data(), targets, grad_scale / static_cast<float>(BT), BT, V, nt);
    zero(dln_);
    matmul_backward(dln_.data(), G + wte, nullptr, dlogits, lnf_.data(), P + wte, BT, C, V, nt);
    zero(dresidual_);
    layernorm_backward(dresidual_.data(), G + lnfw, G + lnfb, dln_.data(), res3_.at(config_.layers - 1), P + lnfw, lnf_mean_.data(),
                       lnf_rstd_.data(), BT, C, nt);
    ready(layout_.final_norm_range());

    // dresidual_ is the gradient of the residual stream: a residual's backward is the identity, so
    // each branch's input gradient is added straight into it.
    for (int l = config_.layers - 1; l >= 0; --l) {
      const Block w = block_at(P, layout_, l);
      const Block g = block_at(G, layout_, l);
      const float* x = l == 0 ? encoded_.data() : res3_.at(l - 1);
      zero(dfch_gelu_);
      matmul_backward(dfch_gelu_.data(), g.fcprojw, g.fcprojb, dresidual_.data(), fch_gelu_.at(l), w.fcprojw, BT, 4 * C, C, nt);
      zero(dfch_);
      gelu_backward(dfch_.data(), fch_.at(l), dfch_gelu_.data(), 4 * btc, nt);
      zero(dln_);
      matmul_backward(dln_.data(), g.fcw, g.fcb, dfch_.data(), ln2_.at(l), w.fcw, BT, C, 4 * C, nt);
      layernorm_backward(dresidual_.data(), g.ln2w, g.ln2b, dln_.data(), res2_.at(l), w.ln2w, ln2_mean_.at(l), ln2_rstd_.at(l), BT, C, nt);
      zero(datty_);
      matmul_backward(datty_.data(), g.projw, g.projb, dresidual_.data(), atty_.at(l), w.projw, BT, C, C, nt);
      zero(dqkv_);
      attention_backward(dqkv_.data(), dscores_.data(), datty_.data(), qkv_.at(l), att_.at(l), B, T, C, NH, nt);
      zero(dln_);
      matmul_backward(dln_.data(), g.qkvw, g.qkvb, dqkv_.data(), ln1_.at(l), w.qkvw, BT, C, 3 * C, nt);
      layernorm_backward(dresidual_.data(), g.ln1w, g.ln1b, dln_.data(), x, w.ln1w, ln1_mean_.at(l), ln1_rstd_.at(l), BT, C, nt);
      ready(layout_.layer_range(l));
    }
    encoder_backward(G + wte, G + wpe, dresidual_.data(), inputs, B, T, C, nt);
    ready(layout_.embedding_range());
  }

  GptConfig config_;
  ParameterLayout layout_;
  int threads_;
  GradientMemory gradient_memory_;
  std::vector<float> params_, own_grads_;
  std::span<float> grads_;  // own_grads_, or from gradient_memory_
  std::vector<float> encoded_, lnf_, lnf_mean_, lnf_rstd_, logits_, losses_;
  Stacked ln1_, ln1_mean_, ln1_rstd_, qkv_, att_, atty_, attproj_, res2_, ln2_, ln2_mean_, ln2_rstd_, fch_, fch_gelu_, fcproj_, res3_;
  std::vector<float> dresidual_, dln_, datty_, dqkv_, dscores_, dfch_, dfch_gelu_;
};

}  // namespace

int default_cpu_threads() { return std::max(1, omp_get_max_threads()); }

std::unique_ptr<Model> make_cpu_model(const GptConfig& config, int threads, GradientMemory gradient_memory) {
  return std::make_unique<CpuGpt>(config, threads, std::move(gradient_memory));
}

}  // namespace gpudirect::train
