// Checkpoints: round trip, refusal of corrupt, truncated, foreign and mismatched files, the previous
// file surviving a failed write, and a resumed run reproducing an uninterrupted one exactly.
#include "comm/host_communicator.hpp"
#include "comm/transport/loopback_transport.hpp"
#include "fake_train_model.hpp"
#include "train/checkpoint.hpp"
#include "train/exclusive_file.hpp"
#include "train/host_backend.hpp"
#include "train/trainer.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>

using namespace gpudirect;
using namespace gpudirect::train;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gpudirect_ckpt_" + std::to_string(::getpid()) + "_" + name)).string();
}

CheckpointHeader sample_header(std::size_t n) {
  CheckpointHeader h;
  h.config = preset_config("tiny");
  h.step = 42;
  h.world = 2;
  h.zero1 = true;
  h.data = "mock (learnable)";
  h.parameters = n;
  h.schedule = {1e-3f, 1e-4f, 3, 50};
  h.grad_clip = 1.0f;
  return h;
}

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("a checkpoint reads back exactly what was written", "[train][checkpoint]") {
  const std::string path = temp_path("roundtrip");
  std::vector<float> p(1000), m(1000), v(1000);
  for (std::size_t i = 0; i < p.size(); ++i) {
    p[i] = static_cast<float>(i) * 0.5f;
    m[i] = -static_cast<float>(i);
    v[i] = 1.0f / static_cast<float>(i + 1);
  }
  write_checkpoint(path, sample_header(p.size()), p, m, v);
  const Checkpoint c = read_checkpoint(path);
  CHECK(c.header.step == 42);
  CHECK(c.header.world == 2);
  CHECK(c.header.zero1);
  CHECK(c.header.config.layers == preset_config("tiny").layers);
  CHECK(c.header.schedule.total == 50);
  CHECK(c.parameters == p);
  CHECK(c.first_moment == m);
  CHECK(c.second_moment == v);
  std::filesystem::remove(path);
}

TEST_CASE("corrupt, truncated, foreign and missing checkpoints are refused", "[train][checkpoint]") {
  const std::string path = temp_path("damaged");
  std::vector<float> p(300, 1.0f);
  write_checkpoint(path, sample_header(p.size()), p, p, p);
  const std::vector<char> good = read_bytes(path);

  std::vector<char> flipped = good;
  flipped[good.size() / 2] ^= 0x01;
  write_bytes(path, flipped);
  CHECK_THROWS_WITH(read_checkpoint(path), Catch::Contains("checksum mismatch"));

  for (const std::size_t keep : {good.size() - 1, good.size() - 16, good.size() / 2, std::size_t{10}, std::size_t{0}}) {
    write_bytes(path, std::vector<char>(good.begin(), good.begin() + static_cast<long>(keep)));
    CHECK_THROWS_WITH(read_checkpoint(path), Catch::Contains("truncated"));
  }
  std::vector<char> longer = good;
  longer.push_back('x');
  write_bytes(path, longer);
  CHECK_THROWS_WITH(read_checkpoint(path), Catch::Contains("after the end marker"));

  write_bytes(path, std::vector<char>(100, 'z'));
  CHECK_THROWS_WITH(read_checkpoint(path), Catch::Contains("not a gpudirect-launch train checkpoint"));
  std::filesystem::remove(path);
  CHECK_THROWS_WITH(read_checkpoint(path), Catch::Contains("cannot open"));
}

TEST_CASE("a checkpoint from other settings is refused naming the field", "[train][checkpoint]") {
  const CheckpointHeader saved = sample_header(10);
  CheckpointHeader run = saved;
  CHECK_NOTHROW(check_compatible(saved, run, "x"));
  run.zero1 = false;  // the moments are stored in full: ZeRO-1 may be switched
  CHECK_NOTHROW(check_compatible(saved, run, "x"));
  run = saved;
  run.config.layers += 1;
  CHECK_THROWS_WITH(check_compatible(saved, run, "x"), Catch::Contains("--layers"));
  run = saved;
  run.world = 4;
  CHECK_THROWS_WITH(check_compatible(saved, run, "x"), Catch::Contains("ranks 2") && Catch::Contains("this run has 4"));
  run = saved;
  run.data = "other.bin";
  CHECK_THROWS_WITH(check_compatible(saved, run, "x"), Catch::Contains("--data"));
  run = saved;
  run.config.micro_batch = 1;
  CHECK_THROWS_WITH(check_compatible(saved, run, "x"), Catch::Contains("--micro-batch"));
}

TEST_CASE("a failed write leaves the previous checkpoint valid and no temporary file", "[train][checkpoint]") {
  const std::string dir = temp_path("dir");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/state.ckpt";
  std::vector<float> p(100, 2.0f);
  write_checkpoint(path, sample_header(p.size()), p, p, p);
  // A header that does not match the buffers makes the writer fail part way.
  std::vector<float> short_buffer(50, 3.0f);
  CHECK_THROWS_AS(write_checkpoint(path, sample_header(p.size()), short_buffer, short_buffer, short_buffer), CheckpointError);
  // A stale temporary file from a writer that died is ignored.
  write_bytes(dir + "/.state.ckpt.tmp.12345", std::vector<char>(7, 'x'));
  const Checkpoint c = read_checkpoint(path);
  CHECK(c.parameters == p);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  CHECK(files == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a link planted at the old temporary name of a checkpoint is not followed", "[train][checkpoint][security]") {
  // The writer used to create ".state.ckpt.tmp.<pid>" with O_TRUNC: another user who can write to
  // the directory could plant a link there and have the checkpoint written over a file of theirs
  // choosing (here: the victim's).
  const std::string dir = temp_path("links");
  std::filesystem::create_directories(dir);
  const std::string victim = temp_path("victim");
  write_bytes(victim, {'m', 'i', 'n', 'e'});
  const std::string path = dir + "/state.ckpt";
  for (const std::string& name :
       std::vector<std::string>{".state.ckpt.tmp." + std::to_string(::getpid()), ".state.ckpt.tmp.0", ".state.ckpt.tmp"})
    std::filesystem::create_symlink(victim, dir + "/" + name);
  std::vector<float> p(100, 2.0f);
  write_checkpoint(path, sample_header(p.size()), p, p, p);
  CHECK(read_bytes(victim) == std::vector<char>{'m', 'i', 'n', 'e'});
  CHECK_FALSE(std::filesystem::is_symlink(path));
  CHECK(read_checkpoint(path).parameters == p);
  std::size_t files = 0;  // the checkpoint and the three links: no temporary file left
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  CHECK(files == 4);
  std::filesystem::remove_all(dir);
  std::filesystem::remove(victim);
}

TEST_CASE("a new file is created only where nothing is, never through a link, under a random name", "[train][checkpoint][security]") {
  const std::string dir = temp_path("exclusive");
  std::filesystem::create_directories(dir);
  const std::string victim = dir + "/victim";
  write_bytes(victim, {'m', 'i', 'n', 'e'});
  std::filesystem::create_symlink(victim, dir + "/link");
  std::filesystem::create_symlink(dir + "/nothing-here", dir + "/dangling");
  for (const char* name : {"/link", "/dangling", "/victim"}) {
    errno = 0;
    CHECK(create_exclusively(dir + name, 0644) == -1);
    CHECK(errno == EEXIST);
  }
  CHECK(read_bytes(victim) == std::vector<char>{'m', 'i', 'n', 'e'});
  CHECK_FALSE(std::filesystem::exists(dir + "/nothing-here"));
  std::set<std::string> names;
  for (int i = 0; i < 20; ++i) {
    const NewFile file = create_unique_file(dir, ".x.tmp.", 0600);
    REQUIRE(file.fd >= 0);
    ::close(file.fd);
    const std::string name = std::filesystem::path(file.path).filename().string();
    CHECK(name.size() == std::string(".x.tmp.").size() + 16);
    CHECK(name.find_first_not_of("0123456789abcdef", 7) == std::string::npos);
    names.insert(name);
  }
  CHECK(names.size() == 20);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a checkpoint that is no regular file, or another user's, is refused", "[train][checkpoint][security]") {
  const std::string dir = temp_path("foreign");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/state.ckpt";
  // A FIFO with something in it: the old reader opened it (or, empty, blocked for ever) and read on.
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  const int writer = ::open(path.c_str(), O_RDWR | O_NONBLOCK);
  REQUIRE(writer >= 0);
  REQUIRE(::write(writer, "xxxxxxxxxxxxxxxx", 16) == 16);
  CHECK_THROWS_WITH(read_checkpoint(path), Catch::Contains("not a regular file"));
  ::close(writer);
  std::filesystem::remove(path);

  std::vector<float> p(100, 2.0f);
  write_checkpoint(path, sample_header(p.size()), p, p, p);
  if (::geteuid() != 0) {
    WARN("not root: the refusal of another user's checkpoint is not tested (it needs chown)");
  } else {
    REQUIRE(::chown(path.c_str(), 65534, 65534) == 0);  // nobody's now, as if another user had put it there
    CHECK_THROWS_WITH(read_checkpoint(path), Catch::Contains("belongs to uid 65534, not to this run's user (uid 0)"));
    // Through a link of one's own, the file's owner still counts.
    std::filesystem::create_symlink(path, dir + "/latest.ckpt");
    CHECK_THROWS_WITH(read_checkpoint(dir + "/latest.ckpt"), Catch::Contains("belongs to uid 65534"));
    REQUIRE(::chown(path.c_str(), 0, 0) == 0);
    CHECK(read_checkpoint(dir + "/latest.ckpt").parameters == p);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("stopping, saving and resuming gives exactly the losses of an uninterrupted run", "[train][checkpoint]") {
  const GptConfig config = preset_config("tiny");
  const BatchShape shape{1, 0, config.micro_batch, config.grad_accum, config.seq_len, config.vocab};
  TrainSettings settings;
  settings.schedule = {1e-2f, 1e-3f, 2, 8};
  const std::string path = temp_path("resume");
  auto comm = comm::make_host_communicator(std::make_unique<comm::LoopbackTransport>(), "loopback");
  auto data = make_mock_data(shape, config.seed, true);

  std::vector<double> straight;
  {
    testing::FakeModel model(config);
    Trainer trainer(model, *data, settings, make_host_backend(model, *comm, settings));
    for (int i = 0; i < 8; ++i) straight.push_back(trainer.step(false).loss);
  }
  std::vector<double> resumed;
  {
    testing::FakeModel model(config);
    Trainer trainer(model, *data, settings, make_host_backend(model, *comm, settings));
    for (int i = 0; i < 3; ++i) resumed.push_back(trainer.step(false).loss);
    trainer.save_checkpoint(path, data->describe());
  }
  {
    testing::FakeModel model(config);  // zeroed weights: the checkpoint must replace them
    std::fill(model.parameters().begin(), model.parameters().end(), 0.0f);
    Trainer trainer(model, *data, settings, make_host_backend(model, *comm, settings));
    trainer.load_checkpoint(path, data->describe());
    CHECK(trainer.next_step() == 3);
    while (trainer.next_step() < 8) resumed.push_back(trainer.step(false).loss);
    CHECK_THROWS_WITH(trainer.load_checkpoint(path, "another data set"), Catch::Contains("--data"));
  }
  REQUIRE(resumed.size() == straight.size());
  for (std::size_t i = 0; i < straight.size(); ++i) CHECK(resumed[i] == straight[i]);
  CHECK(straight.back() != straight.front());  // the steps did change the weights
  std::filesystem::remove(path);
}
