#include "gpudirect/cpuset.hpp"

#include <charconv>
#include <stdexcept>

namespace gpudirect {
namespace {

constexpr int kMaxCpu = 1 << 16;  // far above any real node; bounds memory on hostile input

[[noreturn]] void bad(std::string_view what, std::string_view text) {
  throw std::invalid_argument("invalid CPU " + std::string(what) + " '" + std::string(text) + "'");
}

int parse_cpu(std::string_view field, std::string_view text) {
  int value = 0;
  const char* end = field.data() + field.size();
  auto [ptr, ec] = std::from_chars(field.data(), end, value);
  if (field.empty() || ec != std::errc{} || ptr != end || value < 0 || value >= kMaxCpu) bad("list", text);
  return value;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

CpuSet CpuSet::range(int first, int last) {
  CpuSet set;
  for (int cpu = first; cpu <= last; ++cpu) set.insert(cpu);
  return set;
}

CpuSet CpuSet::parse_list(std::string_view text) {
  CpuSet set;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    if (item.empty()) {
      if (text.empty()) return set;  // "" is the empty set
      bad("list", text);
    }
    const auto dash = item.find('-');
    if (dash == std::string_view::npos) {
      set.insert(parse_cpu(item, text));
    } else {
      const int first = parse_cpu(item.substr(0, dash), text);
      const int last = parse_cpu(item.substr(dash + 1), text);
      if (last < first) bad("list", text);
      for (int cpu = first; cpu <= last; ++cpu) set.insert(cpu);
    }
    start = comma + 1;
  }
  return set;
}

CpuSet CpuSet::parse_hex_mask(std::string_view text) {
  std::string_view body = text;
  if (body.starts_with("0x") || body.starts_with("0X")) body.remove_prefix(2);
  if (body.empty()) bad("mask", text);
  CpuSet set;
  int bit = 0;
  // Walk from the least significant digit; commas only separate groups.
  for (auto it = body.rbegin(); it != body.rend(); ++it) {
    if (*it == ',') continue;
    const int digit = hex_digit(*it);
    if (digit < 0) bad("mask", text);
    for (int b = 0; b < 4; ++b)
      if (digit & (1 << b)) {
        if (bit + b >= kMaxCpu) bad("mask", text);
        set.insert(bit + b);
      }
    bit += 4;
  }
  return set;
}

CpuSet CpuSet::from_cpu_set(const cpu_set_t* native, std::size_t set_size_bytes) {
  CpuSet set;
  const int max = static_cast<int>(set_size_bytes * 8);
  for (int cpu = 0; cpu < max; ++cpu)
    if (CPU_ISSET_S(static_cast<std::size_t>(cpu), set_size_bytes, native)) set.insert(cpu);
  return set;
}

void CpuSet::insert(int cpu) {
  if (cpu < 0 || cpu >= kMaxCpu) throw std::invalid_argument("CPU id out of range: " + std::to_string(cpu));
  if (static_cast<std::size_t>(cpu) >= bits_.size()) bits_.resize(static_cast<std::size_t>(cpu) + 1);
  bits_[static_cast<std::size_t>(cpu)] = true;
}

bool CpuSet::contains(int cpu) const {
  return cpu >= 0 && static_cast<std::size_t>(cpu) < bits_.size() && bits_[static_cast<std::size_t>(cpu)];
}

int CpuSet::count() const {
  int n = 0;
  for (bool b : bits_) n += b ? 1 : 0;
  return n;
}

std::vector<int> CpuSet::cpus() const {
  std::vector<int> out;
  for (std::size_t i = 0; i < bits_.size(); ++i)
    if (bits_[i]) out.push_back(static_cast<int>(i));
  return out;
}

std::string CpuSet::to_list() const {
  std::string out;
  const auto ids = cpus();
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids[i]);
    if (j > i) out += '-' + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

CpuSet CpuSet::operator|(const CpuSet& other) const {
  CpuSet out = *this;
  for (int cpu : other.cpus()) out.insert(cpu);
  return out;
}

CpuSet CpuSet::operator&(const CpuSet& other) const {
  CpuSet out;
  for (int cpu : cpus())
    if (other.contains(cpu)) out.insert(cpu);
  return out;
}

bool CpuSet::operator==(const CpuSet& other) const { return cpus() == other.cpus(); }

void CpuSet::to_cpu_set(Native& out) const {
  const int highest = bits_.empty() ? 0 : static_cast<int>(bits_.size());
  const int capacity = highest < 1024 ? 1024 : highest;  // glibc's default size at least
  if (out.set) CPU_FREE(out.set);
  out.set = CPU_ALLOC(capacity);
  if (!out.set) throw std::bad_alloc();
  out.size = CPU_ALLOC_SIZE(capacity);
  CPU_ZERO_S(out.size, out.set);
  for (int cpu : cpus()) CPU_SET_S(static_cast<std::size_t>(cpu), out.size, out.set);
}

}  // namespace gpudirect
