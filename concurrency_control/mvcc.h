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

  // rts: the largest T that read the current image; holder: T of the writer holding the tuple.
  using Meta = mv::RtsMeta;
  struct Txn : mv::TxnBase<Mvcc> {};
  // The transaction manager passes the read-only hint only when the engine asks for snapshot
  // readers (Zen+, storage/engines/zen/lrt.h); elsewhere MVCC stays DBx1000's.
  static constexpr bool kSnapshotOnRequest = true;
  static bool snapshot_reader(const Txn& t) { return t.read_only; }

  static std::atomic<uint64_t>& clock() { return mv::counter_of<Mvcc>(); }
  static mv::Registry& registry() { return mv::registry_of<Mvcc>(); }

  static void start(int) {}
  static void stop() {}
  static Meta* meta(Access& a) { return static_cast<Meta*>(a.row.meta); }

  void begin(Txn& t) { begin(t, false); }
  void begin(Txn& t, bool read_only) {
    mv::begin(registry(), t, read_only, [] { return clock().load(std::memory_order_seq_cst); },
              [](uint64_t) { return clock().fetch_add(1, std::memory_order_seq_cst) + 1; });
  }

  const char* read(Txn& t, Access& a) {
    Meta* m = meta(a);
    mv::Chain& c = m->chain;
    if (t.read_only) return mv::snapshot_read(t, m, a);
    for (uint32_t spins = 0;;) {
      dev::read(m, sizeof *m);
      uint64_t w = c.word.load(std::memory_order_seq_cst);
      uint64_t o = 0;
      if (w & mv::kLock) {
        o = m->holder.load(std::memory_order_seq_cst);
        if (o == 0 || o < t.ts) { relax(spins); continue; }  // its write precedes T: wait
      }
      if (mv::ts_of(w) > t.ts) {  // an older version (wts only grows: no recheck needed)
        mv::Version* v = mv::find(c, t.ts, false);
        if (!v) { t.cause = AbortCause::ReadConflict; return nullptr; }
        return mv::read_version(a, v);
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
      if (mv::unchanged(c, w, m->holder, o)) {
        a.tid = mv::ts_of(w);
        return a.local;
      }
    }
  }

  bool write(Txn& t, Access& a) {
    Meta* m = meta(a);
    return mv::lock_for_write(t, a, m->chain, [&](uint64_t w) {
      // Holder before the rts check (both seq_cst): a reader that raises rts after this check
      // sees the holder in mv::unchanged().
      m->holder.store(t.ts, std::memory_order_seq_cst);
      dev::read(&m->rts, sizeof m->rts);
      return mv::ts_of(w) > t.ts || m->rts.load(std::memory_order_seq_cst) > t.ts;
    }, [m] { unlock(*m); });
  }
  bool upgrade(Txn& t, Access& a) { return write(t, a); }

  bool validate(Txn& t, Access* acc, size_t n) {
    for (size_t i = 0; i < n; i++)
      if (acc[i].held == kLocked) t.store.save_before_image(meta(acc[i])->chain, acc[i], t.ts);
    return true;
  }

  void finish(Txn& t, Access* acc, size_t n) {
    bool wrote = mv::release_held(acc, n, [&](Access& a) {
      Meta* m = meta(a);
      dev::write(m, sizeof *m);
      mv::publish(m->chain, m->rts, m->holder, t.ts);
    });
    mv::committed(registry(), t, wrote ? t.ts : 0, [] { return clock().load(std::memory_order_seq_cst); });
  }

  void abort(Txn& t, Access* acc, size_t n) {
    mv::release_held(acc, n, [](Access& a) { unlock(*meta(a)); });
    registry().leave(t.store.slot());
  }

 private:
  // Release a held tuple unchanged (dropping a saved before-image).
  static void unlock(Meta& m) {
    dev::write(&m, sizeof m);
    mv::release(m.chain, m.holder);
  }
};

}  // namespace nvt::cc
