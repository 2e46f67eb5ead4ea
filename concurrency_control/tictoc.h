// TicToc (Yu et al., SIGMOD'16): optimistic, with timestamps computed lazily from the data
// instead of allocated centrally. Each tuple's word packs a lock bit, the write timestamp wts
// (the commit timestamp of the version) and delta = rts - wts, rts being how long that version
// is known to stay valid. A read copies the tuple and remembers its word. At commit (Algorithm
// 2 of the paper): lock the write set in address order, compute the commit timestamp
//   ts = max(max over writes of rts + 1, max over accesses of wts),
// then validate each read whose rts < ts: its wts must be unchanged and the tuple not locked
// by another committer, and its rts is extended to ts (CAS). Writes install with wts = rts = ts.
// An rts too far above wts for delta's 15 bits moves wts up (section 3.6 of the paper).
// Every write in this contract reads the tuple first, so a write is validated as a read too.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "concurrency_control/cc.h"

namespace nvt::cc {

struct TicToc {
  static constexpr const char* name = "tictoc";
  static constexpr uint64_t kLock = 1ull << 63;
  static constexpr int kDeltaShift = 48;
  static constexpr uint64_t kMaxDelta = (1ull << 15) - 1;
  static constexpr uint64_t kWtsMask = (1ull << kDeltaShift) - 1;
  enum : uint8_t { kNone = 0, kLocked = 1 };

  struct Meta {
    std::atomic<uint64_t> word{0};  // kLock | delta << 48 | wts
  };
  struct Txn {
    AbortCause cause = AbortCause::None;
    uint64_t commit_ts = 0;
    std::vector<Access*> wset;  // reused across transactions
  };

  static uint64_t wts(uint64_t w) { return w & kWtsMask; }
  static uint64_t rts(uint64_t w) { return wts(w) + ((w & ~kLock) >> kDeltaShift); }
  static uint64_t pack(uint64_t wts, uint64_t rts) {
    if (rts - wts > kMaxDelta) wts = rts - kMaxDelta;
    return (rts - wts) << kDeltaShift | wts;
  }

  static void start(int) {}
  static void stop() {}
  static Meta* meta(Access& a) { return static_cast<Meta*>(a.row.meta); }

  void begin(Txn& t) { t.cause = AbortCause::None; }

  const char* read(Txn&, Access& a) {
    a.tid = stable_copy(meta(a)->word, kLock, a);
    return a.local;
  }
  bool write(Txn&, Access& a) {
    a.tid = stable_copy(meta(a)->word, kLock, a);
    return true;
  }
  bool upgrade(Txn&, Access&) { return true; }  // the copy and its word are already there

  bool validate(Txn& t, Access* acc, size_t n) {
    // Lock the write set in address order so two committers cannot deadlock.
    auto& w = t.wset;
    w.clear();
    for (size_t i = 0; i < n; i++)
      if (acc[i].type != AccessType::Read) w.push_back(&acc[i]);
    std::sort(w.begin(), w.end(), [](Access* x, Access* y) { return x->row.meta < y->row.meta; });
    uint64_t ts = 0;
    for (Access* a : w) {
      std::atomic<uint64_t>& word = meta(*a)->word;
      dev::update(&word, sizeof word);
      uint64_t cur = word.load(std::memory_order_relaxed);
      for (uint32_t spins = 0;;) {
        if (cur & kLock) { relax(spins); cur = word.load(std::memory_order_relaxed); continue; }
        if (word.compare_exchange_weak(cur, cur | kLock, std::memory_order_acquire)) break;
      }
      a->held = kLocked;
      // The version we copied must still be the current one.
      if (wts(cur) != wts(a->tid)) return fail(t);
      ts = std::max(ts, rts(cur) + 1);
    }
    for (size_t i = 0; i < n; i++) ts = std::max(ts, wts(acc[i].tid));
    // Validate the reads, extending their rts to ts where needed.
    for (size_t i = 0; i < n; i++) {
      Access& a = acc[i];
      if (a.type != AccessType::Read || rts(a.tid) >= ts) continue;
      std::atomic<uint64_t>& word = meta(a)->word;
      dev::read(&word, sizeof word);
      uint64_t cur = word.load(std::memory_order_acquire);
      for (;;) {
        if (wts(cur) != wts(a.tid)) return fail(t);
        if (rts(cur) >= ts) break;              // already valid at ts
        if (cur & kLock) return fail(t);        // a writer will replace it before ts
        dev::write(&word, sizeof word);
        if (word.compare_exchange_weak(cur, pack(wts(cur), ts), std::memory_order_acq_rel)) break;
      }
    }
    t.commit_ts = ts;
    return true;
  }

  void finish(Txn& t, Access* acc, size_t n) {
    for (size_t i = 0; i < n; i++) {
      if (acc[i].held != kLocked) continue;
      std::atomic<uint64_t>& word = meta(acc[i])->word;
      dev::write(&word, sizeof word);
      word.store(pack(t.commit_ts, t.commit_ts), std::memory_order_release);
      acc[i].held = kNone;
    }
  }

  void abort(Txn&, Access* acc, size_t n) {
    for (size_t i = 0; i < n; i++) {
      if (acc[i].held != kLocked) continue;
      std::atomic<uint64_t>& word = meta(acc[i])->word;
      dev::write(&word, sizeof word);
      word.fetch_and(~kLock, std::memory_order_release);
      acc[i].held = kNone;
    }
  }

 private:
  static bool fail(Txn& t) {
    t.cause = AbortCause::Validation;
    return false;
  }
};

}  // namespace nvt::cc
