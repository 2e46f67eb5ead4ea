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

namespace nvt::zen {

struct ScanResult {
  uint64_t ts_commit = 0;
  char* lp_slot = nullptr;  // the LP tuple that set ts-commit: held back from reuse
  uint64_t max_cts = 0;     // largest Tx-CTS in any header (the clock restarts above it)
  uint64_t scanned = 0, committed = 0, pending = 0, discarded = 0;
};

// Lines 1-7, safe for several recovery threads at once: keep the newer version in the index and
// free the older. `Index` offers HashIndex's lookup/insert/update over nvm_value() values.
template <class Index, class Free>
void update_index_gc(Index& index, NvmTuple* t, Free&& put_free) {
  const uint64_t key = t->key(), mine = nvm_value(reinterpret_cast<char*>(t));
  for (;;) {
    uint64_t cur = index.lookup(key);
    if (cur == 0) {  // no existing version
      if (index.insert(key, mine)) return;
      continue;
    }
    NvmTuple* p = NvmTuple::at(nvm_of(cur));
    if (t->cts() < p->cts()) { put_free(t); return; }  // t is old
    if (index.update(key, cur, mine)) { put_free(p); return; }  // p is old
  }
}

// Lines 8-25 over one region. `for_each_slot(f)` calls f(char* slot) for every slot of the
// region in scan order (tables in persist order, so LP tuples come early).
template <class ForEach, class IndexGC, class Free>
ScanResult scan_region(ForEach&& for_each_slot, IndexGC&& index_gc, Free&& put_free) {
  ScanResult r;
  std::vector<NvmTuple*> pending;
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
      pending.push_back(t);  // line 18: uncertain
    }
  });
  r.pending = pending.size();
  for (NvmTuple* t : pending) {  // lines 19-24
    if (t->cts() <= r.ts_commit) {
      index_gc(t);
      r.committed++;
    } else {  // the crash hit this transaction's persist: mark the slot empty
      t->set_cts(0, false);
      dev::flush(t, kHeaderBytes);
      put_free(t);
      r.discarded++;
    }
  }
  dev::fence();  // line 25
  return r;
}

}  // namespace nvt::zen
