#include "check_node/kernel_xids.hpp"

#include "gpudirect/text.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
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

namespace {

// The driver's own line, from its first byte: "NVRM: Xid (PCI:DDDD:BB:DD[.F]): CODE," (or CODE at
// the end). A program's name (comm, at most 15 bytes) starts the kernel's segfault record, and
// "NVRM: Xid (PCI:" is exactly 15 bytes: what follows it there is "[PID]: segfault", never an
// address, so the whole shape up to the code is required.
const std::regex& driver_xid() {
  static const std::regex xid(R"(^NVRM: Xid \(PCI:([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?)\): (\d{1,6})(?:,|$))");
  return xid;
}

// /dev/kmsg: "PRIO,SEQ,USEC,FLAGS;MESSAGE", PRIO = facility * 8 + level.
const std::regex& kmsg_header() {
  static const std::regex header(R"(^(\d{1,10}),\d+,\d+,[^;]*;)");
  return header;
}

// dmesg -x: "kern  :err   : " before the rest.
const std::regex& dmesg_decoded_prefix() {
  static const std::regex prefix(R"(^([a-z]+) *:([a-z]+) *: )");
  return prefix;
}

// journalctl -o short ("Nov 29 00:00:00 HOST IDENT[PID]: ") or short-iso ("2026-11-29T00:00:00+0000
// HOST IDENT: "): the identifier of the record.
const std::regex& journal_prefix() {
  static const std::regex prefix(
      R"(^(?:[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?|\d{4}-\d\d-\d\dT[0-9:.+-]+Z?) \S+ ([^\s:\[]+)(?:\[\d+\])?: )");
  return prefix;
}

}  // namespace

std::optional<std::string> kernel_message(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  // A record's continuation (kmsg's " SUBSYSTEM=", " DEVICE=", a multi-line message in dmesg or
  // journalctl): never a record of its own.
  if (line.empty() || line.front() == ' ' || line.front() == '\t') return std::nullopt;
  std::smatch match;
  if (std::regex_search(line, match, kmsg_header())) {
    // Facility 0 is the kernel's own; a write to /dev/kmsg is LOG_USER (1) unless it names another
    // non-zero facility: the kernel never lets userspace claim facility 0.
    const auto prio = try_parse_integer<long long>(match[1].str(), 0, 4294967295LL);
    if (!prio || (*prio >> 3) != 0) return std::nullopt;
    return match.suffix().str();
  }
  if (std::regex_search(line, match, journal_prefix())) {
    if (match[1].str() != "kernel") return std::nullopt;
    return match.suffix().str();
  }
  if (std::regex_search(line, match, dmesg_decoded_prefix())) {
    if (match[1].str() != "kern") return std::nullopt;
    line = match.suffix().str();
  }
  // dmesg's time stamp: "[  123.456789] " or, with -T, "[Sun Nov 29 00:00:00 2026] ".
  if (line.front() == '[') {
    const auto close = line.find("] ");
    if (close == std::string::npos) return std::nullopt;
    line.erase(0, close + 2);
  }
  return line;
}

std::vector<XidEvent> parse_xids(const std::string& log) {
  std::vector<XidEvent> out;
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    const auto message = kernel_message(line);
    if (!message) continue;
    std::smatch match;
    if (!std::regex_search(*message, match, driver_xid())) continue;
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
