// A set of CPU ids with the two text forms Linux and NCCL use: lists ("0-51,104-155", as in
// /sys/.../cpulist and taskset -c) and comma-grouped hex masks ("ffffffff,ffffffff", 32-bit groups,
// most significant first, as in /sys/.../cpumap and NCCL's <cpu affinity=...>), plus glibc's
// dynamically sized cpu_set_t for sched_setaffinity / sched_getaffinity.
#pragma once

#include <sched.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpudirect {

class CpuSet {
 public:
  static constexpr int kMaxCpus = 1 << 16;  // ids 0..65535: above any real node, bounds memory on bad input

  CpuSet() = default;
  // "0-3,8,10-11"; "" is the empty set; surrounding whitespace (a sysfs newline) is ignored.
  // Throws std::invalid_argument quoting the text.
  static CpuSet parse_list(std::string_view text);
  // "ff,00000001" = CPUs 0 and 32-39; optional leading 0x; every group 1-8 hex digits.
  // Throws std::invalid_argument quoting the text.
  static CpuSet parse_hex_mask(std::string_view text);
  static CpuSet from_cpu_set(const cpu_set_t* set, std::size_t set_size_bytes);
  // The calling thread's affinity (sched_getaffinity); empty if the kernel refuses.
  static CpuSet of_this_thread();
  static CpuSet range(int first, int last);  // inclusive; throws std::invalid_argument if first > last

  void insert(int cpu);  // throws std::invalid_argument outside 0..kMaxCpus-1
  bool contains(int cpu) const;
  bool empty() const { return words_.empty(); }
  int count() const;
  std::vector<int> cpus() const;    // ascending
  std::string to_list() const;      // "0-3,8"; "" when empty
  std::string to_hex_mask() const;  // "000000ff,00000001"; "0" when empty

  CpuSet operator|(const CpuSet& other) const;  // union
  CpuSet operator&(const CpuSet& other) const;  // intersection
  bool operator==(const CpuSet& other) const = default;

  // A CPU_ALLOC'ed glibc set, freed with the object. `size` is what sched_setaffinity wants.
  struct Native {
    cpu_set_t* set = nullptr;
    std::size_t size = 0;
    Native() = default;
    Native(const Native&) = delete;
    Native& operator=(const Native&) = delete;
    ~Native() {
      if (set) CPU_FREE(set);
    }
  };
  // Fills `out` with this set, sized for at least 1024 CPUs (glibc's default) or the highest id.
  void to_cpu_set(Native& out) const;

 private:
  void trim();  // drops trailing zero words, so equal sets compare equal
  std::vector<std::uint64_t> words_;
};

}  // namespace gpudirect
