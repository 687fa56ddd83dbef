#include "comm/shared_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

namespace gpudirect::comm {
namespace {

std::string unique_name() {
  std::random_device random;
  char name[64];
  std::snprintf(name, sizeof name, "/gpudirect-comm-%d-%08x%08x", static_cast<int>(::getpid()), random(), random());
  return name;
}

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// Writes a byte of every page in `used` (all of them when empty), its own value: MAP_POPULATE maps
// a shared object's pages read-only, and on a VM whose hypervisor shadows page tables even a
// populated page costs a trap at its first access. Measured here: the first eight 4 KiB
// all_reduces (one new slot each) took 60-300 us, the rest 2 us; touching 2 MiB at start costs a
// few ms. Nobody uses the memory before every rank has mapped it, so the writes race with nothing.
void touch_for_writing(void* memory, std::size_t bytes, const std::vector<std::pair<std::size_t, std::size_t>>& used) {
  auto* base = static_cast<volatile char*>(memory);
  auto touch = [&](std::size_t from, std::size_t length) {
    const std::size_t end = std::min(bytes, from + length);
    for (std::size_t at = from / 4096 * 4096; at < end; at += 4096) base[at] = base[at];
  };
  if (used.empty()) touch(0, bytes);
  for (const auto& [from, length] : used) touch(from, length);
}

// Maps the object; "" or why not. `created`: reserve its pages first.
std::string map_object(const std::string& name, std::size_t bytes, bool created, void** memory,
                       const std::vector<std::pair<std::size_t, std::size_t>>& used) {
  const int fd = ::shm_open(name.c_str(), O_RDWR | (created ? O_CREAT | O_EXCL : 0), 0600);
  if (fd < 0) return errno_text("shm_open " + name);
  std::string error;
  if (created) {
    // posix_fallocate returns the error instead of setting errno.
    if (const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); rc != 0)
      error = "reserving " + std::to_string(bytes >> 20) + " MiB in /dev/shm: " + std::strerror(rc);
  } else {
    struct stat info {};
    if (::fstat(fd, &info) != 0) error = errno_text("fstat " + name);
    else if (static_cast<std::size_t>(info.st_size) != bytes) error = name + " has " + std::to_string(info.st_size) + " bytes, not " + std::to_string(bytes);
  }
  if (error.empty()) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) error = errno_text("mmap " + name);
    else *memory = p, touch_for_writing(p, bytes, used);
  }
  ::close(fd);
  return error;
}

}  // namespace

SharedSegment::~SharedSegment() {
  if (memory_) ::munmap(memory_, bytes_);
}

std::unique_ptr<SharedSegment> map_shared_segment(bootstrap::Store& store, int rank, std::size_t bytes, std::string* why_not,
                                                  const std::vector<std::pair<std::size_t, std::size_t>>& used) {
  void* memory = nullptr;
  std::string name, error;
  if (rank == 0) {
    name = unique_name();
    error = map_object(name, bytes, true, &memory, used);
    if (!error.empty()) ::shm_unlink(name.c_str());
  }
  // "!" + reason where rank 0 failed, else the name.
  const std::string created = store.all_gather("shm/segment", error.empty() ? name : "!" + error)[0];
  if (rank != 0 && created[0] != '!') error = map_object(created, bytes, false, &memory, used);
  const auto results = store.all_gather("shm/mapped", error);
  if (rank == 0 && created[0] != '!') ::shm_unlink(name.c_str());  // every rank has mapped it, or given up
  auto segment = memory ? std::make_unique<SharedSegment>(memory, bytes) : nullptr;
  for (std::size_t r = 0; r < results.size(); ++r) {
    if (results[r].empty()) continue;
    if (why_not) *why_not = "rank " + std::to_string(r) + ": " + results[r];
    return nullptr;  // unmaps ours
  }
  return segment;
}

}  // namespace gpudirect::comm
