// The CUDA model's class, shared by gpt_cuda.cu and cuda_backend.cu (which works on its device buffers).
#pragma once

#include "train/cuda/attention_kind.hpp"
#include "train/cuda/cuda_check.cuh"
#include "train/cuda/kernels.cuh"
#include "train/cuda/speed_options.hpp"
#include "train/model.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpudirect::train::cuda {

// A device allocation freed with the object.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t count);
  ~DeviceArray();
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& other) noexcept : data_(other.data_), count_(other.count_) {
    other.data_ = nullptr;
    other.count_ = 0;
  }
  DeviceArray& operator=(DeviceArray&& other) noexcept;
  T* get() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// Page-locked host memory, so copies to and from the device are truly asynchronous.
template <typename T>
class PinnedArray {
 public:
  explicit PinnedArray(std::size_t count);
  ~PinnedArray();
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
  T* get() const { return data_; }

 private:
  T* data_ = nullptr;
};

template <typename T>
DeviceArray<T>::DeviceArray(std::size_t count) : count_(count) {
  if (count == 0) return;
  const cudaError_t rc = cudaMalloc(&data_, count * sizeof(T));
  if (rc != cudaSuccess)
    throw std::runtime_error("gpudirect-launch train (CUDA): cudaMalloc of " + std::to_string(count * sizeof(T) >> 20) +
                             " MiB failed: " + cudaGetErrorString(rc) + " (a smaller --micro-batch or --seq-len, or --zero1, needs less)");
}

template <typename T>
DeviceArray<T>::~DeviceArray() {
  if (data_ != nullptr) cudaFree(data_);
}

template <typename T>
DeviceArray<T>& DeviceArray<T>::operator=(DeviceArray&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = other.data_;
    count_ = other.count_;
    other.data_ = nullptr;
    other.count_ = 0;
  }
  return *this;
}

template <typename T>
PinnedArray<T>::PinnedArray(std::size_t count) {
  GPUDIRECT_CUDA(cudaMallocHost(&data_, (count == 0 ? 1 : count) * sizeof(T)));
}

template <typename T>
PinnedArray<T>::~PinnedArray() {
  if (data_ != nullptr) cudaFreeHost(data_);
}

class CudaGpt;
CudaGpt& as_cuda_model(Model& model);  // throws std::invalid_argument for another Model

class CudaGpt final : public Model {
 public:
  CudaGpt(const GptConfig& config, AttentionKind attention, const SpeedOptions& speed);
  ~CudaGpt() override;

  const GptConfig& config() const override { return config_; }
  const ParameterLayout& layout() const override { return layout_; }
  std::span<float> parameters() override;  // downloaded host copy
  std::span<float> gradients() override;   // downloaded host copy
  void zero_gradients() override;
  float forward_backward(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, float grad_scale,
                         const GradientReady& on_ready) override;
  float forward(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets) override;

  // For the trainer: the device buffers and the stream every kernel of the model runs on.
  AttentionKind attention() const { return attention_; }
  const SpeedOptions& speed() const { return speed_; }
  float* device_parameters() const { return params_.get(); }
  float* device_gradients() const { return grads_.get(); }
  cudaStream_t stream() const { return stream_; }
  // After the fp32 master weights changed on the device (optimizer, broadcast, checkpoint): refresh
  // the bf16 copy the matrix products read. Enqueued on stream().
  void parameters_changed();
  // Copies `host` (layout().total() floats) into the master weights, then parameters_changed().
  void upload_parameters(std::span<const float> host);

 private:
  void upload_batch(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, bool groups);
  void run_forward(bool with_gradient, float dloss);
  void block_forward(int l, bool recomputing);
  void run_backward(const GradientReady& on_ready);
  float mean_loss();
  TensorCoreScratch tensor_core_scratch() const;

  GptConfig config_;
  AttentionKind attention_;
  SpeedOptions speed_;
  ParameterLayout layout_;
  cudaStream_t stream_{};
  cublasHandle_t cublas_{};
  // --gemm-epilogues only: cuBLASLt and its workspace (kGemmEpilogueWorkspaceBytes).
  cublasLtHandle_t cublaslt_{};
  DeviceArray<float> gemm_workspace_;
  GemmEpilogueContext gemm_epilogues() const { return {cublaslt_, gemm_workspace_.get(), gemm_workspace_.size() * sizeof(float)}; }
  DeviceArray<float> params_, grads_;
  DeviceArray<bf16> weights_;  // bf16 copy of params_, same layout
  std::vector<float> host_params_, host_grads_;
  // The batch and the wte-gradient grouping (token_groups.hpp), staged through pinned memory.
  PinnedArray<std::int32_t> staged_;
  DeviceArray<std::int32_t> inputs_, targets_, group_tokens_, group_offsets_, group_positions_;
  int groups_ = 0;
  // Activations kept for backward: per layer (L slices; one slice for a block's activations under
  // --recompute: memory_plan.hpp, activation_slot) or once.
  DeviceArray<float> encoded_, res2_, res3_, ln1_mean_, ln1_rstd_, ln2_mean_, ln2_rstd_, lse_, lnf_mean_, lnf_rstd_, logits_, losses_;
  DeviceArray<bf16> ln1_, qkv_, atty_, ln2_, fch_, fch_gelu_, lnf_, dlogits_;
  // Scratch: a branch's fp32 output before the residual add, and backward's buffers reused per layer.
  DeviceArray<float> branch_, dresidual_, dln_, attention_scratch_;
  DeviceArray<float> layernorm_partials_;  // --layernorm-all-sms only (layernorm_partials.hpp)
  DeviceArray<bf16> dresidual_bf16_, datty_, dqkv_, dfch_gelu_, dfch_, ones_;
  // The tensor-core attention's (empty for the reference): probabilities per layer, and its scratch.
  DeviceArray<bf16> probs_, dscores_, qkv_heads_, dqkv_heads_, heads_;
  DeviceArray<float> scores_;
  PinnedArray<float> host_losses_;
};

}  // namespace gpudirect::train::cuda
