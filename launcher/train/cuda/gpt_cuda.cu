// The GPT forward and backward on the GPU, composed from the kernels of this folder in the same
// order as ../cpu/gpt_cpu.cpp. Mixed precision: the matrix products read bf16 weights and bf16
// activations and accumulate in fp32; the residual stream, the layer-norm statistics, the logits and
// every parameter gradient are fp32; the master weights are fp32 and the bf16 copy is refreshed after
// every change.
#include "train/cuda/cuda_training.hpp"
#include "train/cuda/epilogue_plan.hpp"
#include "train/cuda/gpt_cuda.cuh"
#include "train/cuda/launch_geometry.hpp"
#include "train/cuda/memory_plan.hpp"
#include "train/cuda/token_groups.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpudirect::train::cuda {
namespace {

struct BlockOffsets {
  std::size_t ln1w, ln1b, qkvw, qkvb, projw, projb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb;
};

BlockOffsets block_offsets(const ParameterLayout& layout, int l) {
  const std::string p = "h." + std::to_string(l) + ".";
  auto at = [&](const char* name) { return layout.find(p + name).offset; };
  return BlockOffsets{at("ln1.w"), at("ln1.b"), at("qkv.w"), at("qkv.b"), at("proj.w"),   at("proj.b"),
                      at("ln2.w"), at("ln2.b"), at("fc.w"),  at("fc.b"),  at("fcproj.w"), at("fcproj.b")};
}

const GptConfig& checked(const GptConfig& config, const SpeedOptions& speed) {
  validate(config);
  require_head_size_fits(config.width / config.heads);
  if (speed.gemm_epilogues)
    if (const std::string why = gemm_epilogues_problem(config); !why.empty()) throw std::invalid_argument("gpudirect-launch train: " + why);
  return config;
}

}  // namespace

CudaGpt& as_cuda_model(Model& model) {
  auto* cuda = dynamic_cast<CudaGpt*>(&model);
  if (cuda == nullptr) throw std::invalid_argument("gpudirect-launch train: the CUDA backend needs the CUDA model (make_cuda_model)");
  return *cuda;
}

CudaGpt::CudaGpt(const GptConfig& config, AttentionKind attention, const SpeedOptions& speed)
    : config_(checked(config, speed)),
      attention_(attention),
      speed_(speed),
      layout_(config_),
      staged_(5 * static_cast<std::size_t>(config_.micro_batch) * config_.seq_len + 1),
      host_losses_(static_cast<std::size_t>(config_.micro_batch) * config_.seq_len) {
  GPUDIRECT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  GPUDIRECT_CUBLAS(cublas().create(&cublas_));
  GPUDIRECT_CUBLAS(cublas().set_stream(cublas_, stream_));
  if (speed_.gemm_epilogues) GPUDIRECT_CUBLAS(cublaslt().create(&cublaslt_));

  // The sizes the memory plan counted (memory_plan.hpp), so the two cannot disagree.
  const ModelBufferSizes n = model_buffer_sizes(config_, attention_, speed_);
  params_ = DeviceArray<float>(n.params);
  grads_ = DeviceArray<float>(n.grads);
  weights_ = DeviceArray<bf16>(n.weights);
  inputs_ = DeviceArray<std::int32_t>(n.inputs);
  targets_ = DeviceArray<std::int32_t>(n.targets);
  group_tokens_ = DeviceArray<std::int32_t>(n.group_tokens);
  group_offsets_ = DeviceArray<std::int32_t>(n.group_offsets);
  group_positions_ = DeviceArray<std::int32_t>(n.group_positions);
  encoded_ = DeviceArray<float>(n.encoded);
  res2_ = DeviceArray<float>(n.res2);
  res3_ = DeviceArray<float>(n.res3);
  ln1_mean_ = DeviceArray<float>(n.ln1_mean);
  ln1_rstd_ = DeviceArray<float>(n.ln1_rstd);
  ln2_mean_ = DeviceArray<float>(n.ln2_mean);
  ln2_rstd_ = DeviceArray<float>(n.ln2_rstd);
  lse_ = DeviceArray<float>(n.lse);
  lnf_mean_ = DeviceArray<float>(n.lnf_mean);
  lnf_rstd_ = DeviceArray<float>(n.lnf_rstd);
  if (n.logits > 0) logits_ = DeviceArray<float>(n.logits);  // 0 under --fused-classifier
  losses_ = DeviceArray<float>(n.losses);
  ln1_ = DeviceArray<bf16>(n.ln1);
  qkv_ = DeviceArray<bf16>(n.qkv);
  atty_ = DeviceArray<bf16>(n.atty);
  ln2_ = DeviceArray<bf16>(n.ln2);
  fch_ = DeviceArray<bf16>(n.fch);
  fch_gelu_ = DeviceArray<bf16>(n.fch_gelu);
  lnf_ = DeviceArray<bf16>(n.lnf);
  dlogits_ = DeviceArray<bf16>(n.dlogits);
  branch_ = DeviceArray<float>(n.branch);
  dresidual_ = DeviceArray<float>(n.dresidual);
  dln_ = DeviceArray<float>(n.dln);
  attention_scratch_ = DeviceArray<float>(n.attention_scratch);
  if (n.layernorm_partials > 0) layernorm_partials_ = DeviceArray<float>(n.layernorm_partials);
  dresidual_bf16_ = DeviceArray<bf16>(n.dresidual_bf16);
  datty_ = DeviceArray<bf16>(n.datty);
  dqkv_ = DeviceArray<bf16>(n.dqkv);
  if (n.dfch_gelu > 0) dfch_gelu_ = DeviceArray<bf16>(n.dfch_gelu);  // 0 under --gemm-epilogues
  if (n.gemm_workspace_bytes > 0) gemm_workspace_ = DeviceArray<float>(n.gemm_workspace_bytes / sizeof(float));
  dfch_ = DeviceArray<bf16>(n.dfch);
  ones_ = DeviceArray<bf16>(n.ones);
  probs_ = DeviceArray<bf16>(n.probs);
  scores_ = DeviceArray<float>(n.scores);
  dscores_ = DeviceArray<bf16>(n.dscores);
  qkv_heads_ = DeviceArray<bf16>(n.qkv_heads);
  dqkv_heads_ = DeviceArray<bf16>(n.dqkv_heads);
  heads_ = DeviceArray<bf16>(n.heads);
  fill_bf16(ones_.get(), 1.0f, n.ones, stream_);
  if (logits_stride(static_cast<std::size_t>(config_.vocab), speed_) != static_cast<std::size_t>(config_.vocab)) {
    // Nothing reads the padded columns; zeroed once so that they hold defined values all the same.
    if (n.logits > 0) GPUDIRECT_CUDA(cudaMemsetAsync(logits_.get(), 0, n.logits * sizeof(float), stream_));
    GPUDIRECT_CUDA(cudaMemsetAsync(dlogits_.get(), 0, n.dlogits * sizeof(bf16), stream_));
  }

  host_params_.assign(layout_.total(), 0.0f);
  initialize_parameters(config_, host_params_, config_.seed);
  upload_parameters(host_params_);
  zero_gradients();
  GPUDIRECT_CUDA(cudaStreamSynchronize(stream_));
}

CudaGpt::~CudaGpt() {
  if (stream_) cudaStreamSynchronize(stream_);
  if (cublas_) cublas().destroy(cublas_);
  if (cublaslt_) cublaslt().destroy(cublaslt_);
  if (stream_) cudaStreamDestroy(stream_);
}

std::span<float> CudaGpt::parameters() {
  GPUDIRECT_CUDA(cudaStreamSynchronize(stream_));
  host_params_.resize(layout_.total());
  GPUDIRECT_CUDA(cudaMemcpy(host_params_.data(), params_.get(), layout_.total() * sizeof(float), cudaMemcpyDeviceToHost));
  return host_params_;
}

std::span<float> CudaGpt::gradients() {
  GPUDIRECT_CUDA(cudaStreamSynchronize(stream_));
  host_grads_.resize(layout_.total());
  GPUDIRECT_CUDA(cudaMemcpy(host_grads_.data(), grads_.get(), layout_.total() * sizeof(float), cudaMemcpyDeviceToHost));
  return host_grads_;
}

TensorCoreScratch CudaGpt::tensor_core_scratch() const {
  return TensorCoreScratch{qkv_heads_.get(), dqkv_heads_.get(), heads_.get(), scores_.get(), dscores_.get()};
}

void CudaGpt::zero_gradients() { GPUDIRECT_CUDA(cudaMemsetAsync(grads_.get(), 0, layout_.total() * sizeof(float), stream_)); }

void CudaGpt::parameters_changed() { to_bf16(weights_.get(), params_.get(), layout_.total(), stream_, speed_.vector_loads); }

void CudaGpt::upload_parameters(std::span<const float> host) {
  if (host.size() != layout_.total())
    throw std::invalid_argument("gpudirect-launch train: " + std::to_string(host.size()) + " parameters given, the model has " +
                                std::to_string(layout_.total()));
  GPUDIRECT_CUDA(cudaMemcpyAsync(params_.get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice, stream_));
  parameters_changed();
  GPUDIRECT_CUDA(cudaStreamSynchronize(stream_));
}

void CudaGpt::upload_batch(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, bool groups) {
  const std::size_t BT = static_cast<std::size_t>(config_.micro_batch) * config_.seq_len;
  for (const auto& [tokens, what] : {std::pair{inputs, "inputs"}, std::pair{targets, "targets"}}) {
    if (tokens.size() != BT)
      throw std::invalid_argument("gpudirect-launch train: " + std::string(what) + " hold " + std::to_string(tokens.size()) +
                                  " tokens but micro_batch x seq_len is " + std::to_string(BT) + " (pass exactly one micro-batch)");
    for (std::size_t i = 0; i < BT; ++i)
      if (tokens[i] < 0 || tokens[i] >= config_.vocab)
        throw std::invalid_argument("gpudirect-launch train: " + std::string(what) + "[" + std::to_string(i) + "] is token " +
                                    std::to_string(tokens[i]) + ", outside the vocabulary [0, " + std::to_string(config_.vocab) +
                                    ") (raise --vocab or fix the token file)");
  }
  // The previous micro-batch's copies are complete: forward and forward_backward end with a sync.
  std::int32_t* host = staged_.get();
  std::copy(inputs.begin(), inputs.end(), host);
  std::copy(targets.begin(), targets.end(), host + BT);
  GPUDIRECT_CUDA(cudaMemcpyAsync(inputs_.get(), host, BT * sizeof(std::int32_t), cudaMemcpyHostToDevice, stream_));
  GPUDIRECT_CUDA(cudaMemcpyAsync(targets_.get(), host + BT, BT * sizeof(std::int32_t), cudaMemcpyHostToDevice, stream_));
  if (!groups) return;
  const TokenGroups g = group_by_token(inputs, config_.vocab);
  groups_ = static_cast<int>(g.tokens.size());
  std::int32_t* tokens = host + 2 * BT;
  std::int32_t* offsets = tokens + g.tokens.size();
  std::int32_t* positions = offsets + g.offsets.size();
  std::copy(g.tokens.begin(), g.tokens.end(), tokens);
  std::copy(g.offsets.begin(), g.offsets.end(), offsets);
  std::copy(g.positions.begin(), g.positions.end(), positions);
  GPUDIRECT_CUDA(cudaMemcpyAsync(group_tokens_.get(), tokens, g.tokens.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice, stream_));
  GPUDIRECT_CUDA(cudaMemcpyAsync(group_offsets_.get(), offsets, g.offsets.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice, stream_));
  GPUDIRECT_CUDA(
      cudaMemcpyAsync(group_positions_.get(), positions, g.positions.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice, stream_));
}

float CudaGpt::forward(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets) {
  upload_batch(inputs, targets, false);
  run_forward(false, 0.0f);
  return mean_loss();
}

float CudaGpt::forward_backward(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, float grad_scale,
                                const GradientReady& on_ready) {
  upload_batch(inputs, targets, true);
  const int BT = config_.micro_batch * config_.seq_len;
  // The mean over B*T tokens and the caller's scale enter once, in dlogits: everything below is linear.
  run_forward(true, grad_scale / static_cast<float>(BT));
  run_backward(on_ready);
  return mean_loss();
}

float CudaGpt::mean_loss() {
  const std::size_t BT = static_cast<std::size_t>(config_.micro_batch) * config_.seq_len;
  GPUDIRECT_CUDA(cudaMemcpyAsync(host_losses_.get(), losses_.get(), BT * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  GPUDIRECT_CUDA(cudaStreamSynchronize(stream_));
  double sum = 0.0;  // fixed order, as the CPU model
  for (std::size_t i = 0; i < BT; ++i) sum += host_losses_.get()[i];
  return static_cast<float>(sum / static_cast<double>(BT));
}

// Block l forward from its input (encoded_ or res3_ of layer l-1), its activations in slot
// activation_slot(l) (memory_plan.hpp: every layer its own, one shared under --recompute). When
// recomputing in backward, it stops after the GELU: the MLP projection and the residual add feed only
// res3_ of layer l, which is kept.
void CudaGpt::block_forward(int l, bool recomputing) {
  const int B = config_.micro_batch, T = config_.seq_len, C = config_.width, NH = config_.heads, BT = B * T;
  const std::size_t btc = static_cast<std::size_t>(BT) * C, bt = static_cast<std::size_t>(BT);
  const std::size_t rows = static_cast<std::size_t>(B) * NH * T;
  const float* P = params_.get();
  const bf16* W = weights_.get();
  const BlockOffsets o = block_offsets(layout_, l);
  const std::size_t L = static_cast<std::size_t>(l), S = activation_slot(l, speed_);
  const float* x = l == 0 ? encoded_.get() : res3_.get() + (L - 1) * btc;
  bf16* ln1 = ln1_.get() + S * btc;
  bf16* qkv = qkv_.get() + S * 3 * btc;
  bf16* atty = atty_.get() + S * btc;
  float* res2 = res2_.get() + S * btc;
  bf16* ln2 = ln2_.get() + S * btc;
  bf16* fch = fch_.get() + S * 4 * btc;
  bf16* fch_gelu = fch_gelu_.get() + S * 4 * btc;
  // out = inp W^T + b: the bias in cuBLASLt's epilogue under --gemm-epilogues, else broadcast into out first.
  auto linear = [&](void* out, cudaDataType_t type, const bf16* inp, std::size_t w, std::size_t b, int IC, int OC) {
    if (speed_.gemm_epilogues)
      matmul_forward_bias(gemm_epilogues(), out, type, inp, W + w, P + b, BT, IC, OC, stream_);
    else
      matmul_forward(cublas_, out, type, inp, W + w, P + b, BT, IC, OC, stream_);
  };
  layernorm_forward(ln1, ln1_mean_.get() + S * bt, ln1_rstd_.get() + S * bt, x, P + o.ln1w, P + o.ln1b, BT, C, stream_);
  linear(qkv, CUDA_R_16BF, ln1, o.qkvw, o.qkvb, C, 3 * C);
  if (attention_ == AttentionKind::tensor_core)
    attention_forward_tensor_core(cublas_, atty, probs_.get() + S * rows * T, qkv, tensor_core_scratch(), B, T, C, NH, stream_);
  else
    attention_forward(atty, lse_.get() + S * rows, qkv, B, T, C, NH, stream_);
  linear(branch_.get(), CUDA_R_32F, atty, o.projw, o.projb, C, C);
  residual_forward(res2, x, branch_.get(), btc, stream_, speed_.vector_loads);
  layernorm_forward(ln2, ln2_mean_.get() + S * bt, ln2_rstd_.get() + S * bt, res2, P + o.ln2w, P + o.ln2b, BT, C, stream_);
  if (speed_.gemm_epilogues) {  // fch (the GELU's input, kept for backward) and fch_gelu from one product
    matmul_forward_gelu(gemm_epilogues(), fch_gelu, fch, ln2, W + o.fcw, P + o.fcb, BT, C, 4 * C, stream_);
  } else {
    matmul_forward(cublas_, fch, CUDA_R_16BF, ln2, W + o.fcw, P + o.fcb, BT, C, 4 * C, stream_);
    gelu_forward(fch_gelu, fch, 4 * btc, stream_, speed_.vector_loads);
  }
  if (recomputing) return;
  linear(branch_.get(), CUDA_R_32F, fch_gelu, o.fcprojw, o.fcprojb, 4 * C, C);
  residual_forward(res3_.get() + L * btc, res2, branch_.get(), btc, stream_, speed_.vector_loads);
}

void CudaGpt::run_forward(bool with_gradient, float dloss) {
  const int B = config_.micro_batch, T = config_.seq_len, C = config_.width, V = config_.vocab, BT = B * T;
  const std::size_t btc = static_cast<std::size_t>(BT) * C;
  const float* P = params_.get();
  const bf16* W = weights_.get();
  const std::size_t wte = layout_.find("wte").offset, wpe = layout_.find("wpe").offset;
  encoder_forward(encoded_.get(), inputs_.get(), P + wte, P + wpe, B, T, C, stream_);
  for (int l = 0; l < config_.layers; ++l) block_forward(l, false);
  const std::size_t last = static_cast<std::size_t>(config_.layers - 1);
  layernorm_forward(lnf_.get(), lnf_mean_.get(), lnf_rstd_.get(), res3_.get() + last * btc, P + layout_.find("lnf.w").offset,
                    P + layout_.find("lnf.b").offset, BT, C, stream_);
  const int Vp = static_cast<int>(logits_stride(static_cast<std::size_t>(V), speed_));  // V unless --pad-vocab
  if (speed_.fused_classifier) {  // bf16 logits into the dlogits buffer, gradients over them in place
    matmul_forward(cublas_, dlogits_.get(), CUDA_R_16BF, lnf_.get(), W + wte, nullptr, BT, C, V, stream_, Vp);
    fused_classifier(losses_.get(), dlogits_.get(), targets_.get(), dloss, BT, V, Vp, with_gradient, stream_);
    return;
  }
  matmul_forward(cublas_, logits_.get(), CUDA_R_32F, lnf_.get(), W + wte, nullptr, BT, C, V, stream_, Vp);
  softmax_cross_entropy(losses_.get(), with_gradient ? dlogits_.get() : nullptr, logits_.get(), targets_.get(), dloss, BT, V, Vp, stream_);
}

void CudaGpt::run_backward(const GradientReady& on_ready) {
  const int B = config_.micro_batch, T = config_.seq_len, C = config_.width, V = config_.vocab, NH = config_.heads, BT = B * T;
  const std::size_t btc = static_cast<std::size_t>(BT) * C, bt = static_cast<std::size_t>(BT);
  const std::size_t rows = static_cast<std::size_t>(B) * NH * T;
  const float* P = params_.get();
  const bf16* W = weights_.get();
  float* G = grads_.get();
  auto ready = [&](std::pair<std::size_t, std::size_t> range) {
    if (on_ready) on_ready(range.first, range.second);
  };
  const std::size_t wte = layout_.find("wte").offset, wpe = layout_.find("wpe").offset;
  const std::size_t lnfw = layout_.find("lnf.w").offset, lnfb = layout_.find("lnf.b").offset;
  const std::size_t last = static_cast<std::size_t>(config_.layers - 1);

  // Head (tied to wte): dlnf = dlogits wte, dwte += dlogits^T lnf.
  const int Vp = static_cast<int>(logits_stride(static_cast<std::size_t>(V), speed_));
  matmul_backward(cublas_, dln_.get(), CUDA_R_32F, G + wte, nullptr, dlogits_.get(), lnf_.get(), W + wte, ones_.get(), BT, C, V, stream_,
                  Vp);
  GPUDIRECT_CUDA(cudaMemsetAsync(dresidual_.get(), 0, btc * sizeof(float), stream_));
  layernorm_backward(dresidual_.get(), G + lnfw, G + lnfb, dln_.get(), res3_.get() + last * btc, P + lnfw, lnf_mean_.get(), lnf_rstd_.get(),
                     BT, C, stream_, layernorm_partials_.get());
  ready(layout_.final_norm_range());

  // dresidual_ is the gradient of the residual stream: each branch's input gradient is added into it.
  for (int l = config_.layers - 1; l >= 0; --l) {
    const BlockOffsets o = block_offsets(layout_, l);
    const std::size_t L = static_cast<std::size_t>(l), S = activation_slot(l, speed_);
    const float* x = l == 0 ? encoded_.get() : res3_.get() + (L - 1) * btc;
    if (speed_.recompute) block_forward(l, true);  // the block's activations again, into slot 0
    to_bf16(dresidual_bf16_.get(), dresidual_.get(), btc, stream_, speed_.vector_loads);
    if (speed_.gemm_epilogues) {  // dfch = (dout W) * gelu'(fch) in one product: no dfch_gelu
      matmul_backward(cublas_, nullptr, CUDA_R_16BF, G + o.fcprojw, G + o.fcprojb, dresidual_bf16_.get(), fch_gelu_.get() + S * 4 * btc,
                      W + o.fcprojw, ones_.get(), BT, 4 * C, C, stream_);
      matmul_dinp_dgelu(gemm_epilogues(), dfch_.get(), dresidual_bf16_.get(), W + o.fcprojw, fch_.get() + S * 4 * btc, BT, 4 * C, C,
                        stream_);
    } else {
      matmul_backward(cublas_, dfch_gelu_.get(), CUDA_R_16BF, G + o.fcprojw, G + o.fcprojb, dresidual_bf16_.get(),
                      fch_gelu_.get() + S * 4 * btc, W + o.fcprojw, ones_.get(), BT, 4 * C, C, stream_);
      gelu_backward(dfch_.get(), fch_.get() + S * 4 * btc, dfch_gelu_.get(), 4 * btc, stream_, speed_.vector_loads);
    }
    matmul_backward(cublas_, dln_.get(), CUDA_R_32F, G + o.fcw, G + o.fcb, dfch_.get(), ln2_.get() + S * btc, W + o.fcw, ones_.get(), BT, C,
                    4 * C, stream_);
    layernorm_backward(dresidual_.get(), G + o.ln2w, G + o.ln2b, dln_.get(), res2_.get() + S * btc, P + o.ln2w, ln2_mean_.get() + S * bt,
                       ln2_rstd_.get() + S * bt, BT, C, stream_, layernorm_partials_.get());
    to_bf16(dresidual_bf16_.get(), dresidual_.get(), btc, stream_, speed_.vector_loads);
    matmul_backward(cublas_, datty_.get(), CUDA_R_16BF, G + o.projw, G + o.projb, dresidual_bf16_.get(), atty_.get() + S * btc, W + o.projw,
                    ones_.get(), BT, C, C, stream_);
    if (attention_ == AttentionKind::tensor_core)
      attention_backward_tensor_core(cublas_, dqkv_.get(), datty_.get(), qkv_.get() + S * 3 * btc, probs_.get() + S * rows * T,
                                     tensor_core_scratch(), B, T, C, NH, stream_);
    else
      attention_backward(dqkv_.get(), attention_scratch_.get(), datty_.get(), qkv_.get() + S * 3 * btc, atty_.get() + S * btc,
                         lse_.get() + S * rows, B, T, C, NH, stream_);
    matmul_backward(cublas_, dln_.get(), CUDA_R_32F, G + o.qkvw, G + o.qkvb, dqkv_.get(), ln1_.get() + S * btc, W + o.qkvw, ones_.get(), BT,
                    C, 3 * C, stream_);
    layernorm_backward(dresidual_.get(), G + o.ln1w, G + o.ln1b, dln_.get(), x, P + o.ln1w, ln1_mean_.get() + S * bt,
                       ln1_rstd_.get() + S * bt, BT, C, stream_, layernorm_partials_.get());
    ready(layout_.layer_range(l));
  }
  encoder_backward(G + wte, G + wpe, dresidual_.get(), group_tokens_.get(), group_offsets_.get(), group_positions_.get(), groups_, B, T, C,
                   stream_);
  ready(layout_.embedding_range());
}

std::unique_ptr<Model> make_cuda_model(const GptConfig& config, AttentionKind attention, const SpeedOptions& speed) {
  return std::make_unique<CudaGpt>(config, attention, speed);
}

}  // namespace gpudirect::train::cuda
