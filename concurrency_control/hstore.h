// HSTORE (H-Store as in DBx1000): the database is split into partitions, key % partitions, and
// a transaction runs with exclusive locks on every partition it touches; there is no per-tuple
// metadata at all. DBx1000's transactions name their partitions up front and lock them in
// order before running. Here a transaction discovers its keys as it runs, so it takes each
// partition's lock at the first touch:
//   - free: take it;
//   - held, and the partition number is above every one this transaction holds: wait for it
//     (waits only go to higher numbers, so there is no cycle: the up-front ordered locking,
//     reached incrementally);
//   - held, otherwise: abort (NO_WAIT; ReadConflict or WriteConflict).
// Single-partition fast path: a transaction that stays in one partition takes one lock and
// touches nothing else; repeated touches of the partition it used last cost one compare.
// Partitions: HSTORE_PARTITIONS at compile time (make EXTRA_CXXFLAGS=-DHSTORE_PARTITIONS=n),
// by default one per worker thread (start(threads)); at most kMaxPartitions.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "concurrency_control/cc.h"

#ifndef HSTORE_PARTITIONS
#define HSTORE_PARTITIONS 0  // 0: one per thread
#endif

namespace nvt::cc {

struct HStore {
  static constexpr const char* name = "hstore";
  static constexpr uint32_t kMaxPartitions = 4096;

  struct Meta {};  // partitions, not tuples, are locked
  struct Txn {
    AbortCause cause = AbortCause::None;
    std::vector<uint32_t> held;  // partitions locked, in the order taken
    uint32_t top = 0;            // the highest of them
    uint32_t last = ~0u;         // the partition touched last (fast path)
  };

  static inline uint32_t partitions = 1;

  static void start(int threads) {
    uint64_t p = HSTORE_PARTITIONS ? HSTORE_PARTITIONS : uint64_t(threads);
    if (p < 1 || p > kMaxPartitions)
      throw std::invalid_argument("hstore: partitions must be in [1, " +
                                  std::to_string(kMaxPartitions) + "], got " + std::to_string(p));
    partitions = uint32_t(p);
  }
  static void stop() {}
  static uint32_t partition_of(uint64_t key) { return uint32_t(key % partitions); }

  void begin(Txn& t) {
    t.cause = AbortCause::None;
    t.held.clear();
    t.last = ~0u;
  }

  const char* read(Txn& t, Access& a) {
    if (!enter(t, a, AbortCause::ReadConflict)) return nullptr;
    dev::read(a.row.data, a.len);
    return a.row.data;  // nobody else runs in this partition: read in place
  }
  bool write(Txn& t, Access& a) {
    if (!enter(t, a, AbortCause::WriteConflict)) return false;
    copy_tuple(a.local, a.row.data, a.len);
    return true;
  }
  bool upgrade(Txn&, Access& a) {  // the partition is already ours
    memcpy(a.local, a.row.data, a.len);
    return true;
  }

  bool validate(Txn&, Access*, size_t) { return true; }
  void finish(Txn& t, Access*, size_t) { release(t); }
  void abort(Txn& t, Access*, size_t) { release(t); }

 private:
  static inline std::atomic<uint32_t> lock_[kMaxPartitions]{};  // DRAM, as DBx1000's

  static bool enter(Txn& t, Access& a, AbortCause on_conflict) {
    uint32_t p = partition_of(a.key);
    if (p == t.last) return true;
    t.last = p;
    if (std::find(t.held.begin(), t.held.end(), p) != t.held.end()) return true;
    std::atomic<uint32_t>& l = lock_[p];
    dev::update(&l, sizeof l);
    bool may_wait = t.held.empty() || p > t.top;
    for (uint32_t spins = 0;;) {
      uint32_t free = 0;
      if (l.compare_exchange_strong(free, 1, std::memory_order_acquire)) break;
      if (!may_wait) {
        t.cause = on_conflict;
        t.last = ~0u;
        return false;
      }
      relax(spins);
    }
    t.top = t.held.empty() ? p : std::max(t.top, p);
    t.held.push_back(p);
    return true;
  }

  static void release(Txn& t) {
    for (uint32_t p : t.held) {
      dev::update(&lock_[p], sizeof lock_[p]);
      lock_[p].store(0, std::memory_order_release);
    }
    t.held.clear();
    t.last = ~0u;
  }
};

}  // namespace nvt::cc
