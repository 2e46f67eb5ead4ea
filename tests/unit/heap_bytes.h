// What the process has allocated on the heap now, for tests that hold an engine's DRAM ledger
// against what it really allocated (issue 25: the ledger is complete). Under ASan or TSan the
// sanitizer's allocator answers; otherwise jemalloc (linked into the -O2 builds) or glibc.
#pragma once
#include <cstdint>

#include <malloc.h>

#include <cstddef>

extern "C" {
// The sanitizers' allocator interface (declared here: g++ 12's packages ship no header for it).
size_t __sanitizer_get_current_allocated_bytes(void);
// jemalloc's control interface, when it is linked (weak: glibc-only binaries leave it null).
int mallctl(const char*, void*, size_t*, void*, size_t) __attribute__((weak));
}

namespace nvt::test {

inline uint64_t heap_allocated_bytes() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return __sanitizer_get_current_allocated_bytes();
#else
  if (mallctl) {
    // Objects in this thread's cache count as allocated until flushed: an earlier test's frees
    // would otherwise hide the allocations that reuse them.
    mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0);
    uint64_t epoch = 1;
    size_t len = sizeof(epoch);
    mallctl("epoch", &epoch, &len, &epoch, len);  // refresh the statistics
    size_t allocated = 0;
    len = sizeof(allocated);
    if (mallctl("stats.allocated", &allocated, &len, nullptr, 0) == 0) return allocated;
  }
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
#endif
}

}  // namespace nvt::test
