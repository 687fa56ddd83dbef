// Which model and collectives a run uses, the CUDA model over NCCL or the fp32 CPU model over
// libfabric, and making them: communicator, model, the Trainer with the matching backend, and the
// peak FLOP/s that MFU is measured against.
#pragma once

#include "train/train_options.hpp"

#include "bootstrap/session.hpp"
#include "comm/communicator.hpp"
#include "train/data_source.hpp"
#include "train/model.hpp"
#include "train/backend_decision.hpp"
#include "train/trainer.hpp"

#include <memory>
#include <string>

namespace gpudirect::launcher::train_command {

// The rule of train/backend_decision.hpp applied to this node: --backend nccl refused (UsageError)
// where it cannot run with one GPU per local rank; auto: the CUDA model where it can, else the CPU one.
train::BackendDecision choose_backend(const std::string& backend, int local_ranks);

// auto decides per rank: every rank must have decided the same (a job with GPUs on some nodes only).
// Throws UsageError naming the first rank that chose otherwise.
void check_ranks_chose_alike(bootstrap::Session& session, const std::string& backend, bool use_cuda);

// Declared in this order so that the Trainer goes first, then the model, then the communicator
// whose memory the model's gradients may live in.
struct Training {
  bool cuda = false;
  std::unique_ptr<comm::Communicator> communicator;
  std::unique_ptr<train::Model> model;
  std::unique_ptr<train::Trainer> trainer;
  std::string model_description;  // for the start line
  std::string memory_plan;        // the CUDA model's, for the start line (empty for the CPU model)
  double peak_flops = 0;          // per rank, for MFU
  std::string peak_source;        // where peak_flops came from
};

// Collective: every rank calls it. Throws UsageError when the GPU's peak is unknown and not given.
// attention: the CUDA model's (attention_for); the CPU model has one attention.
Training set_up_training(const TrainOptions& o, bool use_cuda, train::cuda::AttentionKind attention, const train::GptConfig& config,
                         const train::TrainSettings& settings, train::DataSource& data, bootstrap::Session& session,
                         const bootstrap::SessionOptions& session_options);

// Device memory in use on this rank's GPU (every process on it), 0 without the CUDA model.
double gpu_memory_gib(bool use_cuda);

}  // namespace gpudirect::launcher::train_command
