#include "comm/shm/fd_pages.hpp"

#include <fcntl.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gpudirect::comm {
namespace {

constexpr std::size_t kPage = 4096;

// Writes a byte of every page in `used` (all of them when empty), its own value: MAP_POPULATE maps
// a shared object's pages read-only, and on a VM whose hypervisor shadows page tables even a
// populated page costs a trap at its first access, inside a timed collective (docs/performance.md);
// touching them at start costs far less. Nobody uses the memory before its mapper returns it, so
// the writes race with nothing.
void touch_for_writing(void* memory, std::size_t bytes, const std::vector<std::pair<std::size_t, std::size_t>>& used) {
  auto* base = static_cast<volatile char*>(memory);
  auto touch = [&](std::size_t from, std::size_t length) {
    const std::size_t end = std::min(bytes, from + length);
    for (std::size_t at = from / kPage * kPage; at < end; at += kPage) base[at] = base[at];
  };
  if (used.empty()) touch(0, bytes);
  for (const auto& [from, length] : used) touch(from, length);
}

}  // namespace

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string reserve_pages(int fd, std::size_t bytes) {
  // posix_fallocate returns the error instead of setting errno.
  const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  return rc == 0 ? "" : std::strerror(rc);
}

std::string map_for_writing(int fd, std::size_t bytes, void** memory, const std::vector<std::pair<std::size_t, std::size_t>>& used) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) return errno_text("mmap");
  touch_for_writing(p, bytes, used);
  *memory = p;
  return "";
}

}  // namespace gpudirect::comm
