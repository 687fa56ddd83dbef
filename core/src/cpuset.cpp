#include "gpudirect/cpuset.hpp"

#include "gpudirect/text.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <limits>
#include <cstdio>
#include <new>
#include <stdexcept>

namespace gpudirect {
namespace {

constexpr int kWordBits = 64;

[[noreturn]] void reject(std::string_view form, std::string_view text, std::string_view why) {
  throw std::invalid_argument("invalid CPU " + std::string(form) + " '" + std::string(text) + "': " + std::string(why));
}

int parse_cpu_id(std::string_view field, std::string_view text) {
  if (!try_parse_integer<long long>(field, 0, std::numeric_limits<long long>::max()))
    reject("list", text, "'" + std::string(field) + "' is not a CPU id");
  const auto value = try_parse_integer<int>(field, 0, CpuSet::kMaxCpus - 1);
  if (!value) reject("list", text, "CPU " + std::string(field) + " is out of range 0-" + std::to_string(CpuSet::kMaxCpus - 1));
  return *value;
}

}  // namespace

CpuSet CpuSet::range(int first, int last) {
  if (first > last)
    throw std::invalid_argument("invalid CPU range " + std::to_string(first) + "-" + std::to_string(last) + ": first CPU above the last");
  CpuSet set;
  for (int cpu = first; cpu <= last; ++cpu) set.insert(cpu);
  return set;
}

CpuSet CpuSet::parse_list(std::string_view text) {
  const std::string_view body = gpudirect::trim(text);
  CpuSet set;
  if (body.empty()) return set;
  std::size_t start = 0;
  while (true) {
    const auto comma = std::min(body.find(',', start), body.size());
    const std::string_view item = body.substr(start, comma - start);
    if (item.empty()) reject("list", text, "empty item between commas");
    const auto dash = item.find('-');
    if (dash == std::string_view::npos) {
      set.insert(parse_cpu_id(item, text));
    } else {
      const int first = parse_cpu_id(item.substr(0, dash), text);
      const int last = parse_cpu_id(item.substr(dash + 1), text);
      if (last < first) reject("list", text, "range " + std::string(item) + " runs backwards");
      for (int cpu = first; cpu <= last; ++cpu) set.insert(cpu);
    }
    if (comma == body.size()) return set;
    start = comma + 1;
  }
}

CpuSet CpuSet::parse_hex_mask(std::string_view text) {
  std::string_view body = gpudirect::trim(text);
  if (body.starts_with("0x") || body.starts_with("0X")) body.remove_prefix(2);
  if (body.empty()) reject("mask", text, "no hex digits");
  // Split into 32-bit groups, most significant first.
  std::vector<std::string_view> groups;
  for (std::size_t start = 0;;) {
    const auto comma = std::min(body.find(',', start), body.size());
    groups.push_back(body.substr(start, comma - start));
    if (comma == body.size()) break;
    start = comma + 1;
  }
  CpuSet set;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::string_view group = groups[groups.size() - 1 - i];  // i-th least significant group
    if (group.empty() || group.size() > 8) reject("mask", text, "each comma-separated group needs 1-8 hex digits");
    const auto parsed = try_parse_integer<unsigned>(group, 0, 0xffffffffu, 16);
    // Built with append: GCC 12 at -O3 warns (-Wrestrict, a false positive) on "literal" + std::string.
    if (!parsed) reject("mask", text, std::string("'").append(group).append("' is not hex"));
    const std::uint32_t value = *parsed;
    for (int bit = 0; bit < 32; ++bit) {
      if (!(value & (1U << bit))) continue;
      const auto cpu = i * 32 + static_cast<std::size_t>(bit);
      if (cpu >= static_cast<std::size_t>(kMaxCpus)) reject("mask", text, "sets a CPU above " + std::to_string(kMaxCpus - 1));
      set.insert(static_cast<int>(cpu));
    }
  }
  return set;
}

CpuSet CpuSet::from_cpu_set(const cpu_set_t* native, std::size_t set_size_bytes) {
  CpuSet set;
  if (!native) return set;
  const std::size_t bits = std::min(set_size_bytes * 8, static_cast<std::size_t>(kMaxCpus));
  for (std::size_t cpu = 0; cpu < bits; ++cpu)
    if (CPU_ISSET_S(cpu, set_size_bytes, native)) set.insert(static_cast<int>(cpu));
  return set;
}

void CpuSet::insert(int cpu) {
  if (cpu < 0 || cpu >= kMaxCpus)
    throw std::invalid_argument("CPU id " + std::to_string(cpu) + " is out of range 0-" + std::to_string(kMaxCpus - 1));
  const auto word = static_cast<std::size_t>(cpu / kWordBits);
  if (word >= words_.size()) words_.resize(word + 1, 0);
  words_[word] |= std::uint64_t{1} << (cpu % kWordBits);
}

bool CpuSet::contains(int cpu) const {
  if (cpu < 0) return false;
  const auto word = static_cast<std::size_t>(cpu / kWordBits);
  return word < words_.size() && (words_[word] >> (cpu % kWordBits)) & 1U;
}

int CpuSet::count() const {
  int total = 0;
  for (std::uint64_t word : words_) total += std::popcount(word);
  return total;
}

std::vector<int> CpuSet::cpus() const {
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(count()));
  for (std::size_t w = 0; w < words_.size(); ++w)
    for (std::uint64_t bits = words_[w]; bits != 0; bits &= bits - 1)
      out.push_back(static_cast<int>(w) * kWordBits + std::countr_zero(bits));
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
    if (j > i) {
      out += '-';
      out += std::to_string(ids[j]);
    }
    i = j + 1;
  }
  return out;
}

std::string CpuSet::to_hex_mask() const {
  if (words_.empty()) return "0";
  std::string out;
  char group[16];
  for (std::size_t g = words_.size() * 2; g-- > 0;) {
    const auto value = static_cast<std::uint32_t>(words_[g / 2] >> (32 * (g % 2)));
    if (out.empty() && value == 0) continue;  // no leading zero groups
    std::snprintf(group, sizeof group, out.empty() ? "%x" : ",%08x", value);
    out += group;
  }
  return out;
}

CpuSet CpuSet::operator|(const CpuSet& other) const {
  CpuSet out = words_.size() >= other.words_.size() ? *this : other;
  const CpuSet& smaller = words_.size() >= other.words_.size() ? other : *this;
  for (std::size_t w = 0; w < smaller.words_.size(); ++w) out.words_[w] |= smaller.words_[w];
  return out;
}

CpuSet CpuSet::operator&(const CpuSet& other) const {
  CpuSet out;
  out.words_.resize(std::min(words_.size(), other.words_.size()));
  for (std::size_t w = 0; w < out.words_.size(); ++w) out.words_[w] = words_[w] & other.words_[w];
  out.trim();
  return out;
}

void CpuSet::trim() {
  while (!words_.empty() && words_.back() == 0) words_.pop_back();
}

void CpuSet::to_cpu_set(Native& out) const {
  const int highest = static_cast<int>(words_.size()) * kWordBits;
  const int capacity = std::max(highest, 1024);  // glibc's fixed cpu_set_t size, at least
  if (out.set) CPU_FREE(out.set);
  out.set = CPU_ALLOC(capacity);
  out.size = 0;
  if (!out.set) throw std::bad_alloc();
  out.size = CPU_ALLOC_SIZE(capacity);
  CPU_ZERO_S(out.size, out.set);
  for (int cpu : cpus()) CPU_SET_S(static_cast<std::size_t>(cpu), out.size, out.set);
}

CpuSet CpuSet::of_this_thread() {
  // glibc's default 1024 CPUs first; the kernel refuses a set shorter than its own CPU mask
  // (EINVAL: a kernel built for more possible CPUs, as arm64 server kernels often are), so grow.
  for (int capacity = 1024; capacity <= kMaxCpus; capacity *= 2) {
    Native native;
    CpuSet::range(capacity - 1, capacity - 1).to_cpu_set(native);  // room for `capacity` CPUs
    if (sched_getaffinity(0, native.size, native.set) == 0) return from_cpu_set(native.set, native.size);
    if (errno != EINVAL) return {};
  }
  return {};
}

}  // namespace gpudirect
