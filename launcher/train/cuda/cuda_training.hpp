// The CUDA implementation of the model and its Trainer backend, for code that must not see CUDA
// headers (the train command, the GPU check). Defined in the .cu files of this folder, which are
// built only where CMake found nvcc, cuBLAS and NCCL (GPUDIRECT_HAVE_CUDA_TRAINING is then defined).
//
// NOT YET RUN ON A GPU: this code compiles; its agreement with the CPU reference is checked by
// tests/gpu/check_cuda_training.sh the first time a GPU is present.
#pragma once

#include "comm/communicator.hpp"
#include "train/cuda/attention_kind.hpp"
#include "train/cuda/speed_options.hpp"
#include "train/model.hpp"
#include "train/train_backend.hpp"
#include "train/train_settings.hpp"

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace gpudirect::train::cuda {

// Empty when at least one CUDA device is visible; otherwise why not, from cudaGetDeviceCount
// ("no CUDA-capable device is detected", "CUDA driver version is insufficient ...").
std::string device_problem();
int device_count();  // 0 when no device or no driver
// Empty when cuBLAS (opened with dlopen, see cublas_library.cuh) loads; otherwise why not.
std::string cublas_problem();

struct DeviceInfo {
  int index = 0;               // among the visible devices
  std::string name;            // "NVIDIA H100 80GB HBM3"
  std::string pci_bus;         // "0000:18:00"
  double peak_bf16_flops = 0;  // dense; 0 when unknown (device_peak.hpp)
  std::size_t total_bytes = 0;
};

// One GPU per rank: local_rank modulo the visible devices (the same choice as the NCCL
// communicator), made current on the calling thread. Throws std::runtime_error naming the problem.
DeviceInfo select_device(int local_rank);
// Device memory free on the current device now (cudaMemGetInfo), for the memory plan's check.
std::size_t device_memory_free();

// Device memory in use on the current device (all processes: total - free from cudaMemGetInfo).
std::size_t device_memory_used();

// The GPT of model.hpp on the current device: bf16 weights and activations for the matrix products,
// fp32 master weights, fp32 gradients (one contiguous device buffer in ParameterLayout order),
// initialised from config.seed exactly as the CPU model is. parameters() and gradients() return host
// copies downloaded on each call (for checks and checkpoints); GradientReady ranges are reported when
// their kernels are enqueued on the model's stream. Throws std::invalid_argument for a shape the
// kernels cannot take. attention: the warp-per-row kernels (the reference) or cuBLAS's tensor cores
// (attention_kind.hpp; not yet run on a GPU either). speed: the optional fast paths of
// speed_options.hpp (all off: today's kernels; none has run on a GPU).
std::unique_ptr<Model> make_cuda_model(const GptConfig& config, AttentionKind attention = AttentionKind::reference,
                                       const SpeedOptions& speed = {});

// The Trainer's backend on the GPU (train_backend.hpp): gradient buckets all-reduced (or
// reduce-scattered under ZeRO-1) by `comm` on its stream as soon as backward has enqueued them, AdamW
// with fp32 state on the device, parameters all-gathered under ZeRO-1. `model` must come from
// make_cuda_model and `comm` must be a CUDA communicator (NCCL); both must outlive the backend.
std::unique_ptr<TrainBackend> make_cuda_backend(Model& model, comm::Communicator& comm, const TrainSettings& settings);

// For the GPU check: the device's AdamW step (all of `layout`, state as long as the buffer) and its
// sum of squares, run on copies of host buffers and copied back.
void adamw_step_on_device(const ParameterLayout& layout, const AdamWSettings& settings, std::span<float> parameters,
                          std::span<const float> gradients, std::span<float> m, std::span<float> v, float lr, float grad_scale, long t);
double sum_of_squares_on_device(std::span<const float> values);
// For the GPU check: one attention layer, forward then backward, on qkv and dout rounded to bf16 as the
// model stores them; out and dqkv are what the device wrote (bf16, widened).
void attention_on_device(AttentionKind attention, std::span<const float> qkv, std::span<const float> dout, int B, int T, int C, int NH,
                         std::span<float> out, std::span<float> dqkv);

}  // namespace gpudirect::train::cuda
