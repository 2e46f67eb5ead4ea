// How much FOEDUS takes: the NVM its image needs (metadata, snapshot area, logs) and how its
// DRAM budget splits between the volatile pages (4) and the snapshot cache's frames (7.6).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "storage/device/dram_budget.h"
#include "storage/engine.h"
#include "storage/engines/foedus/gleaner.h"
#include "storage/engines/foedus/snapshot_cache.h"
#include "storage/engines/foedus/tree_storage.h"

namespace nvt::foedus {

// An ordered tree's snapshot pages: leaves half full at worst, the interior above them.
inline uint64_t tree_pages(const TreeGeometry& g, uint64_t capacity) {
  uint64_t leaves = capacity / std::max<uint64_t>(1, g.per_leaf / 2) + 2;
  return leaves + leaves / std::max<uint64_t>(1, g.fanout / 2) + 8;
}
// The snapshot area: pages for three full trees (the current snapshot, the one being written,
// pages retired but not yet free).
inline uint64_t snapshot_pages(const std::vector<TableInfo>& tables, const EngineOptions& o) {
  uint64_t pages = 64;
  for (auto& t : tables)
    pages += 3 * (t.dense ? ArrayShape(Geometry(o.page_size, t.schema.tuple_size(), t.name), t.capacity).total_pages()
                          : tree_pages(TreeGeometry(o.page_size, t.schema.tuple_size(), t.name), t.capacity));
  return pages;
}
// NVM the image needs: metadata, the snapshot area, one log file per thread.
inline uint64_t nvm_bytes(const std::vector<TableInfo>& tables, const EngineOptions& o) {
  return (4ull << 20) + snapshot_pages(tables, o) * o.page_size + uint64_t(o.threads) * (o.log_bytes + (2ull << 20)) +
         (8ull << 20);
}

struct DramSplit {
  uint64_t index_pages;  // volatile pages that stay whatever the data
  uint64_t pool_pages;   // volatile pages for data
  uint64_t frames;       // snapshot cache frames (0: no cache)
};

// DRAM (the one DRAM rule, storage/device/dram_budget.h), once the log buffers and private data
// are charged: the gleaner's page tables are overhead; volatile pages and the snapshot cache's
// frames are the data, together at most database / P (data_left()), 3/4 volatile pages (hot,
// written data, dropped by the gleaner at kPressure fill) and 1/4 snapshot cache (read snapshot
// pages); FOEDUS-NoSC keeps the same volatile pool, with no cache. An eighth of what the whole
// budget has left after that stays free for the gleaner's working memory (charged while it
// lives, foedus.gleaner_work). The pool also holds the index pages.
inline DramSplit split_dram(dev::DramBudget& dram, const std::vector<SnapshotTree>& trees,
                            const std::vector<std::unique_ptr<TreeStorage>>& ordered, int nthreads, uint32_t ps,
                            bool snapshot_cache) {
  uint64_t table_bytes = 0, min_pages = 0;
  for (auto& t : trees) {
    table_bytes += t.shape.total_pages() * sizeof(SnapshotPtr);
    min_pages += 1 + uint64_t(t.shape.root_level()) * uint64_t(nthreads) * 4;  // a root, paths
  }
  for (auto& t : ordered) {  // the leaf list; the interior pages (always volatile) and paths
    uint64_t leaves = t->info.capacity / t->g.fill() + 1;
    table_bytes += leaves * sizeof(TreeLeaf);
    min_pages += leaves / std::max<uint64_t>(2, t->g.fanout * 3 / 4) + 4 + uint64_t(nthreads) * 4;
  }
  dram.charge(table_bytes, "foedus.gleaner_page_tables");
  // What must stay volatile whatever the data (roots, the ordered trees' interior pages at
  // their capacity, a path per thread) is FOEDUS's index: overhead, as other engines' indexes.
  const uint64_t index_pages = min_pages + 16;
  const uint64_t rest = dram.left() - std::min(dram.left(), index_pages * ps);
  const uint64_t data = std::min(dram.data_left(), rest - rest / 8);
  const uint64_t pool_pages = data / 4 * 3 / ps;
  const uint64_t frames = snapshot_cache ? (data - pool_pages * ps) / ps : 0;
  if (snapshot_cache && (frames < SnapshotCache::kMinFrames || frames * SnapshotCache::kOverhead > rest - data))
    throw dev::BudgetError("FOEDUS: its DRAM for data (" + std::to_string(data) + " B of the data cap " +
                           std::to_string(dram.data_cap()) + " B, database / P) holds fewer than " +
                           std::to_string(SnapshotCache::kMinFrames) + " snapshot cache frames of " +
                           std::to_string(ps) + " B beside its volatile pages: lower --p-ratio or --page-size");
  return {index_pages, pool_pages, frames};
}

}  // namespace nvt::foedus
