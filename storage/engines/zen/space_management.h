// Light-weight NVM space management (zen-vldb21 section 3.4): slots are taken from the
// thread's regions and superseded versions queued as garbage, reclaimed into DRAM free lists
// once no running transaction or unfenced commit can reach them; no NVM write to allocate or
// free a tuple.
#pragma once

#include "storage/engines/zen/zen.h"

namespace nvt::zen {

template <class CC>
inline char* Zen<CC>::take(Thread& th, HeapRegion& r, uint32_t table) {
  return heap_->take(r, table, [&] { reclaim(th, ~size_t(0)); });  // used up: reclaim without bound
}

// Reclamation minimum: nothing a running transaction may still reach, nothing superseded by
// a commit not yet durable. The clock is read before the threads (see enter()).
template <class CC>
inline uint64_t Zen<CC>::global_min() const {
  uint64_t m = counter_.load(std::memory_order_seq_cst);
  for (int t = 0; t < nthreads_; t++) {
    uint64_t a = shared_[t].active_since.load(std::memory_order_seq_cst);
    uint64_t u = shared_[t].unfenced.load(std::memory_order_seq_cst);
    if (a && a < m) m = a;
    if (u && u < m) m = u;
  }
  return m;
}

template <class CC>
inline void Zen<CC>::maintain(Thread& th) {
  reclaim(th, kGcPerTxn);
  if (shared_[th.tid].free_pages.load(std::memory_order_acquire) &&
      shared_[th.tid].free_pages.exchange(false, std::memory_order_acq_rel))
    free_empty_pages(th);
  if (!lrt_.adaptive()) {
    // Zen's trigger (ii): a queue past the threshold that a running transaction holds back.
    // What is reclaimable now (a backlog the stage's end or a finished long transaction left)
    // is reclaimed instead, so the same backlog never enters the stage again.
    if (th.garbage.size() > kGarbageThreshold) {
      reclaim(th, ~size_t(0));
      if (th.garbage.size() > kGarbageThreshold) request_exclusive(LrtCondition::Garbage);
    }
    return;
  }
  // Condition 2, looked at when pages were taken since this thread last looked (a heap whose
  // pages are all in use but whose free lists suffice is the steady state of a small one).
  uint64_t used = heap_->pages().used();
  if (used != th.pages_seen) {
    th.pages_seen = used;
    if (lrt_.holder() < 0 && lrt_.under_beta(heap_->pages().pages() - used, heap_->pages().pages()))
      request_exclusive(LrtCondition::Beta);
  }
}

// Bounded garbage collection: move up to `budget` queue entries below the minimum to the free
// list of the region that owns their slot (another thread's through its inbox).
template <class CC>
inline void Zen<CC>::reclaim(Thread& th, size_t budget) {
  heap_->collect_inbox(th.tid);
  std::lock_guard g(shared_[th.tid].gc_mu);
  if (th.garbage.empty()) return;
  if (th.garbage.front().cts >= th.min_cts) th.min_cts = global_min();
  drain(th, th.garbage, th.min_cts, budget);
}

// Up to `budget` entries of `q` below `min` to the free lists of their slots' regions.
template <class CC>
inline size_t Zen<CC>::drain(Thread& th, std::deque<Garbage>& q, uint64_t min, size_t budget) {
  size_t n = heap_->drain(th.tid, q, min, budget);
  th.reclaimed += n;
  return n;
}

}  // namespace nvt::zen
