// WAIT_DIE two-phase locking (Rosenkrantz et al.; DBx1000's WAIT_DIE): on a conflict an older
// requester waits for younger holders and a younger requester dies, so every wait goes from
// older to younger and no cycle can form. Timestamps come from a global counter at a
// transaction's first start and are kept across its retries, so a transaction that keeps dying
// grows old relative to newer ones and eventually waits instead. A death is recorded as the
// conflict that caused it (ReadConflict or WriteConflict). Locks are held to commit; writes go
// to a private image installed at commit. The lock word is lock2pl.h's holder bitmap.
#pragma once
#include "concurrency_control/lock2pl.h"

namespace nvt::cc {

struct WaitDie : lock2pl::Waiting<WaitDie> {
  static constexpr const char* name = "wait_die";

 private:
  friend lock2pl::Waiting<WaitDie>;
  // Wait while every holder is younger; die as soon as one is older. Holders are re-read at
  // each step, so a waiter never keeps waiting behind an older transaction that took the lock
  // after it started waiting. A waiter publishes whom it waits for in its slot's waits_for (as
  // DL_DETECT does, though nothing here searches it), so an observer can tell a wait from a
  // lock that was free; only a transaction that waited pays the two stores.
  static bool lock(Txn& t, Access& a, uint8_t mode, AbortCause on_die) {
    std::atomic<uint64_t>& waits_for = t.slot.state().waits_for;
    bool waited = false;
    bool ok = lock2pl::acquire(a, t.slot.bit(), mode, [&](uint64_t holders) {
      for (uint64_t h = holders; h; h &= h - 1)
        if (Registry::slot[__builtin_ctzll(h)].ts.load(std::memory_order_acquire) < t.ts) {
          t.cause = on_die;
          return false;
        }
      if (!waited) waits_for.store(holders, std::memory_order_release);
      waited = true;
      return true;
    });
    if (waited) waits_for.store(0, std::memory_order_release);
    return ok;
  }
};

}  // namespace nvt::cc
