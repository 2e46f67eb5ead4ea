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
      parallel(int(nw), [&](int w) {
        for (uint64_t idx = count * uint64_t(w) / nw; idx < count * uint64_t(w + 1) / nw; idx++) {
          const Page* p = area.page(snapshot_index(t.ptrs[size_t(level)][idx]));
          dev::read(p, ps);
          for (uint64_t c = 0; c < t.shape.children(level, idx); c++)
            t.ptrs[size_t(level) - 1][idx * t.shape.g.fanout + c] = const_cast<Page*>(p)->child(c)->snapshot_page.load();
        }
      });
    }
  }
  for (auto& t : tsnap) {
    read_tree_snapshot(t, area, sm.root[t.id], int(nw));
    t.bounds.clear();  // no volatile tree yet: leaves are cut by size only
  }
  area.reset(sm.high_water, nthreads, [&](int w, int n, auto&& mark) {
    auto share = [&](size_t size, auto&& at) {  // the w-th of n runs of a list of snapshot pointers
      for (size_t i = size * size_t(w) / size_t(n); i < size * size_t(w + 1) / size_t(n); i++) mark(snapshot_index(at(i)));
    };
    for (auto& t : trees)
      for (auto& lv : t.ptrs) share(lv.size(), [&](size_t i) { return lv[i]; });
    for (auto& t : tsnap) {
      share(t.interior.size(), [&](size_t i) { return t.interior[i]; });
      share(t.leaves.size(), [&](size_t i) { return t.leaves[i].ptr; });
    }
  });
}

// The ordered trees' rows: each snapshot leaf's count, from its header, on `nw` threads.
inline uint64_t tree_rows(const std::vector<TreeSnapshot>& tsnap, const SnapshotArea& area, size_t nw) {
  std::vector<uint64_t> rows(nw, 0);
  for (auto& t : tsnap)
    parallel(int(nw), [&](int w) {
      for (size_t i = t.leaves.size() * size_t(w) / nw; i < t.leaves.size() * size_t(w + 1) / nw; i++) {
        const Page* p = area.page(snapshot_index(t.leaves[i].ptr));
        dev::read(p, sizeof(PageHeader));
        rows[size_t(w)] += tp::count(p);
      }
    });
  uint64_t sum = 0;
  for (uint64_t r : rows) sum += r;
  return sum;
}

}  // namespace nvt::foedus
