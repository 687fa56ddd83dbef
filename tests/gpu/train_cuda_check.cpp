// The CUDA model against the fp32 CPU reference, on a machine with a GPU:
//   1. the same initial weights on both (bit for bit);
//   2. one forward/backward of the same batch: the loss and every gradient tensor within the bf16
//      tolerances of train/cuda/tolerance.hpp, the GradientReady ranges in the CPU model's order,
//      forward() giving forward_backward()'s loss, and a second backward giving bit-identical gradients;
//   3. the device's AdamW step and sum of squares against AdamW::step and sum_of_squares on the same
//      random gradients (both fp32: within 1e-5 relative; the device contracts multiply-adds);
//   4. --steps N optimizer steps (lr 1e-2) of the Trainer on the CPU and on the CUDA backend (one rank each):
//      every step's loss within 2% and gradient norm within 10%, and the loss decrease over the run
//      within 10% (the per-step bounds alone would miss an update of the wrong size). These bounds are
//      estimates made without a GPU: if they fail by a little, look at the printed numbers first;
//   5. save after 3 steps, load into a fresh CUDA model and Trainer, continue: exactly the losses of
//      the uninterrupted CUDA run (no kernel uses atomics).
// --attention tensor-core runs all of that with the tensor-core attention, and first compares it
// with today's warp-per-row kernels (the reference): one attention layer on the same bf16 inputs,
// both against the CPU attention and against each other (relative L2 per output, bound 1e-2, an
// estimate: bf16 outputs and probabilities), and the whole model's loss and every gradient tensor
// against the CUDA model with the reference attention (the bf16 tolerances of 2.).
// Prints "SKIPPED: no CUDA device" and exits 0 where there is no GPU; exits 1 naming what differs.
// Usage: train_cuda_check [--preset tiny] [--micro-batch B] [--steps N] [--attention reference|tensor-core] [--device-only]
#include "bootstrap/session.hpp"
#include "comm/communicator_factory.hpp"
#include "train/cpu/attention.hpp"
#include "train/cpu/cpu_model.hpp"
#include "train/cuda/bf16.hpp"
#include "train/cuda/cuda_training.hpp"
#include "train/cuda/tolerance.hpp"
#include "train/data_source.hpp"
#include "train/host_backend.hpp"
#include "train/trainer.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <unistd.h>
#include <string>
#include <vector>

using namespace gpudirect;
using namespace gpudirect::train;

namespace {

int failures = 0;

void verdict(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "  ok  " : "  FAIL", what.c_str());
  if (!ok) ++failures;
}

bootstrap::Session single_rank_session() {
  bootstrap::Session session;
  session.context.hostname = "localhost";
  session.context.origin = "single";
  return session;
}

struct Ranges {
  std::vector<std::pair<std::size_t, std::size_t>> seen;
  GradientReady callback() {
    return [this](std::size_t offset, std::size_t count) { seen.emplace_back(offset, count); };
  }
};

cuda::AttentionKind attention = cuda::AttentionKind::reference;  // of the CUDA model under test (--attention)
cuda::SpeedOptions speed;                                        // its fast paths (--gemm-epilogues)

// One attention layer on the device, both kinds, against the CPU attention on the same bf16-rounded
// inputs and against each other. T 67 (not a multiple of a warp or a block), hs 64 (gpt2-124m's).
void compare_attention_layer() {
  const int B = 2, T = 67, C = 192, NH = 3;
  std::printf("one attention layer (B%d T%d C%d NH%d): tensor-core and reference kernels against the CPU, and each other\n", B, T, C, NH);
  const std::size_t btc = static_cast<std::size_t>(B) * T * C;
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> qkv(3 * btc), dout(btc);
  for (auto& x : qkv) x = cuda::round_to_bf16(normal(rng));
  for (auto& x : dout) x = cuda::round_to_bf16(normal(rng));
  std::vector<float> cpu_out(btc), att(static_cast<std::size_t>(B) * NH * T * T), scratch(static_cast<std::size_t>(T) * T);
  std::vector<float> cpu_dqkv(3 * btc, 0.0f);
  cpu::attention_forward(cpu_out.data(), att.data(), qkv.data(), B, T, C, NH, 1);
  cpu::attention_backward(cpu_dqkv.data(), scratch.data(), dout.data(), qkv.data(), att.data(), B, T, C, NH, 1);
  std::vector<float> out[2], dqkv[2];
  const cuda::AttentionKind kinds[2] = {cuda::AttentionKind::reference, cuda::AttentionKind::tensor_core};
  for (int i = 0; i < 2; ++i) {
    out[i].resize(btc);
    dqkv[i].resize(3 * btc);
    cuda::attention_on_device(kinds[i], qkv, dout, B, T, C, NH, out[i], dqkv[i]);
  }
  const auto check = [](const std::vector<float>& want, const std::vector<float>& got, const std::string& what) {
    const cuda::Comparison c = cuda::compare(want, got);
    verdict(c.finite && c.relative_l2 <= 1e-2, what + ": " + cuda::describe(c) + " (bound 1e-2)");
  };
  for (int i = 0; i < 2; ++i) {
    const std::string name = cuda::attention_name(kinds[i]);
    check(cpu_out, out[i], name + " out against the CPU");
    check(cpu_dqkv, dqkv[i], name + " dqkv against the CPU");
  }
  check(out[0], out[1], "tensor-core out against the reference kernels");
  check(dqkv[0], dqkv[1], "tensor-core dqkv against the reference kernels");
}

// The whole model's loss and every gradient tensor, CUDA with the tensor-core attention against CUDA
// with the reference kernels.
void compare_attention_in_model(const GptConfig& config, const cuda::Tolerance& tolerance) {
  std::printf("one forward/backward, preset %s: tensor-core attention against the reference kernels\n", config.preset.c_str());
  auto reference = cuda::make_cuda_model(config, cuda::AttentionKind::reference);
  auto tensor_core = cuda::make_cuda_model(config, cuda::AttentionKind::tensor_core);
  const BatchShape shape{1, 0, config.micro_batch, 1, config.seq_len, config.vocab};
  auto data = make_mock_data(shape, config.seed, true);
  std::vector<std::int32_t> inputs(static_cast<std::size_t>(config.micro_batch) * config.seq_len), targets(inputs.size());
  data->fill(0, 0, inputs, targets);
  reference->zero_gradients();
  tensor_core->zero_gradients();
  const float want_loss = reference->forward_backward(inputs, targets, 1.0f, {});
  const float got_loss = tensor_core->forward_backward(inputs, targets, 1.0f, {});
  char line[200];
  std::snprintf(line, sizeof line, "loss: reference %.6f, tensor-core %.6f (within %.0e relative)", want_loss, got_loss,
                tolerance.loss_relative);
  verdict(cuda::loss_within(want_loss, got_loss, tolerance), line);
  const std::vector<float> want(reference->gradients().begin(), reference->gradients().end());
  const std::vector<float> got(tensor_core->gradients().begin(), tensor_core->gradients().end());
  double worst = 0;
  for (const TensorSpan& t : reference->layout().tensors()) {
    const cuda::Comparison c = cuda::compare(std::span(want).subspan(t.offset, t.count), std::span(got).subspan(t.offset, t.count));
    worst = std::max(worst, c.relative_l2);
    verdict(cuda::within(c, tolerance), "gradient " + t.name + ", tensor-core vs reference: " + cuda::describe(c));
  }
  std::printf("  worst gradient relative L2, tensor-core vs reference: %.3e (bound %.0e)\n", worst, tolerance.relative_l2);
}

void compare_one_backward(const GptConfig& config, const cuda::Tolerance& tolerance) {
  std::printf("one forward/backward, preset %s (L%d H%d C%d T%d V%d B%d), %s attention\n", config.preset.c_str(), config.layers,
              config.heads, config.width, config.seq_len, config.vocab, config.micro_batch, cuda::attention_name(attention).c_str());
  auto cpu = make_cpu_model(config, 0);
  auto gpu = cuda::make_cuda_model(config, attention, speed);
  const std::vector<float> cpu_params(cpu->parameters().begin(), cpu->parameters().end());
  const std::span<float> gpu_params = gpu->parameters();
  verdict(std::equal(cpu_params.begin(), cpu_params.end(), gpu_params.begin(), gpu_params.end()), "initial parameters identical");

  const BatchShape shape{1, 0, config.micro_batch, 1, config.seq_len, config.vocab};
  auto data = make_mock_data(shape, config.seed, true);
  std::vector<std::int32_t> inputs(static_cast<std::size_t>(config.micro_batch) * config.seq_len), targets(inputs.size());
  data->fill(0, 0, inputs, targets);

  Ranges cpu_ranges, gpu_ranges;
  cpu->zero_gradients();
  gpu->zero_gradients();
  const float cpu_loss = cpu->forward_backward(inputs, targets, 1.0f, cpu_ranges.callback());
  const float gpu_loss = gpu->forward_backward(inputs, targets, 1.0f, gpu_ranges.callback());
  char line[200];
  std::snprintf(line, sizeof line, "loss: CPU %.6f, CUDA %.6f (within %.0e relative)", cpu_loss, gpu_loss, tolerance.loss_relative);
  verdict(cuda::loss_within(cpu_loss, gpu_loss, tolerance), line);
  verdict(cpu_ranges.seen == gpu_ranges.seen,
          "GradientReady ranges in the CPU model's order (" + std::to_string(gpu_ranges.seen.size()) + ")");

  const std::vector<float> cpu_grads(cpu->gradients().begin(), cpu->gradients().end());
  const std::vector<float> gpu_grads(gpu->gradients().begin(), gpu->gradients().end());
  double worst = 0;
  for (const TensorSpan& t : cpu->layout().tensors()) {
    const cuda::Comparison c =
        cuda::compare(std::span(cpu_grads).subspan(t.offset, t.count), std::span(gpu_grads).subspan(t.offset, t.count));
    worst = std::max(worst, c.relative_l2);
    verdict(cuda::within(c, tolerance), "gradient " + t.name + ": " + cuda::describe(c));
  }
  std::printf("  worst gradient relative L2: %.3e (bound %.0e)\n", worst, tolerance.relative_l2);

  const float forward_only = gpu->forward(inputs, targets);
  verdict(forward_only == gpu_loss, "CUDA forward() gives forward_backward()'s loss exactly");
  gpu->zero_gradients();
  gpu->forward_backward(inputs, targets, 1.0f, {});
  const std::span<float> again = gpu->gradients();
  verdict(std::equal(gpu_grads.begin(), gpu_grads.end(), again.begin(), again.end()), "a second backward gives bit-identical gradients");
}

void compare_optimizer(const GptConfig& config) {
  std::printf("AdamW and the sum of squares: device kernels against the CPU code, 3 steps on random gradients\n");
  const ParameterLayout layout(config);
  const std::size_t n = layout.total();
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> params(n), grads(n);
  for (auto& p : params) p = 0.02f * normal(rng);
  AdamWSettings settings;
  AdamW cpu(layout, {{0, n}}, settings);
  std::vector<float> gpu_params = params, m(n, 0.0f), v(n, 0.0f);
  double worst = 0;
  for (long t = 1; t <= 3; ++t) {
    for (auto& g : grads) g = 0.1f * normal(rng);
    cpu.step(params, grads, 1e-3f, 0.7f, t);
    cuda::adamw_step_on_device(layout, settings, gpu_params, grads, m, v, 1e-3f, 0.7f, t);
    // Relative to |p| + lr: an element near zero still moves by about lr per step.
    for (std::size_t i = 0; i < n; ++i)
      worst = std::max(worst, std::fabs(static_cast<double>(gpu_params[i]) - params[i]) / (std::fabs(params[i]) + 1e-3));
  }
  const cuda::Comparison cm = cuda::compare(cpu.first_moment(), m), cv = cuda::compare(cpu.second_moment(), v);
  char line[200];
  std::snprintf(line, sizeof line, "AdamW parameters: worst difference relative to |p| + lr %.2e (bound 1e-5)", worst);
  verdict(worst <= 1e-5, line);
  verdict(cm.relative_l2 <= 1e-5 && cv.relative_l2 <= 1e-5, "AdamW moments: m " + cuda::describe(cm) + "; v " + cuda::describe(cv));
  const double want = sum_of_squares(grads), got = cuda::sum_of_squares_on_device(grads);
  std::snprintf(line, sizeof line, "sum of squares: CPU %.12g, device %.12g (bound 1e-9 relative)", want, got);
  verdict(std::fabs(got - want) <= 1e-9 * want, line);
}

struct Run {
  std::vector<StepResult> steps;
  std::vector<float> parameters;
};

TrainSettings step_settings(int steps) {
  TrainSettings settings;
  settings.schedule = {1e-2f, 1e-3f, 1, steps};
  return settings;
}

void compare_steps(const GptConfig& config, int steps) {
  std::printf("%d AdamW steps, one rank, preset %s\n", steps, config.preset.c_str());
  bootstrap::Session session = single_rank_session();
  const BatchShape shape{1, 0, config.micro_batch, config.grad_accum, config.seq_len, config.vocab};
  const TrainSettings settings = step_settings(steps);

  Run cpu_run, gpu_run;
  std::vector<float> initial;
  {
    auto host = comm::make_communicator({"libfabric", std::chrono::milliseconds(30000)}, session);
    auto data = make_mock_data(shape, config.seed, true);
    auto model = make_cpu_model(config, 0);
    initial.assign(model->parameters().begin(), model->parameters().end());
    Trainer trainer(*model, *data, settings, make_host_backend(*model, *host, settings));
    for (int s = 0; s < steps; ++s) cpu_run.steps.push_back(trainer.step(false));
    cpu_run.parameters.assign(model->parameters().begin(), model->parameters().end());
  }
  auto nccl = comm::make_communicator({"nccl", std::chrono::milliseconds(30000)}, session);
  const std::string path = (std::filesystem::temp_directory_path() / ("train_cuda_check." + std::to_string(::getpid()) + ".ckpt")).string();
  {
    auto data = make_mock_data(shape, config.seed, true);
    auto model = cuda::make_cuda_model(config, attention, speed);
    Trainer trainer(*model, *data, settings, cuda::make_cuda_backend(*model, *nccl, settings));
    for (int s = 0; s < steps; ++s) {
      gpu_run.steps.push_back(trainer.step(false));
      if (s == 2) trainer.save_checkpoint(path, data->describe());
    }
    gpu_run.parameters.assign(model->parameters().begin(), model->parameters().end());
  }
  for (int s = 0; s < steps; ++s) {
    const StepResult& c = cpu_run.steps[static_cast<std::size_t>(s)];
    const StepResult& g = gpu_run.steps[static_cast<std::size_t>(s)];
    char line[200];
    std::snprintf(line, sizeof line, "step %d: loss CPU %.6f CUDA %.6f, grad norm CPU %.5f CUDA %.5f", s + 1, c.loss, g.loss, c.grad_norm,
                  g.grad_norm);
    const bool ok = std::fabs(g.loss - c.loss) <= 2e-2 * std::fabs(c.loss) && std::fabs(g.grad_norm - c.grad_norm) <= 1e-1 * c.grad_norm;
    verdict(ok, line);
  }
  const double cpu_drop = cpu_run.steps.front().loss - cpu_run.steps.back().loss;
  const double gpu_drop = gpu_run.steps.front().loss - gpu_run.steps.back().loss;
  char line[200];
  std::snprintf(line, sizeof line, "loss decrease over %d steps: CPU %.4f, CUDA %.4f (within 10%% + 0.01)", steps, cpu_drop, gpu_drop);
  verdict(std::isfinite(gpu_drop) && std::fabs(gpu_drop - cpu_drop) <= 0.1 * std::fabs(cpu_drop) + 0.01, line);
  std::vector<float> cpu_update(initial.size()), gpu_update(initial.size());
  for (std::size_t i = 0; i < initial.size(); ++i) {
    cpu_update[i] = cpu_run.parameters[i] - initial[i];
    gpu_update[i] = gpu_run.parameters[i] - initial[i];
  }
  // Information, not a check: AdamW's first steps move every element by about lr whatever the size of
  // its gradient, so elements whose gradient is at bf16 noise level may move the other way.
  std::printf("  info: total parameter update, CUDA against CPU: %s\n", cuda::describe(cuda::compare(cpu_update, gpu_update)).c_str());

  if (steps > 3) {
    auto data = make_mock_data(shape, config.seed, true);
    auto model = cuda::make_cuda_model(config, attention, speed);
    Trainer trainer(*model, *data, settings, cuda::make_cuda_backend(*model, *nccl, settings));
    trainer.load_checkpoint(path, data->describe());
    bool same = trainer.next_step() == 3;
    while (trainer.next_step() < steps) {
      const StepResult r = trainer.step(false);
      same = same && r.loss == gpu_run.steps[static_cast<std::size_t>(r.step)].loss;
    }
    verdict(same, "saved after step 3, loaded into a fresh CUDA model: the remaining losses are exactly the uninterrupted run's");
  }
  std::filesystem::remove(path);
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset = "tiny";
  int micro_batch = 0, steps = 6;
  bool device_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--preset" && i + 1 < argc)
      preset = argv[++i];
    else if (arg == "--micro-batch" && i + 1 < argc)
      micro_batch = std::atoi(argv[++i]);
    else if (arg == "--steps" && i + 1 < argc)
      steps = std::atoi(argv[++i]);
    else if (arg == "--attention" && i + 1 < argc && cuda::parse_attention(argv[i + 1]))
      attention = *cuda::parse_attention(argv[++i]);
    else if (arg == "--gemm-epilogues")
      speed.gemm_epilogues = true;
    else if (arg == "--device-only")
      device_only = true;
    else {
      std::fprintf(stderr,
                   "train_cuda_check: unknown argument '%s' (usage: train_cuda_check [--preset NAME] [--micro-batch B] [--steps N] "
                   "[--attention reference|tensor-core] [--gemm-epilogues] [--device-only])\n",
                   arg.c_str());
      return 6;
    }
  }
  // cuBLAS is opened with dlopen: say whether it loads even where there is no GPU to use it on.
  const std::string cublas = cuda::cublas_problem();
  std::printf("train_cuda_check: cuBLAS %s\n", cublas.empty() ? "loads" : cublas.c_str());
  const std::string problem = cuda::device_problem();
  if (!problem.empty()) {
    std::printf("train_cuda_check: SKIPPED: no CUDA device (%s)\n", problem.c_str());
    return 0;
  }
  try {
    GptConfig config = preset_config(preset);
    if (micro_batch > 0) config.micro_batch = micro_batch;
    if (!cublas.empty()) return 1;
    const cuda::DeviceInfo device = cuda::select_device(0);
    std::printf("train_cuda_check: %s [%s]\n", device.name.c_str(), device.pci_bus.c_str());
    if (device_only) return 0;
    if (attention == cuda::AttentionKind::tensor_core) {
      compare_attention_layer();
      compare_attention_in_model(config, cuda::Tolerance{});
    }
    compare_one_backward(config, cuda::Tolerance{});
    compare_optimizer(config);
    if (steps > 0) compare_steps(config, steps);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_cuda_check: %s\n", e.what());
    return 1;
  }
  std::printf("train_cuda_check: %s\n", failures == 0 ? "PASSED" : (std::to_string(failures) + " check(s) FAILED").c_str());
  return failures == 0 ? 0 : 1;
}
