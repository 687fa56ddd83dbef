// The pages behind a file descriptor that processes share (staging_segment.hpp's /dev/shm object,
// peer_readable_buffers.hpp's memfds): reserved up front and faulted in for writing before anyone
// times them. One rule for both users.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace gpudirect::comm {

// `what`: strerror(errno).
std::string errno_text(const std::string& what);

// Reserves the first `bytes` of the object behind `fd`, so that memory the host cannot give is an
// error now, not a SIGBUS later. "" or the reason (posix_fallocate's).
std::string reserve_pages(int fd, std::size_t bytes);

// Maps `bytes` of `fd` shared and writable, with the pages in `used` ((offset, bytes) ranges; empty:
// all) faulted in for writing. "" and `*memory`, or why not.
std::string map_for_writing(int fd, std::size_t bytes, void** memory, const std::vector<std::pair<std::size_t, std::size_t>>& used = {});

}  // namespace gpudirect::comm
