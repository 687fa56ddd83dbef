// The train command's option checks and derived settings (commands/train/train_options.hpp): each
// bad combination is refused as a usage error (exit 6) naming the option, and the schedule's
// defaults follow --help (min lr lr/10, warmup 10% of the schedule up to 100 steps, length --steps).
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "train/train_options.hpp"

using namespace gpudirect::launcher;
using namespace gpudirect::launcher::train_command;

TEST_CASE("train options: bad combinations are usage errors naming the option", "[train][command]") {
  CHECK_NOTHROW(check_options(TrainOptions{}));
  const auto refused = [](auto change, const char* words) {
    TrainOptions o;
    change(o);
    CHECK_THROWS_WITH(check_options(o), Catch::Contains(words));
    CHECK_THROWS_AS(check_options(o), UsageError);
  };
  refused([](TrainOptions& o) { o.steps = 0; }, "--steps must be at least 1");
  refused([](TrainOptions& o) { o.resume = true; }, "--resume needs --checkpoint");
  refused([](TrainOptions& o) { o.checkpoint_every = -1; }, "--checkpoint-every must be 0");
  refused([](TrainOptions& o) { o.checkpoint_every = 5; }, "--checkpoint-every needs --checkpoint");
  refused([](TrainOptions& o) { o.lr = 0; }, "--lr and the bucket sizes must be positive");
  refused([](TrainOptions& o) { o.bucket_mib = 0; }, "--lr and the bucket sizes must be positive");
  refused([](TrainOptions& o) { o.first_bucket_mib = -1; }, "--lr and the bucket sizes must be positive");
  refused([](TrainOptions& o) { o.backend = "gloo"; }, "--backend gloo: expected auto, libfabric or nccl");
  refused([](TrainOptions& o) { o.attention = "flash"; }, "--attention flash: expected reference or tensor-core");
  CHECK(kExitUsage == 6);
  CHECK(kExitPreempted == 10);
  CHECK(kExitDiverged == 8);
}

TEST_CASE("train options: a preset with overrides is named so, a bad shape is a usage error", "[train][command]") {
  TrainOptions o;
  CHECK(build_config(o).preset == "tiny");
  o.micro_batch = build_config(TrainOptions{}).micro_batch;  // the preset's own value: no override
  CHECK(build_config(o).preset == "tiny");
  o.layers = 3;
  CHECK(build_config(o).preset == "tiny+overrides");
  CHECK(build_config(o).layers == 3);
  o.heads = 3;  // the width 64 does not divide into 3 heads
  CHECK_THROWS_AS(build_config(o), UsageError);
  TrainOptions unknown;
  unknown.preset = "gpt5";
  CHECK_THROWS_WITH(build_config(unknown), Catch::StartsWith("--preset: "));
}

TEST_CASE("train options: the schedule's defaults and the bucket sizes in bytes", "[train][command]") {
  TrainOptions o;
  o.steps = 50;
  o.lr = 1e-3f;
  {
    const auto s = build_settings(o);
    CHECK(s.schedule.lr == 1e-3f);
    CHECK(s.schedule.min_lr == 1e-3f / 10);
    CHECK(s.schedule.total == 50);
    CHECK(s.schedule.warmup == 5);
    CHECK(s.bucket_bytes == 25u << 20);
    CHECK(s.first_bucket_bytes == 1u << 20);
    CHECK_FALSE(s.zero1);
  }
  o.steps = 5000;
  CHECK(build_settings(o).schedule.warmup == 100);
  o.lr_steps = 200;
  o.min_lr = 0;
  o.warmup = 0;
  o.zero1 = true;
  o.bucket_mib = 0.5;
  const auto s = build_settings(o);
  CHECK(s.schedule.total == 200);
  CHECK(s.schedule.min_lr == 0);
  CHECK(s.schedule.warmup == 0);
  CHECK(s.zero1);
  CHECK(s.bucket_bytes == 512u << 10);
}

TEST_CASE("train options: --attention defaults to the reference kernels, tensor-core is refused on the CPU model", "[train][command]") {
  using gpudirect::train::cuda::AttentionKind;
  TrainOptions o;
  CHECK(attention_for(o, true, "") == AttentionKind::reference);
  CHECK(attention_for(o, false, "") == AttentionKind::reference);
  o.attention = "tensor-core";
  CHECK(attention_for(o, true, "") == AttentionKind::tensor_core);
  CHECK_THROWS_AS(attention_for(o, false, "no CUDA device"), UsageError);
  CHECK_THROWS_WITH(attention_for(o, false, "no CUDA device"),
                    Catch::Contains("--attention tensor-core is a kernel of the CUDA model") && Catch::Contains("(no CUDA device)"));
  CHECK(gpudirect::train::cuda::attention_name(AttentionKind::tensor_core) == "tensor-core");
  CHECK(gpudirect::train::cuda::attention_name(AttentionKind::reference) == "reference");
}

TEST_CASE("train options: the CUDA fast paths are off by default and refused on the CPU model", "[train][command]") {
  TrainOptions o;
  CHECK(gpudirect::train::cuda::speed_names(speed_for(o, false, "")) == "none");
  o.speed.pad_vocab = true;
  CHECK(speed_for(o, true, "").pad_vocab);
  o.speed.multi_tensor_adamw = true;
  CHECK(speed_for(o, true, "").multi_tensor_adamw);
  CHECK(gpudirect::train::cuda::speed_names(speed_for(o, true, "")) == "pad-vocab, multi-tensor-adamw");
  CHECK_THROWS_WITH(speed_for(o, false, "no CUDA device"),
                    Catch::Contains("--pad-vocab is a switch of the CUDA model") && Catch::Contains("(no CUDA device)"));
}

TEST_CASE("train options: each fast path is one row of kSpeedSwitches: set alone, named alone, refused alone on the CPU model",
          "[train][command]") {
  using gpudirect::train::cuda::kSpeedSwitches;
  using gpudirect::train::cuda::speed_names;
  std::set<std::string> names;
  TrainOptions all;
  for (const auto& s : kSpeedSwitches) {
    CAPTURE(s.name);
    CHECK(names.insert(s.name).second);
    CHECK(std::string(s.help).starts_with("CUDA model: "));
    TrainOptions o;
    o.speed.*s.on = true;
    all.speed.*s.on = true;
    CHECK(speed_names(speed_for(o, true, "")) == s.name);  // a row pointing at another's member names that one
    CHECK_THROWS_WITH(speed_for(o, false, ""), Catch::Contains(std::string("--") + s.name + " is a switch of the CUDA model"));
  }
  CHECK(speed_names(all.speed) ==
        "pad-vocab, multi-tensor-adamw, vector-loads, nccl-high-priority, recompute, layernorm-all-sms, fused-classifier, gemm-epilogues");
}
