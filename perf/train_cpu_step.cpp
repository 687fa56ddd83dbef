// Forward + backward step time (wall, and CPU time of all the process's threads) of the fp32 CPU GPT (make_cpu_model), for
// perf/train_cpu_vs_torch.sh. Usage: train_cpu_step [--preset NAME] [--layers L] [--heads H] [--width C] [--seq-len T] [--vocab V]
//                       [--batch B] [--threads N] [--steps S] [--warmup W]
// Prints one line: "ours ms_median=... ms_min=... cpu_ms_median=... tokens_per_s=... gflops=... threads=N".
#include "train/cpu/cpu_model.hpp"
#include "train/cpu/openmp_wait_policy.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace gpudirect::train;
  reexec_with_passive_openmp_wait(argv);  // as gpudirect-launch train does
  try {
    GptConfig config = preset_config("tiny");
    int threads = 0, steps = 10, warmup = 2;
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument("train_cpu_step: " + flag + " needs a value");
      const std::string value = argv[++i];
      auto number = [&] { return std::stoi(value); };
      if (flag == "--preset") {
        config = preset_config(value);
      } else if (flag == "--layers") {
        config.layers = number();
      } else if (flag == "--heads") {
        config.heads = number();
      } else if (flag == "--width") {
        config.width = number();
      } else if (flag == "--seq-len") {
        config.seq_len = number();
      } else if (flag == "--vocab") {
        config.vocab = number();
      } else if (flag == "--batch") {
        config.micro_batch = number();
      } else if (flag == "--threads") {
        threads = number();
      } else if (flag == "--steps") {
        steps = number();
      } else if (flag == "--warmup") {
        warmup = number();
      } else {
        throw std::invalid_argument("train_cpu_step: unknown flag " + flag + " (see the usage at the top of the source)");
      }
    }
    auto model = make_cpu_model(config, threads);
    const std::size_t n = static_cast<std::size_t>(config.micro_batch) * config.seq_len;
    std::mt19937 rng(1);
    std::uniform_int_distribution<std::int32_t> token(0, config.vocab - 1);
    std::vector<std::int32_t> inputs(n), targets(n);
    for (auto& t : inputs) t = token(rng);
    for (auto& t : targets) t = token(rng);

    std::vector<double> ms, cpu_ms;
    float loss = 0;
    for (int s = 0; s < warmup + steps; ++s) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::clock_t c0 = std::clock();
      model->zero_gradients();
      loss = model->forward_backward(inputs, targets, 1.0f, {});
      const double dt = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const double cpu = 1e3 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
      if (s >= warmup) {
        ms.push_back(dt);
        cpu_ms.push_back(cpu);
      }
    }
    std::sort(ms.begin(), ms.end());
    std::sort(cpu_ms.begin(), cpu_ms.end());
    const double median = ms[ms.size() / 2];
    std::printf("ours ms_median=%.2f ms_min=%.2f cpu_ms_median=%.2f tokens_per_s=%.0f gflops=%.2f threads=%d loss=%.4f\n", median,
                ms.front(), cpu_ms[cpu_ms.size() / 2], static_cast<double>(n) / (median / 1e3),
                flops_per_token(config) * static_cast<double>(n) / (median / 1e3) / 1e9, threads > 0 ? threads : default_cpu_threads(),
                static_cast<double>(loss));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
