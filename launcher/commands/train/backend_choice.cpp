#include "train/backend_choice.hpp"

#include "comm/communicator_factory.hpp"
#include "gpudirect/cpuset.hpp"
#include "train/cpu/cpu_model.hpp"
#ifdef GPUDIRECT_HAVE_CUDA_TRAINING
#include "train/cuda/cuda_training.hpp"
#include "train/cuda/memory_plan.hpp"
#endif
#include "train/host_backend.hpp"
#include "train/peak_flops.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace gpudirect::launcher::train_command {
namespace {

// CPUs this rank may use: its affinity, shared with the other local ranks when they are not bound.
int default_threads(const bootstrap::LaunchContext& context) {
  const CpuSet affinity = CpuSet::of_this_thread();  // sized by the kernel, not glibc's fixed 1024 CPUs
  int cpus = affinity.empty() ? 1 : affinity.count();
  const int online = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (cpus >= online) cpus /= std::max(1, context.local_size);
  return std::max(1, cpus);
}

#ifdef GPUDIRECT_HAVE_CUDA_TRAINING
void set_up_cuda(Training& t, train::cuda::AttentionKind attention, const train::cuda::SpeedOptions& speed, const train::GptConfig& config,
                 const train::TrainSettings& settings, train::DataSource& data, bootstrap::Session& session,
                 const bootstrap::SessionOptions& session_options) {
  const train::cuda::DeviceInfo device = train::cuda::select_device(session.context.local_rank);
  if (t.peak_flops <= 0) {
    if (device.peak_bf16_flops <= 0)
      throw UsageError("no dense bf16 peak is known for " + device.name + ": give --peak-tflops (per GPU) for MFU");
    t.peak_flops = device.peak_bf16_flops;
    t.peak_source = "dense bf16 peak of " + device.name;
  }
  // The memory plan before anything is allocated: a run that cannot fit stops here, naming the numbers.
  const train::cuda::MemoryPlan plan = train::cuda::plan_memory(config, settings, session.context.size, attention, speed);
  t.memory_plan = train::cuda::describe(plan);
  const std::string too_big = train::cuda::does_not_fit(plan, train::cuda::device_memory_free(), config, settings.zero1);
  if (!too_big.empty())
    throw std::runtime_error("on " + session.context.hostname + " GPU " + std::to_string(device.index) + ": " + too_big);
  t.communicator = comm::make_communicator({"nccl", session_options.timeout, "gpudirect train",
                                            speed.nccl_high_priority ? comm::StreamPriority::high : comm::StreamPriority::normal},
                                           session);
  t.model = train::cuda::make_cuda_model(config, attention, speed);
  t.trainer =
      std::make_unique<train::Trainer>(*t.model, data, settings, train::cuda::make_cuda_backend(*t.model, *t.communicator, settings));
  t.model_description = "CUDA model (bf16 matmuls and activations, fp32 master weights and AdamW state, " +
                        train::cuda::attention_name(attention) + " attention, fast paths: " + train::cuda::speed_names(speed) +
                        "; NOT YET VERIFIED ON A GPU, see tests/gpu/check_cuda_training.sh) on GPU " + std::to_string(device.index) + " [" +
                        device.pci_bus + "] " + device.name;
}
#endif

void set_up_cpu(Training& t, const TrainOptions& o, const train::GptConfig& config, const train::TrainSettings& settings,
                train::DataSource& data, bootstrap::Session& session, const bootstrap::SessionOptions& session_options) {
  const bootstrap::LaunchContext& context = session.context;
  t.communicator =
      comm::make_communicator({"libfabric", session_options.timeout, "gpudirect train", comm::StreamPriority::normal}, session);
  const int threads = o.threads > 0 ? o.threads : default_threads(context);
  t.model = train::make_cpu_model(config, threads, train::gradients_in_communicator_memory(*t.communicator));
  train::initialize_parameters(config, t.model->parameters(), config.seed);
  t.trainer = std::make_unique<train::Trainer>(*t.model, data, settings, train::make_host_backend(*t.model, *t.communicator, settings));
  t.model_description = "fp32 CPU model, " + std::to_string(threads) + " thread(s) per rank";
  if (t.peak_flops <= 0) {
    double sum = train::measure_sgemm_flops();
    if (context.size > 1) t.communicator->all_reduce(&sum, &sum, 1, comm::DataType::float64, comm::ReduceOp::sum)->wait();
    t.peak_flops = sum / context.size;
    t.peak_source = "measured with sgemm";
  }
}

}  // namespace

train::BackendDecision choose_backend(const std::string& backend, int local_ranks) {
  train::CudaSupport support;
#ifdef GPUDIRECT_HAVE_CUDA_TRAINING
  if (backend != "libfabric") {
    support.built = true;
    support.device_problem = train::cuda::device_problem();
    if (support.device_problem.empty()) {
      support.devices = train::cuda::device_count();
      support.cublas_problem = train::cuda::cublas_problem();
    }
  }
#endif
  train::BackendDecision decision = train::decide_backend(backend, support, local_ranks);
  if (!decision.refusal.empty()) throw UsageError(decision.refusal);
  return decision;
}

void check_ranks_chose_alike(bootstrap::Session& session, const std::string& backend, bool use_cuda) {
  if (!session.store || backend != "auto") return;
  const std::vector<std::string> choices = session.store->all_gather("train/backend", use_cuda ? "nccl" : "libfabric");
  for (std::size_t r = 0; r < choices.size(); ++r)
    if (choices[r] != choices[0])
      throw UsageError("--backend auto: rank 0 chose " + choices[0] + " but rank " + std::to_string(r) + " chose " + choices[r] +
                       " (GPUs visible on some ranks only); pass --backend nccl or --backend libfabric");
}

Training set_up_training(const TrainOptions& o, bool use_cuda, train::cuda::AttentionKind attention, const train::GptConfig& config,
                         const train::TrainSettings& settings, train::DataSource& data, bootstrap::Session& session,
                         const bootstrap::SessionOptions& session_options) {
  Training t;
  t.cuda = use_cuda;
  // Peak FLOP/s per rank for MFU: given, the GPU's dense bf16 peak, or measured with a short sgemm probe.
  t.peak_flops = o.peak_tflops * 1e12;
  t.peak_source = "--peak-tflops";
#ifdef GPUDIRECT_HAVE_CUDA_TRAINING
  if (use_cuda) {
    set_up_cuda(t, attention, speed_for(o, true, ""), config, settings, data, session, session_options);
    return t;
  }
#endif
  (void)attention;  // the CPU model has one attention (attention_for refused the other)
  set_up_cpu(t, o, config, settings, data, session, session_options);
  return t;
}

double gpu_memory_gib(bool use_cuda) {
#ifdef GPUDIRECT_HAVE_CUDA_TRAINING
  if (use_cuda) return static_cast<double>(train::cuda::device_memory_used()) / (1u << 30);
#endif
  (void)use_cuda;
  return 0;
}

}  // namespace gpudirect::launcher::train_command
