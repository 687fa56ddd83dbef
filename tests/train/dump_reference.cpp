// Writes one forward/backward of the CPU model for an independent check (check_gradients.py):
//   OUT/reference.json  config, loss, threads, and every tensor's name, offset, count and shape
//   OUT/params.f32      the weights (our layout, little-endian fp32)
//   OUT/grads.f32       d(mean loss)/d(weights) from forward_backward with grad_scale 1
//   OUT/inputs.i32, OUT/targets.i32   the micro-batch (micro_batch x seq_len int32)
// The GPT-2 initial biases are 0 and norm weights 1; every parameter is perturbed here so that the
// check exercises those paths with general values.
// Usage: train_dump_reference OUT [preset] [threads]
#include "train/cpu/cpu_model.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

template <typename T>
void write_raw(const std::filesystem::path& path, const std::vector<T>& data) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(T)));
  if (!out) throw std::runtime_error("train_dump_reference: cannot write " + path.string());
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpudirect::train;
  if (argc < 2) {
    std::fprintf(stderr, "usage: train_dump_reference OUT_DIR [preset] [threads]\n");
    return 6;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    GptConfig config = preset_config(argc > 2 ? argv[2] : "tiny");
    const int threads = argc > 3 ? std::stoi(argv[3]) : 0;
    auto model = make_cpu_model(config, threads);

    std::mt19937 rng(20261122);
    std::normal_distribution<float> noise(0.0f, 0.05f);
    auto params = model->parameters();
    for (float& p : params) p += noise(rng);

    const std::size_t n = static_cast<std::size_t>(config.micro_batch) * config.seq_len;
    std::uniform_int_distribution<std::int32_t> token(0, config.vocab - 1);
    std::vector<std::int32_t> inputs(n), targets(n);
    for (auto& t : inputs) t = token(rng);
    for (auto& t : targets) t = token(rng);

    model->zero_gradients();
    const float loss = model->forward_backward(inputs, targets, 1.0f, {});

    nlohmann::json meta;
    meta["config"] = {{"preset", config.preset},
                      {"layers", config.layers},
                      {"heads", config.heads},
                      {"width", config.width},
                      {"seq_len", config.seq_len},
                      {"vocab", config.vocab},
                      {"micro_batch", config.micro_batch}};
    meta["loss"] = loss;
    meta["threads"] = threads;
    for (const auto& t : model->layout().tensors()) {
      meta["tensors"].push_back({{"name", t.name}, {"offset", t.offset}, {"count", t.count}, {"shape", t.shape}});
    }
    std::ofstream(dir / "reference.json") << meta.dump(1) << "\n";
    write_raw(dir / "params.f32", std::vector<float>(params.begin(), params.end()));
    auto grads = model->gradients();
    write_raw(dir / "grads.f32", std::vector<float>(grads.begin(), grads.end()));
    write_raw(dir / "inputs.i32", inputs);
    write_raw(dir / "targets.i32", targets);
    std::printf("train_dump_reference: %s preset, loss %.7f, %zu parameters -> %s\n", config.preset.c_str(), loss, params.size(),
                dir.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
