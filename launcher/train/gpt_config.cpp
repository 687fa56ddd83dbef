#include "train/gpt_config.hpp"

#include <stdexcept>
#include <string>

namespace gpudirect::train {
namespace {

GptConfig make(std::string name, int layers, int heads, int width, int seq_len, int vocab, int micro_batch) {
  GptConfig c;
  c.preset = std::move(name);
  c.layers = layers;
  c.heads = heads;
  c.width = width;
  c.seq_len = seq_len;
  c.vocab = vocab;
  c.micro_batch = micro_batch;
  return c;
}

void require_positive(const char* field, const char* flag, long long value) {
  if (value <= 0) {
    throw std::invalid_argument("gpudirect-launch train: " + std::string(field) + " is " + std::to_string(value) +
                                "; it must be at least 1 (set " + flag + ")");
  }
}

}  // namespace

GptConfig preset_config(std::string_view name) {
  if (name == "tiny") return make("tiny", 2, 4, 64, 64, 512, 4);
  if (name == "gpt2-124m") return make("gpt2-124m", 12, 12, 768, 1024, 50257, 8);
  if (name == "gpt3-5b") return make("gpt3-5b", 24, 32, 4096, 2048, 50257, 4);
  std::string known;
  for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("gpudirect-launch train: unknown preset '" + std::string(name) + "' (known presets: " + known + ")");
}

std::vector<std::string> preset_names() { return {"tiny", "gpt2-124m", "gpt3-5b"}; }

void validate(const GptConfig& c) {
  require_positive("layers", "--layers", c.layers);
  require_positive("heads", "--heads", c.heads);
  require_positive("width", "--width", c.width);
  require_positive("seq_len", "--seq-len", c.seq_len);
  require_positive("vocab", "--vocab", c.vocab);
  require_positive("micro_batch", "--micro-batch", c.micro_batch);
  require_positive("grad_accum", "--grad-accum", c.grad_accum);
  if (c.width % c.heads != 0) {
    throw std::invalid_argument("gpudirect-launch train: width " + std::to_string(c.width) + " is not divisible by heads " +
                                std::to_string(c.heads) +
                                " (each head gets width/heads channels; choose --width as a multiple of --heads)");
  }
  // Token ids are int32 and one batch's activations are indexed with size_t; guard the products that
  // overflow int arithmetic in callers before anything is allocated.
  const double tokens = static_cast<double>(c.micro_batch) * c.seq_len;
  if (tokens * c.vocab > 9.0e15) {
    throw std::invalid_argument("gpudirect-launch train: micro_batch x seq_len x vocab = " + std::to_string(tokens * c.vocab) +
                                " logits is too large (lower --micro-batch or --seq-len)");
  }
}

std::size_t parameter_count(const GptConfig& c) {
  const std::size_t C = static_cast<std::size_t>(c.width);
  const std::size_t per_layer = 12 * C * C + 13 * C;
  return static_cast<std::size_t>(c.vocab) * C + static_cast<std::size_t>(c.seq_len) * C + static_cast<std::size_t>(c.layers) * per_layer +
         2 * C;
}

double flops_per_token(const GptConfig& c) {
  return 6.0 * static_cast<double>(parameter_count(c)) + 6.0 * static_cast<double>(c.layers) * c.width * static_cast<double>(c.seq_len);
}

}  // namespace gpudirect::train
