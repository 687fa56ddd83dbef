#include "comm/shm/peer_readable_buffers.hpp"

#include "comm/shm/fd_pages.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace gpudirect::comm {
namespace {

constexpr std::size_t kPage = 4096;

std::string proc_fd_path(pid_t pid, std::int64_t fd) { return "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd); }

// A read-only mapping of the memory behind another process's descriptor; "" or why not.
std::string map_peer_fd(pid_t pid, std::int64_t fd, std::size_t bytes, void** memory) {
  const std::string path = proc_fd_path(pid, fd);
  const int mine = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (mine < 0) return errno_text("open " + path);
  // Populated now: the first touch of each page would otherwise fault inside a collective.
  void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED | MAP_POPULATE, mine, 0);
  const std::string error = p == MAP_FAILED ? errno_text("mmap " + path) : "";
  ::close(mine);
  if (error.empty()) *memory = p;
  return error;
}

}  // namespace

ShareableMemory::~ShareableMemory() {
  for (const auto& [base, allocation] : allocations_) {
    ::munmap(const_cast<char*>(base), allocation.bytes);
    ::close(allocation.fd);
  }
}

void* ShareableMemory::allocate(std::size_t bytes, std::string* why_not) {
  const std::size_t size = std::max(kPage, (bytes + kPage - 1) / kPage * kPage);
  auto fail = [&](const std::string& why, int fd) -> void* {
    if (why_not) *why_not = why;
    if (fd >= 0) ::close(fd);
    return nullptr;
  };
  const int fd = ::memfd_create("gpudirect-buffer", MFD_CLOEXEC);
  if (fd < 0) return fail(errno_text("memfd_create"), -1);
  if (const auto why = reserve_pages(fd, size); !why.empty()) return fail("reserving " + std::to_string(size) + " bytes: " + why, fd);
  void* p = nullptr;
  if (const auto why = map_for_writing(fd, size, &p); !why.empty()) return fail(why, fd);
  std::lock_guard lock(mutex_);
  allocations_[static_cast<const char*>(p)] = Allocation{size, fd, next_id_++};
  return p;
}

bool ShareableMemory::release(void* buffer) {
  std::lock_guard lock(mutex_);
  const auto it = allocations_.find(static_cast<const char*>(buffer));
  if (it == allocations_.end()) return false;
  ::munmap(buffer, it->second.bytes);
  ::close(it->second.fd);
  allocations_.erase(it);
  return true;
}

std::optional<SharedLocation> ShareableMemory::locate(const void* buffer, std::size_t bytes) const {
  const auto* at = static_cast<const char*>(buffer);
  std::lock_guard lock(mutex_);
  auto it = allocations_.upper_bound(at);
  if (it == allocations_.begin()) return std::nullopt;
  --it;
  const auto offset = static_cast<std::size_t>(at - it->first);
  if (offset > it->second.bytes || bytes > it->second.bytes - offset) return std::nullopt;
  return SharedLocation{it->second.id, it->second.fd, it->second.bytes, offset};
}

PeerBuffers::~PeerBuffers() {
  for (const auto& m : mappings_) ::munmap(const_cast<char*>(m.base), m.bytes);
}

const char* PeerBuffers::map(int peer, const SharedLocation& where, std::size_t bytes) {
  if (peer < 0 || static_cast<std::size_t>(peer) >= pids_.size()) throw std::runtime_error("no rank " + std::to_string(peer) + " to map");
  if (where.offset > where.allocation_bytes || bytes > where.allocation_bytes - where.offset)
    throw std::runtime_error(std::to_string(bytes) + " bytes at offset " + std::to_string(where.offset) + " do not fit rank " +
                             std::to_string(peer) + "'s allocation of " + std::to_string(where.allocation_bytes) + " bytes");
  ++uses_;
  for (auto& m : mappings_)
    if (m.peer == peer && m.allocation == where.allocation) {
      m.last_used = uses_;
      return m.base + where.offset;
    }
  void* memory = nullptr;
  if (const auto error = map_peer_fd(pids_[static_cast<std::size_t>(peer)], where.fd, where.allocation_bytes, &memory); !error.empty())
    throw std::runtime_error(error);
  // Evicts this peer's least recently used mapping beyond the few kept.
  const auto peers_mappings = std::count_if(mappings_.begin(), mappings_.end(), [&](const Mapping& m) { return m.peer == peer; });
  if (static_cast<std::size_t>(peers_mappings) >= kKeptPerPeer) {
    auto oldest = mappings_.end();
    for (auto it = mappings_.begin(); it != mappings_.end(); ++it)
      if (it->peer == peer && (oldest == mappings_.end() || it->last_used < oldest->last_used)) oldest = it;
    ::munmap(const_cast<char*>(oldest->base), oldest->bytes);
    mappings_.erase(oldest);
  }
  mappings_.push_back({peer, where.allocation, static_cast<const char*>(memory), where.allocation_bytes, uses_});
  return static_cast<const char*>(memory) + where.offset;
}

int make_probe_fd(std::uint64_t token) {
  const int fd = ::memfd_create("gpudirect-probe", MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (::pwrite(fd, &token, sizeof token, 0) != static_cast<ssize_t>(sizeof token)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string try_mapping_probe(pid_t pid, int fd, std::uint64_t token) {
  void* memory = nullptr;
  if (auto error = map_peer_fd(pid, fd, sizeof token, &memory); !error.empty()) return error;
  std::uint64_t found = 0;
  std::memcpy(&found, memory, sizeof found);
  ::munmap(memory, sizeof token);
  return found == token ? "" : proc_fd_path(pid, fd) + " is not the probe of that rank (another pid namespace?)";
}

}  // namespace gpudirect::comm
