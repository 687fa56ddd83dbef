#include <catch2/catch.hpp>

#include "train/gpt_config.hpp"

#include <stdexcept>

using namespace gpudirect::train;

TEST_CASE("train presets have the documented shapes", "[train]") {
  const GptConfig tiny = preset_config("tiny");
  CHECK(tiny.preset == "tiny");
  CHECK((tiny.layers == 2 && tiny.heads == 4 && tiny.width == 64 && tiny.seq_len == 64 && tiny.vocab == 512 && tiny.micro_batch == 4 &&
         tiny.grad_accum == 1));
  const GptConfig gpt2 = preset_config("gpt2-124m");
  CHECK(
      (gpt2.layers == 12 && gpt2.heads == 12 && gpt2.width == 768 && gpt2.seq_len == 1024 && gpt2.vocab == 50257 && gpt2.micro_batch == 8));
  const GptConfig big = preset_config("gpt3-5b");
  CHECK((big.layers == 24 && big.heads == 32 && big.width == 4096 && big.seq_len == 2048 && big.vocab == 50257 && big.micro_batch == 4));
  CHECK(preset_names() == std::vector<std::string>{"tiny", "gpt2-124m", "gpt3-5b"});
  for (const auto& name : preset_names()) CHECK_NOTHROW(validate(preset_config(name)));
}

TEST_CASE("an unknown preset names the known ones", "[train]") {
  CHECK_THROWS_WITH(preset_config("gpt4"), Catch::Contains("unknown preset 'gpt4'") && Catch::Contains("tiny, gpt2-124m, gpt3-5b"));
}

TEST_CASE("validate names the field that cannot work", "[train]") {
  auto with = [](auto change) {
    GptConfig c = preset_config("tiny");
    change(c);
    return c;
  };
  CHECK_THROWS_WITH(validate(with([](GptConfig& c) { c.layers = 0; })), Catch::Contains("layers is 0") && Catch::Contains("--layers"));
  CHECK_THROWS_WITH(validate(with([](GptConfig& c) { c.heads = -1; })), Catch::Contains("heads is -1"));
  CHECK_THROWS_WITH(validate(with([](GptConfig& c) { c.width = 0; })), Catch::Contains("width is 0"));
  CHECK_THROWS_WITH(validate(with([](GptConfig& c) { c.seq_len = 0; })), Catch::Contains("seq_len is 0"));
  CHECK_THROWS_WITH(validate(with([](GptConfig& c) { c.vocab = 0; })), Catch::Contains("vocab is 0"));
  CHECK_THROWS_WITH(validate(with([](GptConfig& c) { c.micro_batch = 0; })), Catch::Contains("micro_batch is 0"));
  CHECK_THROWS_WITH(validate(with([](GptConfig& c) { c.grad_accum = 0; })), Catch::Contains("grad_accum is 0"));
  CHECK_THROWS_WITH(validate(with([](GptConfig& c) { c.width = 66; })), Catch::Contains("width 66 is not divisible by heads 4"));
  CHECK_THROWS_AS(validate(with([](GptConfig& c) { c.width = 66; })), std::invalid_argument);
}

TEST_CASE("parameter count and FLOPs per token follow GPT-2's formulas", "[train]") {
  // GPT-2 small with a 50257 vocabulary and 1024 positions has 124,439,808 parameters.
  CHECK(parameter_count(preset_config("gpt2-124m")) == 124439808u);
  const GptConfig tiny = preset_config("tiny");
  const std::size_t C = 64;
  CHECK(parameter_count(tiny) == 512 * C + 64 * C + 2 * (12 * C * C + 13 * C) + 2 * C);
  CHECK(flops_per_token(tiny) == Approx(6.0 * static_cast<double>(parameter_count(tiny)) + 6.0 * 2 * 64 * 64));
  // NeMo's 5B shape: about 5.05e9 parameters with the 50257 vocabulary.
  CHECK(parameter_count(preset_config("gpt3-5b")) == Approx(5.047e9).epsilon(0.01));
}
