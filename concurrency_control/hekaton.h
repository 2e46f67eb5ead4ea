// HEKATON (Larson et al., VLDB'11; DBx1000's HEKATON), serializable optimistic multi-versioning.
// Each version has a begin timestamp (its committer's end timestamp) and an end timestamp (its
// successor's begin; infinity for the current image). A transaction reads at its begin
// timestamp S from the global counter.
//   read at S:   the version whose [begin, end) holds S: the current image or a chain node
//                (concurrency_control/mv.h). The holder of a tuple that is preparing with an end
//                timestamp below S (or about to take one) is waited for: its outcome decides
//                what S sees. A holder that is still active will end after S: the current image
//                is S's version.
//   write:       lock the tuple without waiting (first writer wins): abort, WriteConflict, if
//                it is held or its current image began after S (not S's version).
//   commit:      mark the write set preparing, take the end timestamp C, publish it in the
//                write set, then re-check every read (serializable validation): the version
//                read must still be current, and a holder must end after C; else abort,
//                cause Validation. The before-images go to the chains; finish() publishes C.
// Commit dependencies: none. Speculative reads of preparing versions are replaced by the short
// wait above (a preparing transaction waits for nothing), so no transaction commits on another's
// outcome and there is no cascading abort. A read-only transaction skips validation: what it
// read is the consistent snapshot at S (it waited for every writer that ends before S).
#pragma once
#include <atomic>
#include <cstdint>

#include "concurrency_control/mv.h"

namespace nvt::cc {

struct Hekaton {
  static constexpr const char* name = "hekaton";
  static constexpr uint64_t kPreparing = ~0ull;  // end timestamp being taken
  enum : uint8_t { kNone = 0, kLocked = 1 };

  struct Meta {
    mv::Chain chain;                // word: kLock | kInstall | begin of the current image
    std::atomic<uint64_t> end{0};   // the holder's end timestamp; 0 while active (or none)
    // Zen drops this Meta on eviction (mv::History); a refill gets back a bound of its begin.
    // No read timestamp: a writer's version begins at its end timestamp, above every reader's.
    mv::History history() const { return {mv::ts_of(chain.word.load(std::memory_order_acquire)), 0}; }
    // Refilled from NVM: begun at most at bound.wts (0: the loaded image); readers below it
    // abort (its older versions are gone).
    void refilled(const mv::History& bound, bool written) {
      chain.word.store(written ? bound.wts : 0, std::memory_order_relaxed);
    }
  };
  struct Txn : mv::TxnBase<Hekaton> {  // ts: S
    uint64_t end = 0;  // C
  };
  // The transaction manager passes the read-only hint only when the engine asks for snapshot
  // readers (Zen+, storage/engines/zen/lrt.h); elsewhere a read-only transaction reads at S.
  static constexpr bool kSnapshotOnRequest = true;
  static bool snapshot_reader(const Txn& t) { return t.read_only; }

  static std::atomic<uint64_t>& clock() { return mv::counter_of<Hekaton>(); }
  static mv::Registry& registry() { return mv::registry_of<Hekaton>(); }
  static uint64_t next_ts() { return clock().fetch_add(1, std::memory_order_seq_cst) + 1; }

  static void start(int) {}
  static void stop() {}
  static Meta* meta(Access& a) { return static_cast<Meta*>(a.row.meta); }

  void begin(Txn& t) { begin(t, false); }
  // A snapshot reader reads below every writer's end timestamp: nothing to wait for.
  void begin(Txn& t, bool read_only) {
    t.end = 0;
    mv::begin(registry(), t, read_only, [] { return clock().load(std::memory_order_seq_cst); },
              [](uint64_t) { return next_ts(); });
  }

  const char* read(Txn& t, Access& a) {
    Meta* m = meta(a);
    mv::Chain& c = m->chain;
    if (t.read_only) return mv::snapshot_read(t, m, a);
    for (uint32_t spins = 0;;) {
      dev::read(m, sizeof *m);
      uint64_t w = c.word.load(std::memory_order_seq_cst);
      bool old = mv::ts_of(w) > t.ts;
      if (w & mv::kLock) {
        uint64_t e = m->end.load(std::memory_order_seq_cst);
        if (e == kPreparing || (e && e < t.ts)) { relax(spins); continue; }
        if (being_released(w, e)) { relax(spins); continue; }
        old |= (w & mv::kInstall) != 0;  // ends after S: its before-image is S's version
      }
      if (old) {
        mv::Version* v = mv::find(c, t.ts, false);
        if (!v) { t.cause = AbortCause::ReadConflict; return nullptr; }
        return mv::read_version(a, v);
      }
      if (const char* p = mv::read_current(c, a, w)) return p;
    }
  }

  bool write(Txn& t, Access& a) {
    Meta* m = meta(a);
    return mv::lock_for_write(t, a, m->chain, [&](uint64_t w) { return mv::ts_of(w) > t.ts; },
                              [m] { unlock(*m); });
  }
  bool upgrade(Txn& t, Access& a) { return write(t, a); }

  bool validate(Txn& t, Access* acc, size_t n) {
    bool writes = false;
    for (size_t i = 0; i < n; i++)
      if (acc[i].held == kLocked) {
        Meta* m = meta(acc[i]);
        dev::write(&m->end, sizeof m->end);
        m->end.store(kPreparing, std::memory_order_seq_cst);
        writes = true;
      }
    if (!writes) return true;  // read-only: the snapshot at S
    t.end = next_ts();
    for (size_t i = 0; i < n; i++)
      if (acc[i].held == kLocked) meta(acc[i])->end.store(t.end, std::memory_order_seq_cst);
    for (size_t i = 0; i < n; i++) {
      Access& a = acc[i];
      if (a.type != AccessType::Read) continue;
      Meta* m = meta(a);
      for (uint32_t spins = 0;;) {
        dev::read(m, sizeof *m);
        uint64_t w = m->chain.word.load(std::memory_order_seq_cst);
        if (mv::ts_of(w) != a.tid) return fail(t);  // replaced
        if (!(w & mv::kLock)) break;
        uint64_t e = m->end.load(std::memory_order_seq_cst);
        if (e == kPreparing) { relax(spins); continue; }
        if (being_released(w, e)) { relax(spins); continue; }
        if (e && e < t.end) return fail(t);  // ends before C
        break;                               // active, or ends after C
      }
    }
    for (size_t i = 0; i < n; i++)
      if (acc[i].held == kLocked) t.store.save_before_image(meta(acc[i])->chain, acc[i], t.end);
    return true;
  }

  void finish(Txn& t, Access* acc, size_t n) {
    mv::release_held(acc, n, [&](Access& a) {
      Meta* m = meta(a);
      dev::write(m, sizeof *m);
      m->end.store(0, std::memory_order_seq_cst);
      m->chain.word.store(t.end, std::memory_order_seq_cst);
    });
    mv::committed(registry(), t, t.end, [] { return clock().load(std::memory_order_seq_cst); });
  }

  void abort(Txn& t, Access* acc, size_t n) {
    mv::release_held(acc, n, [](Access& a) { unlock(*meta(a)); });
    registry().leave(t.store.slot());
  }

 private:
  // A locked word with kInstall and no end: the holder has committed (or, after an engine
  // failure, aborted) and is releasing. finish() clears the end before it publishes the new word,
  // so in between the word still names the old version; read() and validate() wait it out
  // (validate() once took it for an active holder ending after C and let cycles commit).
  static bool being_released(uint64_t w, uint64_t e) { return (w & mv::kInstall) && !e; }
  static bool fail(Txn& t) {
    t.cause = AbortCause::Validation;
    return false;
  }
  static void unlock(Meta& m) {
    dev::write(&m, sizeof m);
    mv::release(m.chain, m.end);
  }
};

}  // namespace nvt::cc
