// MVCC: DBx1000's multi-version timestamp ordering. A transaction takes its timestamp T from a
// global counter at begin (an atomic add, no lock). Per tuple: the timestamp wts of the current
// image, rts (the largest T that read it), the writer holding it and a chain of older versions
// (concurrency_control/mv.h).
//   read at T:  the version with the largest wts <= T: the current image (rts raised to T) or a
//               chain node; if a writer with a smaller timestamp holds the tuple, the read waits
//               for its outcome (waits go from larger to smaller timestamps: no deadlock); none
//               left (history reclaimed or lost) aborts, cause ReadConflict. A read of the
//               current image raises rts first and then rechecks the word and the holder
//               (mv::unchanged): the word alone repeats when a holder releases unchanged.
//   write at T: lock the tuple without waiting; abort (WriteConflict) if it is held, if its
//               current wts > T or if a later transaction read it (rts > T).
//   commit:     nothing to validate (the checks ran at access time); the before-image goes to
//               the chain, the engine installs, finish() publishes wts = rts = T.
// Differences from DBx1000: writes become visible at commit (DBx1000 buffers prewrites the
// same way), and there is one pending writer per tuple (the engine keeps one current image).
#pragma once
#include <atomic>
#include <cstdint>

#include "concurrency_control/mv.h"

namespace nvt::cc {

struct Mvcc {
  static constexpr const char* name = "mvcc";
  enum : uint8_t { kNone = 0, kLocked = 1 };

  struct Meta {
    mv::Chain chain;
    std::atomic<uint64_t> rts{0};    // largest T that read the current image
    std::atomic<uint64_t> owner{0};  // T of the writer holding the tuple (0: none, or not yet set)
    // Zen drops this Meta on eviction (mv::History); a refill gets back bounds of what it held.
    mv::History history() const {
      return {mv::ts_of(chain.word.load(std::memory_order_acquire)), rts.load(std::memory_order_acquire)};
    }
    // Refilled from NVM: written at most at bound.wts (0: the loaded image), read at most at
    // bound.rts; readers below bound.wts abort (its older versions are gone).
    void refilled(const mv::History& bound, bool written) {
      chain.word.store(written ? bound.wts : 0, std::memory_order_relaxed);
      rts.store(std::max(bound.rts, written ? bound.wts : 0), std::memory_order_relaxed);
    }
  };
  struct Txn {
    AbortCause cause = AbortCause::None;
    uint64_t ts = 0;
    // Snapshot reader (read-only hint, passed only where the engine asks for it: Zen+); a lost
    // version makes the retry a read-write transaction, as Cicada's.
    bool read_only = false, snapshot_lost = false;
    uint32_t ro_begins = 0;
    mv::Store store{registry()};
  };
  // The transaction manager passes the read-only hint only when the engine asks for snapshot
  // readers (Zen+, storage/engines/zen/lrt.h); elsewhere MVCC stays DBx1000's.
  static constexpr bool kSnapshotOnRequest = true;
  static bool snapshot_reader(const Txn& t) { return t.read_only; }

  static std::atomic<uint64_t>& clock() {
    static std::atomic<uint64_t> c{1};
    return c;
  }
  static mv::Registry& registry() {
    static mv::Registry r;
    return r;
  }

  static void start(int) {}
  static void stop() {}
  static Meta* meta(Access& a) { return static_cast<Meta*>(a.row.meta); }

  void begin(Txn& t) { begin(t, false); }
  void begin(Txn& t, bool read_only) {
    t.cause = AbortCause::None;
    if (t.snapshot_lost) read_only = t.snapshot_lost = false;
    t.read_only = read_only;
    if (read_only) {
      t.ts = mv::begin_snapshot(registry(), t.store.slot(), t.ro_begins,
                                [] { return clock().load(std::memory_order_seq_cst); });
      return;
    }
    t.ts = registry().enter(t.store.slot(), [](uint64_t) {
      return clock().fetch_add(1, std::memory_order_seq_cst) + 1;
    });
  }

  const char* read(Txn& t, Access& a) {
    Meta* m = meta(a);
    mv::Chain& c = m->chain;
    if (t.read_only) {
      const char* p = mv::snapshot_read(m, c, a, t.ts);
      if (!p) t.snapshot_lost = true, t.cause = AbortCause::ReadConflict;
      return p;
    }
    for (uint32_t spins = 0;;) {
      dev::read(m, sizeof *m);
      uint64_t w = c.word.load(std::memory_order_seq_cst);
      uint64_t o = 0;
      if (w & mv::kLock) {
        o = m->owner.load(std::memory_order_seq_cst);
        if (o == 0 || o < t.ts) { relax(spins); continue; }  // its write precedes T: wait
      }
      if (mv::ts_of(w) > t.ts) {  // an older version (wts only grows: no recheck needed)
        mv::Version* v = mv::find(c, t.ts, false);
        if (!v) { t.cause = AbortCause::ReadConflict; return nullptr; }
        copy_tuple(a.local, v->data(), a.len);
        a.tid = v->wts;
        return a.local;
      }
      // T reads the version ts_of(w): raise its rts before rechecking that neither it nor its
      // holder changed, so a writer below T either sees the rts or is seen here.
      mv::raise_rts(m->rts, t.ts);
      // While the holder installs, that version is the before-image it saved (the head).
      if (w & mv::kInstall) {
        mv::Version* v = c.head.load(std::memory_order_acquire);
        if (!v) continue;  // released meanwhile: look again
        copy_tuple(a.local, v->data(), a.len);
      } else {
        mv::optimistic_copy(a);
      }
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if (mv::unchanged(c, w, m->owner, o)) {
        a.tid = mv::ts_of(w);
        return a.local;
      }
    }
  }

  bool write(Txn& t, Access& a) {
    if (t.read_only) { t.cause = AbortCause::User; return false; }
    Meta* m = meta(a);
    uint64_t w;
    if (!mv::try_lock(m->chain, w)) { t.cause = AbortCause::WriteConflict; return false; }
    // Owner before the rts check (both seq_cst): a reader that raises rts after this check
    // sees the owner in mv::unchanged().
    m->owner.store(t.ts, std::memory_order_seq_cst);
    dev::read(&m->rts, sizeof m->rts);
    if (mv::ts_of(w) > t.ts || m->rts.load(std::memory_order_seq_cst) > t.ts) {
      unlock(*m);
      t.cause = AbortCause::WriteConflict;
      return false;
    }
    a.held = kLocked;
    a.tid = mv::ts_of(w);
    copy_tuple(a.local, a.row.data, a.len);  // we hold it: no installer
    return true;
  }
  bool upgrade(Txn& t, Access& a) { return write(t, a); }

  bool validate(Txn& t, Access* acc, size_t n) {
    for (size_t i = 0; i < n; i++)
      if (acc[i].held == kLocked)
        t.store.save_before_image(meta(acc[i])->chain, acc[i].row.data, acc[i].len, acc[i].tid,
                                  t.ts, acc[i].tid | mv::kLock);
    return true;
  }

  void finish(Txn& t, Access* acc, size_t n) {
    bool wrote = mv::release_held(acc, n, [&](Access& a) {
      Meta* m = meta(a);
      dev::write(m, sizeof *m);
      mv::publish(m->chain, m->rts, m->owner, t.ts);
    });
    if (wrote) registry().installed(t.store.slot(), t.ts);
    registry().leave(t.store.slot());
    if (!t.read_only) t.store.collect([] { return clock().load(std::memory_order_seq_cst); });
  }

  void abort(Txn& t, Access* acc, size_t n) {
    mv::release_held(acc, n, [](Access& a) { unlock(*meta(a)); });
    registry().leave(t.store.slot());
  }

 private:
  // Release a held tuple unchanged (dropping a saved before-image).
  static void unlock(Meta& m) {
    dev::write(&m, sizeof m);
    mv::release(m.chain, m.owner);
  }
};

}  // namespace nvt::cc
