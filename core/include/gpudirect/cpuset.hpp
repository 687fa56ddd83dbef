// A set of CPU ids with the two text forms Linux and NCCL use: lists ("0-51,104-155") and
// comma-grouped hex masks ("ffffffff,ffffffff", most significant group first).
#pragma once

#include <sched.h>

#include <string>
#include <string_view>
#include <vector>

namespace gpudirect {

class CpuSet {
 public:
  CpuSet() = default;
  static CpuSet parse_list(std::string_view text);      // throws std::invalid_argument
  static CpuSet parse_hex_mask(std::string_view text);  // throws std::invalid_argument
  static CpuSet from_cpu_set(const cpu_set_t* set, std::size_t set_size_bytes);
  static CpuSet range(int first, int last);             // inclusive

  void insert(int cpu);
  bool contains(int cpu) const;
  bool empty() const { return count() == 0; }
  int count() const;
  std::vector<int> cpus() const;
  std::string to_list() const;  // "0-3,8"; "" when empty

  CpuSet operator|(const CpuSet& other) const;
  CpuSet operator&(const CpuSet& other) const;
  bool operator==(const CpuSet& other) const;

  // Fills a CPU_ALLOC'ed set; returns its size in bytes for sched_setaffinity.
  struct Native {
    cpu_set_t* set = nullptr;
    std::size_t size = 0;
    Native() = default;
    Native(const Native&) = delete;
    Native& operator=(const Native&) = delete;
    ~Native() { if (set) CPU_FREE(set); }
  };
  void to_cpu_set(Native& out) const;

 private:
  std::vector<bool> bits_;
};

}  // namespace gpudirect
