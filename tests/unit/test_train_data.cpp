// Training data: mock batches reproducible from the seed and different per rank and step, the same
// global batch whatever the rank count, and token files in llm.c's and nanoGPT's formats with clear
// refusals of missing, short and malformed files.
#include "train/data_source.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>

using namespace gpudirect::train;

namespace {

struct Batch {
  std::vector<std::int32_t> inputs, targets;
};

Batch take(DataSource& data, const BatchShape& shape, long step, int micro = 0) {
  Batch b;
  b.inputs.resize(static_cast<std::size_t>(shape.micro_batch * shape.seq_len));
  b.targets.resize(b.inputs.size());
  data.fill(step, micro, b.inputs, b.targets);
  return b;
}

BatchShape shape(int world, int rank, int micro_batch) { return BatchShape{world, rank, micro_batch, 1, 16, 100}; }

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gpudirect_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

void write_llmc(const std::string& path, const std::vector<std::uint16_t>& tokens, std::int32_t magic = 20240520, std::int32_t version = 1,
                long claimed = -1) {
  std::vector<std::int32_t> header(256, 0);
  header[0] = magic;
  header[1] = version;
  header[2] = static_cast<std::int32_t>(claimed >= 0 ? claimed : static_cast<long>(tokens.size()));
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()), 1024);
  out.write(reinterpret_cast<const char*>(tokens.data()), static_cast<std::streamsize>(tokens.size() * 2));
}

}  // namespace

TEST_CASE("mock data is reproducible, in range, and differs per rank, step and seed", "[train][data]") {
  for (const bool learnable : {true, false}) {
    const BatchShape r0 = shape(2, 0, 2), r1 = shape(2, 1, 2);
    auto a = make_mock_data(r0, 7, learnable), again = make_mock_data(r0, 7, learnable), other = make_mock_data(r1, 7, learnable),
         seeded = make_mock_data(r0, 8, learnable);
    const Batch first = take(*a, r0, 3);
    CHECK(take(*again, r0, 3).inputs == first.inputs);
    CHECK(take(*other, r1, 3).inputs != first.inputs);
    CHECK(take(*a, r0, 4).inputs != first.inputs);
    CHECK(take(*seeded, r0, 3).inputs != first.inputs);
    for (const auto t : first.inputs) REQUIRE((t >= 0 && t < 100));
    // targets are the inputs shifted by one
    for (int b = 0; b < 2; ++b)
      for (int t = 0; t + 1 < 16; ++t)
        REQUIRE(first.targets[static_cast<std::size_t>(b * 16 + t)] == first.inputs[static_cast<std::size_t>(b * 16 + t + 1)]);
  }
}

TEST_CASE("two ranks with micro-batch B/2 see the batch one rank with micro-batch B sees", "[train][data]") {
  const BatchShape one = shape(1, 0, 4), half0 = shape(2, 0, 2), half1 = shape(2, 1, 2);
  auto a = make_mock_data(one, 5, true), b0 = make_mock_data(half0, 5, true), b1 = make_mock_data(half1, 5, true);
  for (long step = 0; step < 3; ++step) {
    const Batch whole = take(*a, one, step);
    Batch joined = take(*b0, half0, step);
    const Batch second = take(*b1, half1, step);
    joined.inputs.insert(joined.inputs.end(), second.inputs.begin(), second.inputs.end());
    CHECK(joined.inputs == whole.inputs);
  }
}

TEST_CASE("learnable mock sequences follow their recurrence", "[train][data]") {
  const BatchShape s = shape(1, 0, 8);
  auto data = make_mock_data(s, 1, true);
  const Batch b = take(*data, s, 0);
  std::set<std::int32_t> distinct(b.inputs.begin(), b.inputs.end());
  CHECK(distinct.size() > 10);
  // Within a sequence, the same token is always followed by the same token.
  for (int seq = 0; seq < 8; ++seq) {
    std::map<std::int32_t, std::int32_t> next;
    for (int t = 0; t < 16; ++t) {
      const auto at = static_cast<std::size_t>(seq * 16 + t);
      auto [it, inserted] = next.emplace(b.inputs[at], b.targets[at]);
      REQUIRE(it->second == b.targets[at]);
    }
  }
}

TEST_CASE("llm.c .bin and raw uint16 token files give windows of the file", "[train][data]") {
  std::vector<std::uint16_t> tokens(200);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::uint16_t>(i % 97);
  const std::string bin = temp_file("llmc.bin"), raw = temp_file("raw.bin");
  write_llmc(bin, tokens);
  {
    std::ofstream out(raw, std::ios::binary);
    out.write(reinterpret_cast<const char*>(tokens.data()), static_cast<std::streamsize>(tokens.size() * 2));
  }
  for (const auto& path : {bin, raw}) {
    const BatchShape s = shape(2, 1, 2);
    auto data = make_token_file_data(s, path);
    const Batch b = take(*data, s, 0);
    // Rank 1's first sequence is global sequence 2: tokens [32, 48), targets [33, 49).
    CHECK(b.inputs[0] == 32);
    CHECK(b.targets[0] == 33);
    CHECK(b.inputs[16] == 48);
    // 199 / 16 = 12 windows: step 3's sequence 2 is window (3*4+2) % 12 = 2.
    const Batch wrapped = take(*data, s, 3);
    CHECK(wrapped.inputs[0] == 32);
  }
  CHECK_THAT(make_token_file_data(shape(1, 0, 1), bin)->describe(), Catch::Contains("llm.c"));
  CHECK_THAT(make_token_file_data(shape(1, 0, 1), raw)->describe(), Catch::Contains("raw uint16"));
  std::filesystem::remove(bin);
  std::filesystem::remove(raw);
}

TEST_CASE("missing, short and malformed token files are refused with the reason", "[train][data]") {
  const BatchShape s = shape(1, 0, 1);
  const std::string path = temp_file("bad.bin");
  std::filesystem::remove(path);
  CHECK_THROWS_WITH(make_token_file_data(s, path), Catch::Contains("cannot open") && Catch::Contains(path));

  std::vector<std::uint16_t> tokens(100, 3);
  write_llmc(path, tokens, 20240520, 2);
  CHECK_THROWS_WITH(make_token_file_data(s, path), Catch::Contains("version 2"));
  write_llmc(path, tokens, 20240520, 1, 500);
  CHECK_THROWS_WITH(make_token_file_data(s, path), Catch::Contains("truncated"));
  write_llmc(path, std::vector<std::uint16_t>(10, 3));
  CHECK_THROWS_WITH(make_token_file_data(s, path), Catch::Contains("fewer than one sequence"));
  write_llmc(path, std::vector<std::uint16_t>(100, 300));
  CHECK_THROWS_WITH(make_token_file_data(s, path), Catch::Contains("outside the vocabulary"));
  {
    std::ofstream out(path, std::ios::binary);
    out << "abc";
  }
  CHECK_THROWS_WITH(make_token_file_data(s, path), Catch::Contains("odd size"));
  { std::ofstream out(path, std::ios::binary); }
  CHECK_THROWS_WITH(make_token_file_data(s, path), Catch::Contains("fewer than one sequence"));
  std::filesystem::remove(path);
}
