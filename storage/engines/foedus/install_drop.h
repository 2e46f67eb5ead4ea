// Install/drop pointers (foedus-sigmod15 section 7.5), the gleaner's last step, run with
// transactions paused: every dual pointer gets the new snapshot's page as its snapshot half,
// and a volatile page no transaction modified since the snapshot's epoch is dropped (its pages
// go back to the volatile pool).
#pragma once
#include <atomic>
#include <cstdint>
#include <unordered_map>

#include "storage/engines/foedus/epoch.h"
#include "storage/engines/foedus/gleaner.h"
#include "storage/engines/foedus/tree_storage.h"
#include "storage/engines/foedus/volatile_pool.h"

namespace nvt::foedus {

// An array storage: set the snapshot half of every dual pointer under volatile page `v` (at
// `level`, position `idx`) to the new snapshot; drop each volatile child with no record above
// `epoch` (true: `v` itself may be dropped).
inline bool install_walk(const SnapshotTree& t, VolatilePool& pool, Page* v, int level, uint64_t idx, uint64_t epoch,
                         uint64_t& dropped) {
  if (level == 0) {
    for (uint64_t r = 0; r < t.shape.records(idx); r++) {
      uint64_t tid = v->tid(r, t.shape.g.slot)->load(std::memory_order_relaxed);
      if ((tid >> 63) || epoch_of(tid) > epoch) return false;
    }
    return true;
  }
  bool all = true;
  for (uint64_t c = 0; c < t.shape.children(level, idx); c++) {
    DualPointer& d = *v->child(c);
    uint64_t child = idx * t.shape.g.fanout + c;
    d.snapshot_page.store(t.ptrs[size_t(level) - 1][child], std::memory_order_release);
    Page* cv = d.volatile_page.load(std::memory_order_relaxed);
    if (!cv) continue;
    if (install_walk(t, pool, cv, level - 1, child, epoch, dropped)) {
      d.volatile_page.store(nullptr, std::memory_order_release);
      pool.give(cv);
      dropped++;
    } else {
      all = false;
    }
  }
  return all;
}

// An ordered tree: each leaf pointer whose range the new snapshot has a leaf of gets that leaf
// as its snapshot half, and its volatile leaf is dropped when no record in it is locked, being
// inserted or above the snapshot's epoch; a volatile leaf of another range (split since) keeps
// no snapshot half. Parents adopt foster twins left over first; a leaf still without a pointer
// of its own (no page for the adoption) stays. The pages splits replaced are freed (no
// transaction runs, so none holds them). `unmatched` counts snapshot-only leaf pointers that
// found no leaf of their range (check() reports them).
inline void tree_install_walk(TreeStorage& t, const TreeSnapshot& s, VolatilePool& pool, uint64_t epoch,
                              uint64_t& dropped, std::atomic<uint64_t>& unmatched) {
  t.settle(pool);
  std::unordered_map<uint64_t, const TreeLeaf*> by_low;
  for (const TreeLeaf& l : s.leaves) by_low[l.low] = &l;
  const uint32_t slot = t.g.slot;
  t.visit(0, kInfKey, false, [&](const TreeStorage::Leaf& l) {
    DualPointer* d = l.d;
    if (!d) return true;
    auto it = by_low.find(l.low);
    const TreeLeaf* m = it != by_low.end() && it->second->high == l.high ? it->second : nullptr;
    Page* v = l.v;
    if (!v) {
      if (m) d->snapshot_page.store(m->ptr, std::memory_order_release);
      else unmatched.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    d->snapshot_page.store(m ? m->ptr : 0, std::memory_order_release);
    if (!m) return true;
    for (uint64_t j = 0, n = tp::count(v); j < n; j++) {
      uint64_t w = tp::tid(v, j, slot)->load(std::memory_order_relaxed);
      if ((w & (kTidLock | kTidInserting | kTidMoved)) || epoch_of(w) > epoch) return true;
    }
    d->volatile_page.store(nullptr, std::memory_order_release);
    pool.give(v);
    dropped++;
    return true;
  });
  t.free_retired(pool);
}

}  // namespace nvt::foedus
