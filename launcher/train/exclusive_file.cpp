#include "train/exclusive_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <system_error>

namespace gpudirect::train {

int create_exclusively(const std::string& path, unsigned mode) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, static_cast<mode_t>(mode));
}

NewFile create_unique_file(const std::string& directory, const std::string& prefix, unsigned mode) {
  // 64 random bits: another user cannot guess the name, so only a collision with a leftover file
  // (or a name someone took by chance) makes a retry, and a few hundred are more than enough.
  constexpr int kAttempts = 256;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    std::uint64_t random = 0;
    if (::getrandom(&random, sizeof random, 0) != static_cast<ssize_t>(sizeof random))
      throw std::system_error(errno, std::generic_category(), "no random bytes for a file name in " + directory);
    char suffix[17];
    std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(random));
    NewFile file;
    file.path = directory + "/" + prefix + suffix;
    file.fd = create_exclusively(file.path, mode);
    if (file.fd >= 0) return file;
    if (errno != EEXIST) throw std::system_error(errno, std::generic_category(), "cannot create a file in " + directory);
  }
  throw std::system_error(EEXIST, std::generic_category(),
                          "cannot create a file in " + directory + ": " + std::to_string(kAttempts) + " random names were all taken");
}

}  // namespace gpudirect::train
