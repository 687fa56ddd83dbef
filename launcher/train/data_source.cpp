#include "train/data_source.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gpudirect::train {

std::uint64_t BatchShape::sequence_index(long step, int micro, int b) const {
  return static_cast<std::uint64_t>(step) * sequences_per_step() +
         static_cast<std::uint64_t>(micro) * static_cast<std::uint64_t>(world) * static_cast<std::uint64_t>(micro_batch) +
         static_cast<std::uint64_t>(rank) * static_cast<std::uint64_t>(micro_batch) + static_cast<std::uint64_t>(b);
}

namespace {

// Learnable mock sequences use the first 64 token ids only, so even a few steps show the loss
// falling from ln(V) (the model first learns which tokens occur, then the recurrences).
constexpr std::uint64_t kLearnableAlphabet = 64;

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser: a counter-based generator
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class MockData final : public DataSource {
 public:
  MockData(const BatchShape& shape, std::uint64_t seed, bool learnable) : shape_(shape), seed_(seed), learnable_(learnable) {}

  void fill(long step, int micro, std::span<std::int32_t> inputs, std::span<std::int32_t> targets) override {
    const auto T = static_cast<std::size_t>(shape_.seq_len);
    const auto V = static_cast<std::uint64_t>(shape_.vocab);
    std::vector<std::int32_t> tokens(T + 1);
    for (int b = 0; b < shape_.micro_batch; ++b) {
      const std::uint64_t sequence = mix(seed_ ^ mix(shape_.sequence_index(step, micro, b)));
      if (learnable_) {
        static constexpr std::array<std::uint64_t, 4> kMultipliers{1, 3, 5, 7};
        const std::uint64_t a = kMultipliers[sequence % kMultipliers.size()];
        const std::uint64_t c = 1 + (sequence >> 8) % 3;
        const std::uint64_t alphabet = std::min<std::uint64_t>(V, kLearnableAlphabet);
        std::uint64_t x = (sequence >> 16) % alphabet;
        for (std::size_t t = 0; t <= T; ++t) {
          tokens[t] = static_cast<std::int32_t>(x);
          x = (a * x + c) % alphabet;
        }
      } else {
        for (std::size_t t = 0; t <= T; ++t) tokens[t] = static_cast<std::int32_t>(mix(sequence + t) % V);
      }
      std::copy(tokens.begin(), tokens.begin() + static_cast<long>(T), inputs.begin() + static_cast<long>(b * T));
      std::copy(tokens.begin() + 1, tokens.end(), targets.begin() + static_cast<long>(b * T));
    }
  }

  std::string describe() const override { return learnable_ ? "mock (learnable)" : "mock (uniform)"; }

 private:
  BatchShape shape_;
  std::uint64_t seed_;
  bool learnable_;
};

constexpr std::int32_t kLlmcMagic = 20240520;
constexpr std::int32_t kLlmcVersion = 1;
constexpr std::size_t kLlmcHeaderBytes = 256 * sizeof(std::int32_t);

class TokenFileData final : public DataSource {
 public:
  TokenFileData(const BatchShape& shape, const std::string& path) : shape_(shape), path_(path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw std::runtime_error("token file " + path + ": cannot open (" + std::strerror(errno) + "); give an existing file or --data mock");
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int error = errno;
      ::close(fd);
      throw std::runtime_error("token file " + path + ": cannot stat (" + std::strerror(error) + ")");
    }
    bytes_ = static_cast<std::size_t>(st.st_size);
    if (bytes_ > 0) {
      void* map = ::mmap(nullptr, bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (map == MAP_FAILED) {
        const int error = errno;
        ::close(fd);
        throw std::runtime_error("token file " + path + ": cannot map (" + std::strerror(error) + ")");
      }
      base_ = static_cast<const unsigned char*>(map);
    }
    ::close(fd);
    try {
      parse();
    } catch (...) {
      unmap();
      throw;
    }
  }
  ~TokenFileData() override { unmap(); }
  TokenFileData(const TokenFileData&) = delete;
  TokenFileData& operator=(const TokenFileData&) = delete;

  void fill(long step, int micro, std::span<std::int32_t> inputs, std::span<std::int32_t> targets) override {
    const auto T = static_cast<std::size_t>(shape_.seq_len);
    for (int b = 0; b < shape_.micro_batch; ++b) {
      const std::uint64_t window = shape_.sequence_index(step, micro, b) % windows_;
      const std::size_t start = static_cast<std::size_t>(window) * T;
      for (std::size_t t = 0; t < T; ++t) {
        inputs[b * T + t] = token(start + t);
        targets[b * T + t] = token(start + t + 1);
      }
    }
  }

  std::string describe() const override { return path_ + " (" + format_ + ", " + std::to_string(count_) + " tokens)"; }

 private:
  void parse() {
    const std::string where = "token file " + path_ + ": ";
    std::int32_t header[3] = {0, 0, 0};
    if (bytes_ >= sizeof(header)) std::memcpy(header, base_, sizeof(header));
    if (header[0] == kLlmcMagic) {
      if (header[1] != kLlmcVersion)
        throw std::runtime_error(where + "llm.c header version " + std::to_string(header[1]) + ", expected " +
                                 std::to_string(kLlmcVersion) + " (uint16 tokens); rewrite it with llm.c's current data scripts");
      if (bytes_ < kLlmcHeaderBytes)
        throw std::runtime_error(where + "truncated llm.c header (" + std::to_string(bytes_) + " bytes, needs 1024)");
      if (header[2] < 0) throw std::runtime_error(where + "llm.c header gives a negative token count");
      count_ = static_cast<std::size_t>(header[2]);
      const std::size_t body = bytes_ - kLlmcHeaderBytes;
      if (body != count_ * 2)
        throw std::runtime_error(where + "llm.c header says " + std::to_string(count_) + " tokens (" + std::to_string(count_ * 2) +
                                 " bytes) but the file holds " + std::to_string(body) +
                                 " bytes after the header: truncated or not an llm.c file");
      tokens_ = base_ + kLlmcHeaderBytes;
      format_ = "llm.c .bin v1";
    } else {
      if (bytes_ % 2 != 0)
        throw std::runtime_error(where + "odd size (" + std::to_string(bytes_) +
                                 " bytes): not uint16 tokens; expected llm.c's .bin (magic 20240520) or raw uint16 tokens");
      count_ = bytes_ / 2;
      tokens_ = base_;
      format_ = "raw uint16";
    }
    const auto T = static_cast<std::size_t>(shape_.seq_len);
    if (count_ < T + 1)
      throw std::runtime_error(where + "holds " + std::to_string(count_) + " tokens, fewer than one sequence of " + std::to_string(T + 1) +
                               " (seq-len + 1); use a bigger file or a shorter --seq-len");
    windows_ = (count_ - 1) / T;
    for (std::size_t i = 0; i < count_; ++i) {
      if (token(i) >= shape_.vocab)
        throw std::runtime_error(where + "token " + std::to_string(token(i)) + " at index " + std::to_string(i) +
                                 " is outside the vocabulary of " + std::to_string(shape_.vocab) + "; raise --vocab (GPT-2's is 50257)");
    }
  }

  std::int32_t token(std::size_t i) const {
    std::uint16_t value = 0;
    std::memcpy(&value, tokens_ + 2 * i, 2);  // little-endian on every platform we build for
    return value;
  }

  void unmap() {
    if (base_ != nullptr) ::munmap(const_cast<unsigned char*>(base_), bytes_);
    base_ = nullptr;
  }

  BatchShape shape_;
  std::string path_, format_;
  const unsigned char* base_ = nullptr;
  const unsigned char* tokens_ = nullptr;
  std::size_t bytes_ = 0, count_ = 0, windows_ = 0;
};

}  // namespace

std::unique_ptr<DataSource> make_mock_data(const BatchShape& shape, std::uint64_t seed, bool learnable) {
  return std::make_unique<MockData>(shape, seed, learnable);
}

std::unique_ptr<DataSource> make_token_file_data(const BatchShape& shape, const std::string& path) {
  return std::make_unique<TokenFileData>(shape, path);
}

}  // namespace gpudirect::train
