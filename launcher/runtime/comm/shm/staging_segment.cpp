#include "comm/shm/staging_segment.hpp"

#include "comm/shm/fd_pages.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <random>

namespace gpudirect::comm {
namespace {

std::string unique_name() {
  std::random_device random;
  char name[64];
  std::snprintf(name, sizeof name, "/gpudirect-comm-%d-%08x%08x", static_cast<int>(::getpid()), random(), random());
  return name;
}

// Maps the object; "" or why not. `created`: reserve its pages first.
std::string map_object(const std::string& name, std::size_t bytes, bool created, void** memory,
                       const std::vector<std::pair<std::size_t, std::size_t>>& used) {
  const int fd = ::shm_open(name.c_str(), O_RDWR | (created ? O_CREAT | O_EXCL : 0), 0600);
  if (fd < 0) return errno_text("shm_open " + name);
  std::string error;
  if (created) {
    if (const auto why = reserve_pages(fd, bytes); !why.empty())
      error = "reserving " + std::to_string(bytes >> 20) + " MiB in /dev/shm: " + why;
  } else {
    struct stat info {};
    if (::fstat(fd, &info) != 0)
      error = errno_text("fstat " + name);
    else if (static_cast<std::size_t>(info.st_size) != bytes)
      error = name + " has " + std::to_string(info.st_size) + " bytes, not " + std::to_string(bytes);
  }
  if (error.empty())
    if (const auto why = map_for_writing(fd, bytes, memory, used); !why.empty()) error = name + ": " + why;
  ::close(fd);
  return error;
}

}  // namespace

StagingSegment::~StagingSegment() {
  if (memory_) ::munmap(memory_, bytes_);
}

std::unique_ptr<StagingSegment> map_staging_segment(bootstrap::Store& store, int rank, std::size_t bytes, std::string* why_not,
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
  auto segment = memory ? std::make_unique<StagingSegment>(memory, bytes) : nullptr;
  for (std::size_t r = 0; r < results.size(); ++r) {
    if (results[r].empty()) continue;
    if (why_not) *why_not = "rank " + std::to_string(r) + ": " + results[r];
    return nullptr;  // unmaps ours
  }
  return segment;
}

}  // namespace gpudirect::comm
