// The version array (papers/nvcaracal-eurosys23.txt sections 3.1.2, 4.1): the versions one row
// gets in one epoch, in the transient pool, sorted by serial id after the append step. Entry 0
// is the initial version (the row's value before the epoch); each declared write appends a
// PENDING entry. A reader takes the last entry below its serial id, waits while it is PENDING
// and steps back over IGNORE; no lock and no abort.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <x86intrin.h>

#include "storage/engines/nvcaracal/epoch.h"

namespace nvt::nvc {

// A plain pointer (the array is sorted by value between phases), read and written through
// atomic_ref during execution.
struct Version {
  Sid sid;
  const char* value;
  const char* load() const { return std::atomic_ref<const char*>(const_cast<const char*&>(value)).load(std::memory_order_acquire); }
  void store(const char* v) { std::atomic_ref<const char*>(value).store(v, std::memory_order_release); }
};

struct VersionArray {
  uint32_t n;    // entries in use
  uint32_t cap;  // entries allocated
  Version v[1];  // [cap]

  static uint64_t bytes_for(uint32_t cap) { return sizeof(VersionArray) + (cap - 1) * sizeof(Version); }

  void sort() {
    std::sort(v + 1, v + n, [](const Version& a, const Version& b) { return a.sid < b.sid; });
  }
  // The entry of a writer's own serial id.
  uint32_t index_of(Sid s) const {
    const Version* p = std::lower_bound(v + 1, v + n, s, [](const Version& a, Sid x) { return a.sid < x; });
    return uint32_t(p - v);
  }
  // The value a transaction of serial id s reads: the last entry below s that is neither
  // IGNORE nor PENDING, waiting for a PENDING one (its writer comes earlier in serial order,
  // so it never waits for this reader: no deadlock). *waited counts entries waited on.
  const char* read_below(Sid s, uint64_t* waited) const {
    uint32_t i = index_of(s);
    for (;;) {
      i--;  // entry 0 (the initial version) is never PENDING or IGNORE
      const char* val = v[i].load();
      if (val == kPending) {
        ++*waited;
        val = wait_written(i);
      }
      if (val != kIgnore) return val;
    }
  }
  bool is_final(uint32_t i) const { return i + 1 == n; }
  // Entry i once it is no longer PENDING. Spins briefly, then yields: the writer may be a
  // thread the OS descheduled (cores shared with other work), which spinning would starve.
  const char* wait_written(uint32_t i) const {
    const char* val;
    for (int spins = 0; (val = v[i].load()) == kPending; spins++) {
      if (spins < 256) _mm_pause();
      else std::this_thread::yield();
    }
    return val;
  }
};

}  // namespace nvt::nvc
