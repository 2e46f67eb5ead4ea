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
  struct Txn {
    AbortCause cause = AbortCause::None;
    uint64_t ts = 0;   // S
    uint64_t end = 0;  // C
    // Snapshot reader (read-only hint, passed only where the engine asks for it: Zen+); a lost
    // version makes the retry a read-write transaction, as Cicada's.
    bool read_only = false, snapshot_lost = false;
    uint32_t ro_begins = 0;
    mv::Store store{registry()};
  };
  // The transaction manager passes the read-only hint only when the engine asks for snapshot
  // readers (Zen+, storage/engines/zen/lrt.h); elsewhere a read-only transaction reads at S.
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
  static uint64_t next_ts() { return clock().fetch_add(1, std::memory_order_seq_cst) + 1; }

  static void start(int) {}
  static void stop() {}
  static Meta* meta(Access& a) { return static_cast<Meta*>(a.row.meta); }

  void begin(Txn& t) { begin(t, false); }
  void begin(Txn& t, bool read_only) {
    t.cause = AbortCause::None;
    t.end = 0;
    if (t.snapshot_lost) read_only = t.snapshot_lost = false;
    t.read_only = read_only;
    if (read_only) {  // below every writer's end timestamp: nothing to wait for
      t.ts = mv::begin_snapshot(registry(), t.store.slot(), t.ro_begins,
                                [] { return clock().load(std::memory_order_seq_cst); });
      return;
    }
    t.ts = registry().enter(t.store.slot(), [](uint64_t) { return next_ts(); });
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
        copy_tuple(a.local, v->data(), a.len);
        a.tid = v->wts;
        return a.local;
      }
      mv::optimistic_copy(a);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if (c.word.load(std::memory_order_seq_cst) == w) {
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
    if (mv::ts_of(w) > t.ts) {
      unlock(*m);
      t.cause = AbortCause::WriteConflict;
      return false;
    }
    a.held = kLocked;
    a.tid = mv::ts_of(w);
    copy_tuple(a.local, a.row.data, a.len);
    return true;
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
      if (acc[i].held == kLocked)
        t.store.save_before_image(meta(acc[i])->chain, acc[i].row.data, acc[i].len, acc[i].tid,
                                  t.end, acc[i].tid | mv::kLock);
    return true;
  }

  void finish(Txn& t, Access* acc, size_t n) {
    mv::release_held(acc, n, [&](Access& a) {
      Meta* m = meta(a);
      dev::write(m, sizeof *m);
      m->end.store(0, std::memory_order_seq_cst);
      m->chain.word.store(t.end, std::memory_order_seq_cst);
    });
    if (t.end) registry().installed(t.store.slot(), t.end);
    registry().leave(t.store.slot());
    if (!t.read_only) t.store.collect([] { return clock().load(std::memory_order_seq_cst); });
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
