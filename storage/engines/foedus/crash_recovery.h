// Crash recovery (foedus-sigmod15 section 7.7), the parts that read the last snapshot back:
// its page tables, the ordered trees' leaf lists and the free snapshot pages, from its interior
// pages in NVM; and the rows it holds. The engine's recover() then gleans the logs since that
// snapshot (gleaner.h) and starts with no volatile pages but the roots.
#pragma once
#include <cstdint>
#include <vector>

#include "storage/device/device.h"
#include "storage/engines/foedus/gleaner.h"
#include "storage/engines/foedus/metadata.h"
#include "storage/engines/foedus/snapshot_area.h"
#include "storage/engines/foedus/tree_page.h"
#include "storage/engines/foedus/tree_snapshot.h"
#include "storage/parallel.h"

namespace nvt::foedus {

// The snapshot's page tables and the ordered trees' interiors, from their interior pages, a
// level at a time, each level's pages on `nw` threads; every page they do not name is free.
inline void read_snapshot(std::vector<SnapshotTree>& trees, std::vector<TreeSnapshot>& tsnap, SnapshotArea& area,
                          const SnapshotMeta& sm, uint32_t ps, size_t nw, int nthreads) {
  for (auto& t : trees) {
    t.ptrs.back()[0] = sm.root[t.id];
    for (int level = t.shape.root_level(); level > 0; level--) {
      const uint64_t count = t.shape.pages[size_t(level)];
      // Runs of at least kMinRunPages pages: the levels near the root are read on this thread
      // rather than paying a thread start (up to half a millisecond on a VM) for a page or two.
      parallel_runs(count, int(nw), kMinRunPages, [&](uint64_t lo, uint64_t hi, bool) {
        const uint64_t fanout = t.shape.g.fanout;
        const SnapshotPtr* parents = t.ptrs[size_t(level)].data();
        SnapshotPtr* children = t.ptrs[size_t(level) - 1].data();
        for (uint64_t idx = lo; idx < hi; idx++) {
          const Page* p = area.page(snapshot_index(parents[idx]));
          dev::read(p, ps);
          const uint64_t nc = t.shape.children(level, idx);
          for (uint64_t c = 0; c < nc; c++) children[idx * fanout + c] = const_cast<Page*>(p)->child(c)->snapshot_page.load();
        }
      });
    }
  }
  for (auto& t : tsnap) {
    read_tree_snapshot(t, area, sm.root[t.id], int(nw));
    t.bounds.clear();  // no volatile tree yet: leaves are cut by size only
  }
  area.reset(sm.high_water, nthreads, [&](int w, int n, auto&& mark) {
    // The w-th of n runs of a list of snapshot pointers (bounds and base in locals: mark's byte
    // store could alias them).
    auto share = [&](const auto* list, size_t size, auto&& ptr_of) {
      const size_t lo = size * size_t(w) / size_t(n), hi = size * size_t(w + 1) / size_t(n);
      for (size_t i = lo; i < hi; i++) mark(snapshot_index(ptr_of(list[i])));
    };
    auto same = [](const auto& p) { return p; };
    for (auto& t : trees)
      for (auto& lv : t.ptrs) share(lv.data(), lv.size(), same);
    for (auto& t : tsnap) {
      share(t.interior.data(), t.interior.size(), same);
      share(t.leaves.data(), t.leaves.size(), [](const auto& leaf) { return leaf.ptr; });
    }
  });
}

// The ordered trees' rows: each snapshot leaf's count, from its header, on `nw` threads.
inline uint64_t tree_rows(const std::vector<TreeSnapshot>& tsnap, const SnapshotArea& area, size_t nw) {
  std::vector<uint64_t> rows(nw, 0);
  for (auto& t : tsnap)
    parallel(int(nw), [&](int w) {
      uint64_t mine = 0;  // in a local: neighbouring threads' counts share a cache line
      for (size_t i = t.leaves.size() * size_t(w) / nw; i < t.leaves.size() * size_t(w + 1) / nw; i++) {
        const Page* p = area.page(snapshot_index(t.leaves[i].ptr));
        dev::read(p, sizeof(PageHeader));
        mine += tp::count(p);
      }
      rows[size_t(w)] += mine;
    });
  uint64_t sum = 0;
  for (uint64_t r : rows) sum += r;
  return sum;
}

}  // namespace nvt::foedus
