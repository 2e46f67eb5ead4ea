// Silo OCC (Tu et al., SOSP'13): reads copy the tuple and remember its TID word; commit locks
// the write set in a global order, takes the epoch (the serialization point), validates that
// every read TID is unchanged and unlocked by others, installs, and publishes a TID larger than
// every TID observed and than the thread's last, within the current epoch.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "concurrency_control/cc.h"

namespace nvt::cc {

struct Silo {
  static constexpr const char* name = "silo";
  static constexpr uint64_t kLock = 1ull << 63;
  static constexpr int kEpochMs = 40;  // Silo's epoch length
  enum : uint8_t { kNone = 0, kLocked = 1 };

  struct Meta {
    std::atomic<uint64_t> word{0};  // kLock | TID (epoch << 32 | sequence)
  };
  struct Txn {
    AbortCause cause = AbortCause::None;
    uint64_t last_tid = 0;   // largest TID this thread committed
    uint64_t commit_tid = 0;
    std::vector<Access*> wset;  // reused across transactions: no allocation per commit
  };

  static std::atomic<uint64_t> epoch;
  static std::atomic<bool> running;
  static std::thread ticker;

  static void start(int) {
    running = true;
    ticker = std::thread([] {
      while (running.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(kEpochMs));
        epoch.fetch_add(1);
      }
    });
  }
  static void stop() {
    running = false;
    if (ticker.joinable()) ticker.join();
  }

  static Meta* meta(Access& a) { return static_cast<Meta*>(a.row.meta); }

  void begin(Txn& t) { t.cause = AbortCause::None; }

  static uint64_t stable_copy(Access& a) { return cc::stable_copy(meta(a)->word, kLock, a); }

  const char* read(Txn&, Access& a) {
    a.tid = stable_copy(a);
    return a.local;
  }
  bool write(Txn&, Access& a) {
    a.tid = stable_copy(a);
    return true;
  }
  bool upgrade(Txn&, Access&) { return true; }  // the copy and its TID are already there

  bool validate(Txn& t, Access* acc, size_t n) { return validate_at(t, acc, n, epoch); }

 protected:
  // Silo's commit phase 1 at the epoch `clock` gives (FOEDUS's engine keeps its own). Accesses
  // without CC metadata (FOEDUS's reads of immutable snapshot pages) are not validated here.
  // `tid_bits`: the TID within a word (FOEDUS's ordered tree keeps flags above it).
  bool validate_at(Txn& t, Access* acc, size_t n, const std::atomic<uint64_t>& clock, uint64_t tid_bits = ~kLock) {
    // Lock the write set in address order so two committers cannot deadlock.
    auto& w = t.wset;
    w.clear();
    for (size_t i = 0; i < n; i++)
      if (acc[i].type != AccessType::Read) w.push_back(&acc[i]);
    std::sort(w.begin(), w.end(), [](Access* x, Access* y) { return x->row.meta < y->row.meta; });
    size_t nw = w.size();
    for (size_t i = 0; i < nw; i++) {
      Meta* m = meta(*w[i]);
      dev::update(m, sizeof *m);
      uint64_t cur = m->word.load(std::memory_order_relaxed);
      for (;;) {
        if (cur & kLock) { _mm_pause(); cur = m->word.load(std::memory_order_relaxed); continue; }
        if (m->word.compare_exchange_weak(cur, cur | kLock, std::memory_order_acquire)) break;
      }
      w[i]->held = kLocked;
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);
    uint64_t e = clock.load(std::memory_order_acquire);
    uint64_t tid = t.last_tid;
    for (size_t i = 0; i < n; i++) {
      Access& a = acc[i];
      if (!a.row.meta) continue;
      Meta* m = meta(a);
      dev::read(m, sizeof *m);
      uint64_t cur = m->word.load(std::memory_order_acquire);
      // Every access read the tuple (writes start from a copy), so every one is validated.
      bool locked_by_other = (cur & kLock) && a.held != kLocked;
      if ((cur & ~kLock) != a.tid || locked_by_other) {
        t.cause = AbortCause::Validation;
        return false;
      }
      tid = std::max(tid, a.tid & tid_bits);
    }
    t.commit_tid = std::max(tid + 1, e << 32);
    t.last_tid = t.commit_tid;
    return true;
  }

 public:
  void finish(Txn& t, Access* acc, size_t n) {
    for (size_t i = 0; i < n; i++) {
      if (acc[i].held != kLocked) continue;
      Meta* m = meta(acc[i]);
      dev::write(m, sizeof *m);
      m->word.store(t.commit_tid, std::memory_order_release);
      acc[i].held = kNone;
    }
  }

  void abort(Txn&, Access* acc, size_t n) {
    for (size_t i = 0; i < n; i++) {
      if (acc[i].held != kLocked) continue;
      Meta* m = meta(acc[i]);
      dev::write(m, sizeof *m);
      m->word.fetch_and(~kLock, std::memory_order_release);
      acc[i].held = kNone;
    }
  }
};

}  // namespace nvt::cc
