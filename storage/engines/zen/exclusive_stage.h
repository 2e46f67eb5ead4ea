// The exclusive stage for long-running transactions (zen-vldb21 section 3.3.4; Zen+'s adaptive
// execution, zen-plus-journal section 4.1.2): detecting a long transaction, granting it G-EX,
// waiting for the others to drain, and the reclamation and page release at its end.
#pragma once

#include "storage/engines/zen/zen.h"

namespace nvt::zen {

// Start of a transaction (its first lookup) and the exclusive-mode check (section 3.3.4).
template <class CC>
inline bool Zen<CC>::enter(Thread& th) {
  Shared& sh = shared_[th.tid];
  int g = lrt_.holder();
  if (!th.active) {
    if (g >= 0 && g != th.tid) return false;
    // Clock first, then published: reclamation reads the clock before the active list.
    sh.active_since.store(counter_.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
    th.active = true;
    g = lrt_.holder();
  }
  if (g < 0) return true;
  if (g != th.tid) return false;
  if (!th.exclusive) {
    // (A snapshot reader's timestamp is below every writer's anyway: it goes on.)
    if (lrt_.adaptive() && !th.gex_from_begin && !th.snapshot) return restart_privileged(th);
    wait_exclusive(th);
  }
  return true;
}

// Zen+: a transaction that became privileged after it began restarts, keeping G-EX, so that
// its retry takes a CC timestamp above every commit (no other transaction commits meanwhile):
// with its old one, tuples other threads evicted after it began come back from NVM bounded
// above it, and a multi-version CC aborts it even when it runs alone. The abort counts as
// wasted work. Returns false (the access is refused).
template <class CC>
inline bool Zen<CC>::restart_privileged(Thread& th) {
  th.gex_restart = true;
  th.refused = true;
  return false;
}

// G-EX is ours: wait for every other transaction to finish or abort (they abort at their next
// lookup), then run alone.
template <class CC>
inline void Zen<CC>::wait_exclusive(Thread& th) {
  for (int o = 0; o < nthreads_; o++)
    while (o != th.tid && shared_[o].active_since.load(std::memory_order_seq_cst) != 0) {
      dev::pay_debt();
      _mm_pause();
    }
  th.exclusive = true;
  dev::crash_point("zen.exclusive_enter");
}

// A long-running transaction was detected (a Met-Cache region ran out of entries, a garbage
// queue grew past its threshold, or Zen+'s condition 2): the running transaction that touched
// the most tuples gets G-EX.
template <class CC>
inline void Zen<CC>::request_exclusive(LrtCondition why) {
  int best = -1;
  uint64_t most = 0;
  for (int t = 0; t < nthreads_; t++) {
    uint64_t n = shared_[t].accessed.load(std::memory_order_relaxed);
    if (shared_[t].active_since.load() && n > most) { most = n; best = t; }
  }
  if (best >= 0) lrt_.take(best, why);
}

// Zen+'s detecting stage at each access: condition 1 (a transaction that consumes Met-Cache
// entries, i.e. not a snapshot reader, beyond alpha of its region) makes this transaction the
// privileged one (condition 3 is looked at in begin()). False: another one holds G-EX: abort.
template <class CC>
inline bool Zen<CC>::detect(Thread& th, uint32_t table) {
  if (th.exclusive || th.snapshot) return true;
  if (!lrt_.over_alpha(th.txn_accesses, tables_[table]->cache->per_region())) return true;
  if (!lrt_.take(th.tid, LrtCondition::Alpha)) return false;
  if (!th.gex_from_begin) return restart_privileged(th);
  wait_exclusive(th);
  return true;
}

// The end of the exclusive stage (step 4 of section 4.1.2): the thread-cooperative
// reclamation stood still meanwhile, so the privileged transaction moves every thread's
// reclaimable garbage to the free lists (another region's through its owner's inbox), then
// returns the whole pages of its regions left empty to the page manager; every other thread
// does so for its own regions at its next maintain() (a region's free lists are its writer's).
template <class CC>
inline void Zen<CC>::end_exclusive(Thread& th) {
  sync(th);  // its own commit durable: what it superseded becomes reclaimable
  dev::crash_point("zen.exclusive_reclaim");
  const uint64_t min = global_min();
  uint64_t n = 0;
  for (int o = 0; o < nthreads_; o++) {
    std::lock_guard g(shared_[o].gc_mu);
    n += drain(th, threads_[size_t(o)].garbage, min, ~size_t(0));
  }
  lrt_.reclaimed(n);
  for (int o = 0; o < nthreads_; o++)
    if (o != th.tid) shared_[o].free_pages.store(true, std::memory_order_release);
  free_empty_pages(th);
  dev::crash_point("zen.exclusive_exit");
}

// This thread's regions' empty pages back to the page manager (its inbox first: slots others
// reclaimed for it). A page is empty when all its slots are on the free list: no live or
// superseded-but-reachable NVM-tuple, no tombstone, not the region's held LP slot.
template <class CC>
inline void Zen<CC>::free_empty_pages(Thread& th) {
  reclaim(th, 0);
  uint64_t n = 0;
  for (uint32_t r : th.regions)
    n += heap_->region(r).release_empty_pages([](uint64_t) { dev::crash_point("zen.exclusive_free_page"); });
  lrt_.pages_freed(n);
}

}  // namespace nvt::zen
