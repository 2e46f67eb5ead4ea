// Zen's log-free recovery: Algorithm 2 of papers/zen-vldb21.txt (section 3.3.3; the journal
// version's per-thread form). One call scans one per-thread NVM-tuple heap region in a single
// pass: ts-commit is the largest Tx-CTS of an LP tuple seen so far; a tuple at or below it
// belongs to a committed transaction (a region is written by one thread, whose Tx-CTS only
// grow, and a thread sets LP only after all its earlier transactions are durable); a tuple above
// it is uncertain and revisited once the whole region is seen. A transaction's tuples without LP
// are thus validated against its LP tuple (same Tx-CTS, same region): if the LP tuple never
// became durable, they are above the final ts-commit and the slot is marked empty.
// Idempotent: committed tuples are never modified, so a re-run finds the same ts-commit.
// Deletes: a committed tombstone (deleted bit) is a version like any other, so it wins over the
// older versions of its key here; Zen::recover() then invalidates those older versions and only
// after a fence frees the tombstone and drops its key from the index.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "storage/device/device.h"
#include "storage/engines/zen/met_cache.h"
#include "storage/engines/zen/nvm_tuple.h"
#include "storage/parallel.h"

namespace nvt::zen {

struct ScanResult {
  uint64_t ts_commit = 0;
  char* lp_slot = nullptr;  // the LP tuple that set ts-commit: held back from reuse
  uint64_t max_cts = 0;     // largest Tx-CTS in any header (the clock restarts above it)
  uint64_t scanned = 0, committed = 0, pending = 0, discarded = 0;
};

// Lines 1-7, safe for several recovery threads at once: keep the newer version in the index and
// free the older. `Index` offers HashIndex's lookup/insert/update over nvm_value() values.
// True when t's key was not in the index before (so the callers count keys without a pass).
template <class Index, class Free>
bool update_index_gc(Index& index, NvmTuple* t, Free&& put_free) {
  const uint64_t key = t->key(), mine = nvm_value(reinterpret_cast<char*>(t));
  for (;;) {
    uint64_t cur = index.lookup(key);
    if (cur == 0) {  // no existing version
      if (index.insert(key, mine)) return true;
      continue;
    }
    NvmTuple* p = NvmTuple::at(nvm_of(cur));
    if (t->cts() < p->cts()) { put_free(t); return false; }  // t is old
    if (index.update(key, cur, mine)) { put_free(p); return false; }  // p is old
  }
}

// One share of a region's scan: a run of its pages, in scan order. Several threads can scan one
// region's shares at once; the paper's single pass is the case of one share per region.
struct ScanShare {
  ScanResult r;
  std::vector<NvmTuple*> pending;  // above the share's own ts-commit: decided by the region's
};

// Lines 8-18 over one share. `for_each_slot(f)` calls f(char* slot) for every slot of the share
// in scan order (tables in persist order, so LP tuples come early). A tuple at or below the
// share's ts-commit is committed (the region's ts-commit is at least as large).
template <class ForEach, class IndexGC, class Free>
void scan_share(ScanShare& s, ForEach&& for_each_slot, IndexGC&& index_gc, Free&& put_free) {
  ScanResult& r = s.r;
  for_each_slot([&](char* slot) {
    NvmTuple* t = NvmTuple::at(slot);
    dev::read(t, kHeaderBytes);
    r.scanned++;
    uint64_t cts = t->cts();
    r.max_cts = std::max(r.max_cts, cts);
    if (t->lp() && cts >= r.ts_commit) {  // lines 11-12
      r.ts_commit = cts;
      r.lp_slot = slot;
    }
    if (cts == 0) { put_free(t); return; }  // lines 13-14 (tombstones are versions: see above)
    if (cts <= r.ts_commit) {  // lines 15-16: committed
      index_gc(t);
      r.committed++;
    } else {
      s.pending.push_back(t);  // line 18: uncertain
    }
  });
  r.pending = s.pending.size();
}

// The region's ts-commit, LP tuple and largest Tx-CTS from its shares (in scan order: on a tie
// the later LP tuple, as one pass finds it), and the sums of their counts.
inline ScanResult merge_shares(const std::vector<ScanShare>& shares) {
  ScanResult m;
  for (const ScanShare& s : shares) {
    if (s.r.lp_slot && s.r.ts_commit >= m.ts_commit) {
      m.ts_commit = s.r.ts_commit;
      m.lp_slot = s.r.lp_slot;
    }
    m.max_cts = std::max(m.max_cts, s.r.max_cts);
    m.scanned += s.r.scanned;
    m.committed += s.r.committed;
    m.pending += s.r.pending;
    m.discarded += s.r.discarded;
  }
  return m;
}

// Lines 19-24 over one share's pending tuples against the region's ts-commit. The caller fences
// (line 25) before the discarded slots are reused.
template <class IndexGC, class Free>
void resolve_pending(ScanShare& s, uint64_t ts_commit, IndexGC&& index_gc, Free&& put_free) {
  for (NvmTuple* t : s.pending) {
    if (t->cts() <= ts_commit) {
      index_gc(t);
      s.r.committed++;
    } else {  // the crash hit this transaction's persist: mark the slot empty
      t->set_cts(0, false);
      dev::flush(t, kHeaderBytes);
      put_free(t);
      s.r.discarded++;
    }
  }
  s.pending.clear();
}

// Lines 8-25 over one region in one pass (one share).
template <class ForEach, class IndexGC, class Free>
ScanResult scan_region(ForEach&& for_each_slot, IndexGC&& index_gc, Free&& put_free) {
  std::vector<ScanShare> one(1);
  scan_share(one[0], for_each_slot, index_gc, put_free);
  resolve_pending(one[0], one[0].r.ts_commit, index_gc, put_free);
  dev::fence();  // line 25
  return merge_shares(one);
}

// Recovery's free slots (freed[w] from thread w) to their regions' lists, for the engines on
// Zen's page manager: each thread sorts its slots by region, then each region's lists are filled
// by one thread (a region's lists are its own), so the step runs on as many threads as regions.
template <class Pages, class Regions>
void put_free_by_region(int nthreads, const std::vector<std::vector<char*>>& freed, const Pages& pages,
                        Regions& regions) {
  const size_t n = freed.size(), nregions = regions.size();
  std::vector<std::vector<std::vector<char*>>> by_region(n, std::vector<std::vector<char*>>(nregions));
  parallel(int(n), [&](int w) {
    for (char* s : freed[size_t(w)]) by_region[size_t(w)][pages.region_of(s)].push_back(s);
  });
  parallel(std::max(1, nthreads), [&](int w) {
    for (size_t r = size_t(w); r < nregions; r += size_t(std::max(1, nthreads)))
      for (auto& b : by_region)
        for (char* s : b[r]) regions[r]->put(pages.table_of(s), s, true);
  });
}

}  // namespace nvt::zen
