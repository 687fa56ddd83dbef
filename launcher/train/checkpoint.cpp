#include "train/checkpoint.hpp"

#include "train/exclusive_file.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace gpudirect::train {

namespace {

constexpr char kMagic[8] = {'G', 'D', 'T', 'R', 'A', 'I', 'N', '1'};
constexpr char kEndMagic[8] = {'G', 'D', 'T', 'R', 'E', 'N', 'D', '1'};
constexpr std::uint32_t kVersion = 1;

// FNV-1a over 64-bit words (and the tail bytes): cheap enough for GiB-sized files, and any flipped
// or missing byte changes it.
class Checksum {
 public:
  void add(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) {
      word_ |= static_cast<std::uint64_t>(p[i]) << (8 * filled_);
      if (++filled_ == 8) flush();
    }
  }
  std::uint64_t value() {
    if (filled_ > 0) flush();
    return hash_;
  }

 private:
  void flush() {
    hash_ = (hash_ ^ word_) * 1099511628211ULL;
    word_ = 0;
    filled_ = 0;
  }
  std::uint64_t hash_ = 1469598103934665603ULL, word_ = 0;
  int filled_ = 0;
};

nlohmann::json to_json(const CheckpointHeader& h) {
  const GptConfig& c = h.config;
  return {
      {"config",
       {{"preset", c.preset},
        {"layers", c.layers},
        {"heads", c.heads},
        {"width", c.width},
        {"seq_len", c.seq_len},
        {"vocab", c.vocab},
        {"micro_batch", c.micro_batch},
        {"grad_accum", c.grad_accum},
        {"seed", c.seed}}},
      {"step", h.step},
      {"world", h.world},
      {"zero1", h.zero1},
      {"data", h.data},
      // The data order and the mock generator are functions of (seed, step, world): the next
      // batch is fully determined by these, so they are the data position and RNG state.
      {"data_position", {{"next_step", h.step}, {"sequences_per_step", static_cast<long>(h.world) * c.micro_batch * c.grad_accum}}},
      {"rng", {{"seed", c.seed}}},
      {"parameters", h.parameters},
      {"adamw", {{"beta1", h.adamw.beta1}, {"beta2", h.adamw.beta2}, {"epsilon", h.adamw.epsilon}, {"weight_decay", h.adamw.weight_decay}}},
      {"schedule", {{"lr", h.schedule.lr}, {"min_lr", h.schedule.min_lr}, {"warmup", h.schedule.warmup}, {"total", h.schedule.total}}},
      {"grad_clip", h.grad_clip}};
}

CheckpointHeader from_json(const nlohmann::json& j) {
  CheckpointHeader h;
  const auto& c = j.at("config");
  h.config.preset = c.at("preset").get<std::string>();
  h.config.layers = c.at("layers").get<int>();
  h.config.heads = c.at("heads").get<int>();
  h.config.width = c.at("width").get<int>();
  h.config.seq_len = c.at("seq_len").get<int>();
  h.config.vocab = c.at("vocab").get<int>();
  h.config.micro_batch = c.at("micro_batch").get<int>();
  h.config.grad_accum = c.at("grad_accum").get<int>();
  h.config.seed = c.at("seed").get<std::uint64_t>();
  h.step = j.at("step").get<long>();
  h.world = j.at("world").get<int>();
  h.zero1 = j.at("zero1").get<bool>();
  h.data = j.at("data").get<std::string>();
  h.parameters = j.at("parameters").get<std::size_t>();
  const auto& a = j.at("adamw");
  h.adamw = {a.at("beta1").get<float>(), a.at("beta2").get<float>(), a.at("epsilon").get<float>(), a.at("weight_decay").get<float>()};
  const auto& s = j.at("schedule");
  h.schedule = {s.at("lr").get<float>(), s.at("min_lr").get<float>(), s.at("warmup").get<int>(), s.at("total").get<int>()};
  h.grad_clip = j.at("grad_clip").get<float>();
  return h;
}

class File {
 public:
  // Takes over an open descriptor.
  File(int fd, const std::string& path) : path_(path), fd_(fd) {}
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  void write(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const char*>(data);
    while (bytes > 0) {
      const ssize_t n = ::write(fd_, p, bytes);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw CheckpointError("checkpoint " + path_ + ": write failed (" + std::strerror(errno) + "); check free space and permissions");
      p += n;
      bytes -= static_cast<std::size_t>(n);
    }
  }
  // False at end of file before `bytes` were read.
  bool read(void* data, std::size_t bytes) {
    auto* p = static_cast<char*>(data);
    while (bytes > 0) {
      const ssize_t n = ::read(fd_, p, bytes);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw CheckpointError("checkpoint " + path_ + ": read failed (" + std::strerror(errno) + ")");
      if (n == 0) return false;
      p += n;
      bytes -= static_cast<std::size_t>(n);
    }
    return true;
  }
  void sync() {
    if (::fsync(fd_) != 0) throw CheckpointError("checkpoint " + path_ + ": fsync failed (" + std::strerror(errno) + ")");
  }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void close() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw CheckpointError("checkpoint " + path_ + ": close failed (" + std::strerror(errno) + ")");
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// Opens a checkpoint to read: a regular file (a FIFO would block the read for ever, a device is no
// checkpoint) of the running user. A checkpoint directory may be shared: a file another user put
// at the path (before the first save, or as a link) would otherwise become this run's model.
int open_own_regular_file(const std::string& path) {
  const std::string where = "checkpoint " + path + ": ";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // O_NONBLOCK: a FIFO does not block the open
  if (fd < 0) throw CheckpointError(where + "cannot open it (" + std::strerror(errno) + "); give the path that --checkpoint wrote");
  File owner(fd, path);  // closes it on every refusal below
  struct stat status {};
  if (::fstat(fd, &status) != 0) throw CheckpointError(where + "cannot stat it (" + std::strerror(errno) + ")");
  if (!S_ISREG(status.st_mode)) throw CheckpointError(where + "not a regular file; give the file that --checkpoint wrote");
  if (status.st_uid != ::geteuid())
    throw CheckpointError(where + "belongs to uid " + std::to_string(status.st_uid) + ", not to this run's user (uid " +
                          std::to_string(::geteuid()) +
                          "): in a shared directory another user may have put it there. If you trust it, copy it (cp) so "
                          "that the copy is yours and resume from the copy");
  if (::fcntl(fd, F_SETFL, 0) != 0) throw CheckpointError(where + "fcntl failed (" + std::strerror(errno) + ")");
  return owner.release();
}

}  // namespace

void write_checkpoint(const std::string& path, const CheckpointHeader& header, std::span<const float> parameters,
                      std::span<const float> first_moment, std::span<const float> second_moment) {
  if (parameters.size() != header.parameters || first_moment.size() != header.parameters || second_moment.size() != header.parameters)
    throw CheckpointError("checkpoint " + path + ": internal error: buffers do not match the parameter count");
  const std::filesystem::path target(path);
  const std::filesystem::path directory = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  // A random name, created exclusively: in a shared directory a name of the process id (what this
  // used to be) could be guessed and a link planted there, which the write would have followed.
  NewFile created;
  try {
    created = create_unique_file(directory.string(), "." + target.filename().string() + ".tmp.", 0644);
  } catch (const std::system_error& e) {
    throw CheckpointError("checkpoint " + path + ": cannot create a temporary file (" + e.what() + "); check free space and permissions");
  }
  const std::string& temporary = created.path;
  try {
    File file(created.fd, temporary);
    Checksum checksum;
    const auto put = [&](const void* data, std::size_t bytes) {
      checksum.add(data, bytes);
      file.write(data, bytes);
    };
    const std::string text = to_json(header).dump();
    const auto length = static_cast<std::uint32_t>(text.size());
    put(kMagic, sizeof(kMagic));
    put(&kVersion, sizeof(kVersion));
    put(&length, sizeof(length));
    put(text.data(), text.size());
    for (const auto buffer : {parameters, first_moment, second_moment}) put(buffer.data(), buffer.size_bytes());
    const std::uint64_t sum = checksum.value();
    file.write(&sum, sizeof(sum));
    file.write(kEndMagic, sizeof(kEndMagic));
    file.sync();
    file.close();
    if (::rename(temporary.c_str(), path.c_str()) != 0)
      throw CheckpointError("checkpoint " + path + ": rename from " + temporary + " failed (" + std::strerror(errno) + ")");
  } catch (...) {
    ::unlink(temporary.c_str());
    throw;
  }
  // The rename is durable only once the directory entry is.
  const int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

Checkpoint read_checkpoint(const std::string& path) {
  const std::string where = "checkpoint " + path + ": ";
  File file(open_own_regular_file(path), path);
  Checksum checksum;
  const auto get = [&](void* data, std::size_t bytes, const char* what) {
    if (!file.read(data, bytes))
      throw CheckpointError(where + "truncated (ends inside the " + std::string(what) +
                            "); use an older checkpoint or start without --resume");
    checksum.add(data, bytes);
  };
  char magic[8];
  get(magic, sizeof(magic), "file magic");
  if (std::memcmp(magic, kMagic, sizeof(magic)) != 0)
    throw CheckpointError(where + "not a gpudirect-launch train checkpoint (wrong magic)");
  std::uint32_t version = 0, length = 0;
  get(&version, sizeof(version), "version");
  if (version != kVersion)
    throw CheckpointError(where + "format version " + std::to_string(version) + ", this build reads " + std::to_string(kVersion));
  get(&length, sizeof(length), "header length");
  if (length > (1u << 20)) throw CheckpointError(where + "corrupt (header length " + std::to_string(length) + ")");
  std::string text(length, '\0');
  get(text.data(), text.size(), "header");
  Checkpoint checkpoint;
  try {
    checkpoint.header = from_json(nlohmann::json::parse(text));
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(where + "corrupt header (" + e.what() + ")");
  }
  const std::size_t n = checkpoint.header.parameters;
  if (n > (std::size_t{1} << 40)) throw CheckpointError(where + "corrupt header (parameter count " + std::to_string(n) + ")");
  for (auto* buffer : {&checkpoint.parameters, &checkpoint.first_moment, &checkpoint.second_moment}) {
    buffer->resize(n);
    get(buffer->data(), n * sizeof(float), "parameter and optimizer arrays");
  }
  const std::uint64_t expected = checksum.value();
  std::uint64_t stored = 0;
  char end[8];
  if (!file.read(&stored, sizeof(stored)) || !file.read(end, sizeof(end)))
    throw CheckpointError(where + "truncated (no checksum at the end); the write was interrupted: use an older checkpoint");
  if (std::memcmp(end, kEndMagic, sizeof(end)) != 0 || stored != expected)
    throw CheckpointError(
        where + "corrupt (checksum mismatch); the file was changed or damaged: use an older checkpoint or start without --resume");
  char extra = 0;
  if (file.read(&extra, 1)) throw CheckpointError(where + "corrupt (data after the end marker)");
  return checkpoint;
}

void check_compatible(const CheckpointHeader& saved, const CheckpointHeader& run, const std::string& path) {
  const auto differ = [&](const std::string& field, const std::string& theirs, const std::string& ours) {
    throw CheckpointError("checkpoint " + path + " was written with " + field + " " + theirs + ", this run has " + ours +
                          ": resume with the same settings (or start a new run without --resume)");
  };
  const auto check = [&](const char* field, auto theirs, auto ours) {
    if (theirs != ours) differ(field, std::to_string(theirs), std::to_string(ours));
  };
  const GptConfig& a = saved.config;
  const GptConfig& b = run.config;
  check("--layers", a.layers, b.layers);
  check("--heads", a.heads, b.heads);
  check("--width", a.width, b.width);
  check("--seq-len", a.seq_len, b.seq_len);
  check("--vocab", a.vocab, b.vocab);
  check("--micro-batch", a.micro_batch, b.micro_batch);
  check("--grad-accum", a.grad_accum, b.grad_accum);
  check("--seed", a.seed, b.seed);
  check("ranks", saved.world, run.world);
  check("parameter count", saved.parameters, run.parameters);
  if (saved.data != run.data) differ("--data", "'" + saved.data + "'", "'" + run.data + "'");
  check("--lr", saved.schedule.lr, run.schedule.lr);
  check("--min-lr", saved.schedule.min_lr, run.schedule.min_lr);
  check("--warmup", saved.schedule.warmup, run.schedule.warmup);
  check("the schedule length (--lr-steps)", saved.schedule.total, run.schedule.total);
  check("--weight-decay", saved.adamw.weight_decay, run.adamw.weight_decay);
  check("--grad-clip", saved.grad_clip, run.grad_clip);
}

}  // namespace gpudirect::train
