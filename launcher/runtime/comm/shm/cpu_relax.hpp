#pragma once

namespace gpudirect::comm {

// One spin-wait step's hint to the CPU that this thread is polling: x86 `pause`, arm64 `yield`
// (Grace/GB200 and GH200 hosts are arm64), nothing elsewhere. The waits around it bound the spin.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace gpudirect::comm
