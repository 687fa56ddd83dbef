#include "check_node/kernel_xids.hpp"

#include "gpudirect/text.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <regex>
#include <sstream>

namespace gpudirect::launcher::check_node {

bool hardware_xid(int code) {
  switch (code) {
    case 48:
    case 63:
    case 64:
    case 74:
    case 79:
    case 92:
    case 94:
    case 95:
    case 119:
    case 120:
    case 140:
      return true;
    default:
      return false;
  }
}

std::vector<XidEvent> parse_xids(const std::string& log) {
  static const std::regex xid(R"(NVRM: Xid \(PCI:([0-9A-Fa-f:.]+)\): (\d+))");
  std::vector<XidEvent> out;
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (!std::regex_search(line, match, xid)) continue;
    if (const auto code = try_parse_integer<int>(match[2].str(), 0, 100000))
      out.push_back({match[1].str(), *code, quote_bounded(line, 160)});
  }
  return out;
}

std::vector<Finding> judge_xids(const std::vector<XidEvent>& events) {
  std::map<std::pair<std::string, int>, int> seen;
  for (const XidEvent& event : events)
    if (hardware_xid(event.code)) ++seen[{event.pci, event.code}];
  std::vector<Finding> out;
  for (const auto& [key, count] : seen)
    out.push_back({Severity::fail, Fault::gpu_hardware, "gpu_xid", "GPU at PCI " + key.first,
                   "XID " + std::to_string(key.second) + " in the kernel log", std::to_string(count) + "x", "none",
                   "a hardware XID since boot: drain the node and reboot; if it comes back, repair the host"});
  return out;
}

std::string read_kernel_log(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = path + ": " + std::strerror(errno);
    return "";
  }
  std::string out;
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<std::size_t>(n));
      // /dev/kmsg gives one record per read, without its newline at the end of the text.
      if (out.back() != '\n') out += '\n';
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) continue;  // a record was overwritten while reading: go on
    break;                                  // 0 (end of a file) or EAGAIN (no more records)
  }
  ::close(fd);
  return out;
}

}  // namespace gpudirect::launcher::check_node
