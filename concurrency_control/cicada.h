// CICADA (Lim et al., SIGMOD'17): optimistic multi-version concurrency control with per-thread
// loosely synchronized clocks, on this testbed's contract.
//   Clocks:     a timestamp is (TSC since start, at least the thread's last + 1) << 8 | slot, so
//               no allocation is shared. One-sided synchronization: a clock that finds itself
//               behind (a version newer than its timestamp, or a watermark announced above it)
//               jumps forward; it never waits for the others.
//   Versions:   the newest committed version is inlined, always: it is the engine's tuple image.
//               Older committed versions live out of place in a DRAM chain (mv.h). A pending
//               version is the tuple's lock plus its writer's timestamp (`holder`), installed at
//               validation; it becomes committed in finish(), or aborted (the lock is dropped and
//               the image never changed). One pending version per tuple: a second installer
//               aborts (WriteConflict) where Cicada could stack them, as the engine keeps one
//               image.
//   Read at ts: the newest committed version with wts < ts; a pending version below ts is
//               waited for (waits go from larger to smaller timestamps: no deadlock). None
//               (history reclaimed, or lost on a Zen refill) aborts, cause ReadConflict.
//   Validation: the write set sorted by contention (the newest write first: a recently written
//               tuple is the likeliest to conflict) installs its pending versions, aborting as
//               early as possible if a version newer than the one read exists (Validation), a
//               later transaction already read it (rts > ts, Validation) or another pending
//               version is there (WriteConflict). Then the reads, in the same order, raise the
//               rts of the version read to ts and check it is still the version visible at ts.
//   Read-only:  a transaction begun with the read-only hint reads at min_wts - 1, below every
//               running or future writer: nothing can change its snapshot, so it neither waits,
//               validates nor updates rts; it never aborts unless a version it needs was lost
//               to a Zen refill, and then retries at a read-write timestamp (a snapshot held
//               back by a stalled writer would fail again). A write in such a transaction
//               aborts it (cause User).
//   GC:         superseded versions are reclaimed into per-thread pools once min_wts (and every
//               snapshot reader) has passed them (mv.h); chains are cut behind the oldest
//               version any reader can still reach.
// Not modelled: Cicada's contention-regulated backoff (the driver's retry policy applies),
// its rapid garbage-collection leader thread (each thread refreshes min_wts every 16 commits).
#pragma once
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "concurrency_control/mv.h"

namespace nvt::cc {

struct Cicada {
  static constexpr const char* name = "cicada";
  static constexpr int kSlotBits = 8;
  enum : uint8_t { kNone = 0, kLocked = 1 };

  // word: kLock (a pending version) | kInstall | wts; rts: the largest ts that read the current
  // version; holder: the ts of the pending version.
  using Meta = mv::RtsMeta;
  struct Txn : mv::TxnBase<Cicada> {
    uint64_t clock = 0;  // this thread's clock (high bits of its last timestamp)
    std::vector<Access*> ws, rs;  // reused across transactions
    std::vector<std::pair<uint64_t, Access*>> order;  // validate(): contention snapshot
  };

  static mv::Registry& registry() { return mv::registry_of<Cicada>(); }
  static uint64_t tsc() {
    static const uint64_t base = __rdtsc();
    return __rdtsc() - base;
  }
  static uint64_t now() { return tsc() << kSlotBits; }

  static void start(int) {}
  static void stop() {}
  static Meta* meta(Access& a) { return static_cast<Meta*>(a.row.meta); }
  // This attempt reads at min_wts - 1 (read-only hint taken): it never waits, validates or
  // writes metadata (Zen+ serves its Met-Cache misses from NVM).
  static bool snapshot_reader(const Txn& t) { return t.read_only; }

  void begin(Txn& t) { begin(t, false); }
  // A snapshot that lacked a version (lost on a Zen refill) is as old as the oldest running
  // writer, which may stay so for long (descheduled): the retry reads at a timestamp of its own,
  // validated like any read-write transaction's, instead of failing the same way again.
  void begin(Txn& t, bool read_only) {
    const uint64_t slot = uint64_t(t.store.slot());
    mv::begin(registry(), t, read_only, [] { return now(); }, [&](uint64_t floor) {
      t.clock = std::max({t.clock + 1, tsc(), (floor >> kSlotBits) + 1});
      return t.clock << kSlotBits | slot;
    });
  }

  const char* read(Txn& t, Access& a) {
    Meta* m = meta(a);
    mv::Chain& c = m->chain;
    for (uint32_t spins = 0;;) {
      dev::read(m, sizeof *m);
      uint64_t w = c.word.load(std::memory_order_seq_cst);
      if ((w & mv::kLock) && !t.read_only) {
        uint64_t p = m->holder.load(std::memory_order_seq_cst);
        if (p == 0 || p < t.ts) { relax(spins); continue; }  // pending below ts: wait
      }
      if (mv::ts_of(w) >= t.ts || (w & mv::kInstall)) {
        mv::Version* v = mv::find(c, t.ts, true);
        if (!v) {
          t.snapshot_lost = t.read_only;
          behind(t, w, AbortCause::ReadConflict);
          return nullptr;
        }
        return mv::read_version(a, v);
      }
      if (const char* p = mv::read_current(c, a, w)) return p;
    }
  }

  // Writes are buffered (a.local) until validation. A write over a version that is not the
  // newest one would fail validation: abort now.
  bool write(Txn& t, Access& a) {
    if (t.read_only) { t.cause = AbortCause::User; return false; }
    if (!read(t, a)) return false;
    uint64_t w = meta(a)->chain.word.load(std::memory_order_acquire);
    if (mv::ts_of(w) != a.tid) { behind(t, w, AbortCause::WriteConflict); return false; }
    return true;
  }
  bool upgrade(Txn& t, Access&) {
    if (t.read_only) { t.cause = AbortCause::User; return false; }
    return true;
  }

  bool validate(Txn& t, Access* acc, size_t n) {
    if (t.read_only) return true;
    t.ws.clear();
    t.rs.clear();
    for (size_t i = 0; i < n; i++) (acc[i].type == AccessType::Read ? t.rs : t.ws).push_back(&acc[i]);
    if (t.ws.empty() && t.rs.empty()) return true;
    // Contention order: the most recently written tuple first (ties: address order). The
    // write timestamps are read once, before sorting: other transactions change them meanwhile,
    // and a comparator whose answers change is undefined behaviour for std::sort.
    auto by_contention = [&](std::vector<Access*>& v) {
      t.order.clear();
      for (Access* a : v)
        t.order.push_back({mv::ts_of(meta(*a)->chain.word.load(std::memory_order_relaxed)), a});
      std::sort(t.order.begin(), t.order.end(), [](const auto& x, const auto& y) {
        return x.first != y.first ? x.first > y.first : x.second->row.meta < y.second->row.meta;
      });
      for (size_t i = 0; i < v.size(); i++) v[i] = t.order[i].second;
    };
    by_contention(t.ws);
    by_contention(t.rs);
    // Pending version installation (with the early checks).
    for (Access* a : t.ws) {
      Meta* m = meta(*a);
      uint64_t w;
      if (!mv::try_lock(m->chain, w)) { t.cause = AbortCause::WriteConflict; return false; }
      a->held = kLocked;
      m->holder.store(t.ts, std::memory_order_seq_cst);
      if (mv::ts_of(w) != a->tid) { behind(t, w, AbortCause::Validation); return false; }
      dev::read(&m->rts, sizeof m->rts);
      if (m->rts.load(std::memory_order_seq_cst) > t.ts) return fail(t);
    }
    // Read timestamp update and version consistency check.
    for (Access* a : t.rs) {
      Meta* m = meta(*a);
      for (uint32_t spins = 0;;) {
        dev::read(m, sizeof *m);
        uint64_t w = m->chain.word.load(std::memory_order_seq_cst);
        uint64_t p = 0;
        if (w & mv::kLock) {
          p = m->holder.load(std::memory_order_seq_cst);
          if (p == 0 || p < t.ts) { relax(spins); continue; }
        }
        if (mv::ts_of(w) > t.ts) {
          // We read an older version: it must still be the newest below ts. Versions are only
          // ever added on top, so it is, if it is still in the chain.
          mv::Version* v = mv::find(m->chain, t.ts, true);
          if (!v || v->wts != a->tid) return fail(t);
          break;
        }
        if (mv::ts_of(w) != a->tid) return fail(t);
        mv::raise_rts(m->rts, t.ts);
        if (mv::unchanged(m->chain, w, m->holder, p)) break;
      }
    }
    for (Access* a : t.ws)
      t.store.save_before_image(meta(*a)->chain, *a, t.ts);
    return true;
  }

  void finish(Txn& t, Access* acc, size_t n) {
    bool wrote = mv::release_held(acc, n, [&](Access& a) {
      Meta* m = meta(a);
      dev::write(m, sizeof *m);
      mv::publish(m->chain, m->rts, m->holder, t.ts);  // committed
    });
    mv::committed(registry(), t, wrote ? t.ts : 0, [] { return now(); });
  }

  void abort(Txn& t, Access* acc, size_t n) {
    mv::release_held(acc, n, [](Access& a) {
      Meta* m = meta(a);
      dev::write(m, sizeof *m);
      mv::release(m->chain, m->holder);  // aborted
    });
    registry().leave(t.store.slot());
  }

 private:
  static bool fail(Txn& t) {
    t.cause = AbortCause::Validation;
    return false;
  }
  // Abort with `cause`; a clock found behind the version it met jumps past it.
  static void behind(Txn& t, uint64_t w, AbortCause cause) {
    t.clock = std::max(t.clock, mv::ts_of(w) >> kSlotBits);
    t.cause = cause;
  }
};

}  // namespace nvt::cc
