// NO_WAIT two-phase locking (DBx1000): a conflicting lock request aborts at once, so there is
// no deadlock. Locks are held to commit; writes go to a private image installed at commit.
#pragma once
#include <atomic>
#include <cstdint>

#include "concurrency_control/cc.h"

namespace nvt::cc {

struct NoWait {
  static constexpr const char* name = "no_wait";
  static constexpr uint64_t kEx = 1ull << 63;
  enum : uint8_t { kNone = 0, kShared = 1, kExclusive = 2 };

  struct Meta {
    std::atomic<uint64_t> word{0};  // kEx, or the number of shared holders
  };
  struct Txn {
    AbortCause cause = AbortCause::None;
  };

  static void start(int) {}
  static void stop() {}
  static Meta* meta(Access& a) { return static_cast<Meta*>(a.row.meta); }

  void begin(Txn& t) { t.cause = AbortCause::None; }

  const char* read(Txn& t, Access& a) {
    Meta* m = meta(a);
    dev::update(m, sizeof *m);
    uint64_t w = m->word.load(std::memory_order_relaxed);
    do {
      if (w & kEx) { t.cause = AbortCause::ReadConflict; return nullptr; }
    } while (!m->word.compare_exchange_weak(w, w + 1, std::memory_order_acquire));
    a.held = kShared;
    dev::read(a.row.data, a.len);
    return a.row.data;
  }

  bool write(Txn& t, Access& a) {
    Meta* m = meta(a);
    dev::update(m, sizeof *m);
    uint64_t expect = 0;
    if (!m->word.compare_exchange_strong(expect, kEx, std::memory_order_acquire)) {
      t.cause = AbortCause::WriteConflict;
      return false;
    }
    a.held = kExclusive;
    copy_tuple(a.local, a.row.data, a.len);
    return true;
  }

  bool upgrade(Txn& t, Access& a) {
    Meta* m = meta(a);
    dev::update(m, sizeof *m);
    uint64_t expect = 1;  // we are the only shared holder
    if (!m->word.compare_exchange_strong(expect, kEx, std::memory_order_acquire)) {
      t.cause = AbortCause::WriteConflict;
      return false;
    }
    a.held = kExclusive;
    memcpy(a.local, a.row.data, a.len);
    return true;
  }

  bool validate(Txn&, Access*, size_t) { return true; }  // locks already exclude conflicts

  void finish(Txn&, Access* acc, size_t n) { release(acc, n); }
  void abort(Txn&, Access* acc, size_t n) { release(acc, n); }

 private:
  static void release(Access* acc, size_t n) {
    for (size_t i = 0; i < n; i++) {
      Access& a = acc[i];
      if (a.held == kNone) continue;
      Meta* m = meta(a);
      dev::update(m, sizeof *m);
      if (a.held == kExclusive) m->word.store(0, std::memory_order_release);
      else m->word.fetch_sub(1, std::memory_order_release);
      a.held = kNone;
    }
  }
};

}  // namespace nvt::cc
