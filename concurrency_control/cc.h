// The concurrency-control contract. A CC method is a type with:
//   static constexpr const char* name;
//   struct Meta;   per-tuple metadata; the engine stores it where its design says and charges
//                  it through the device model (the CC calls dev::read/update on it)
//   struct Txn;    per-transaction state in DRAM (holds `cause` on abort)
//   static void start(int threads) / stop();   process-wide services (e.g. Silo's epochs)
//   void begin(Txn&);
//   const char* read(Txn&, Access&);     acquire/observe; returns the image the workload reads
//                                        (the tuple or a private copy), nullptr to abort
//   bool write(Txn&, Access&);           acquire for writing and fill a.local with the current
//                                        image (the workload then edits a.local); false aborts
//   bool upgrade(Txn&, Access&);         a read access becomes a write
//   bool validate(Txn&, Access*, size_t) commit phase 1: after it, the engine persists and
//                                        installs the writes; false aborts
//   void finish(Txn&, Access*, size_t)   commit phase 2: publish and release
//   void abort(Txn&, Access*, size_t)    release everything
// The transaction manager (system/txn_manager.h) calls these; no virtual calls anywhere.
#pragma once
#include <x86intrin.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "storage/access.h"
#include "storage/device/device.h"

namespace nvt::cc {

// Copy a tuple image into a private buffer, charged as a read of the tuple.
inline void copy_tuple(char* dst, const char* src, uint32_t len) {
  dev::read(src, len);
  memcpy(dst, src, len);
}

// One step of waiting for another transaction: pause a few times, then give the core away
// (workers may outnumber cores, and the holder may be the one descheduled).
inline void relax(uint32_t& spins) {
  if (++spins < 64) _mm_pause();
  else std::this_thread::yield();
}

// A consistent private copy of a tuple guarded by a version word with a lock bit (Silo's TID,
// TicToc's timestamp word, OCC's install latch): the word before and after the copy agree and
// was unlocked. Returns that word.
inline uint64_t stable_copy(const std::atomic<uint64_t>& word, uint64_t lock_bit, Access& a) {
  for (uint32_t spins = 0;;) {
    dev::read(&word, sizeof word);
    uint64_t w1 = word.load(std::memory_order_acquire);
    if (w1 & lock_bit) { relax(spins); continue; }
    copy_tuple(a.local, a.row.data, a.len);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (word.load(std::memory_order_relaxed) == w1) return w1;
  }
}

}  // namespace nvt::cc
