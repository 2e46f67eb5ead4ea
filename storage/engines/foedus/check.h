// FOEDUS's invariants at quiescence (the checkers' check()): every snapshot page the page
// tables name has its own header (storage, level, position) and no record above the snapshot's
// epoch or locked; an ordered tree's snapshot leaves are contiguous over every key, each one's
// records sorted in its range with plain TIDs; no volatile record is locked, moved or
// mid-insert; every leaf pointer leads somewhere. Problems the gleaner met (leaf pointers no
// new snapshot leaf matched, torn logs) count too.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/engines/foedus/epoch.h"
#include "storage/engines/foedus/gleaner.h"
#include "storage/engines/foedus/tree_page.h"
#include "storage/engines/foedus/tree_storage.h"

namespace nvt::foedus {

// A log whose durable range (below the durable-epoch marker's LSN) holds bytes that are no log
// record: the marker reached NVM before the records it covers (check_snapshots() reports it).
inline std::vector<std::string> torn_logs(const GleanResult& r, const std::vector<LogRange>& ranges) {
  std::vector<std::string> torn;
  for (size_t i = 0; i < r.torn.size(); i++)
    if (r.torn[i])
      torn.push_back("log " + std::to_string(i) + ": bytes " + std::to_string(r.stop[i]) + " to " +
                     std::to_string(ranges[i].to) +
                     " lie below the durable-epoch marker's LSN but hold no log record (never reached NVM)");
  return torn;
}

inline nlohmann::json check_snapshots(const std::vector<SnapshotTree>& trees, const std::vector<TreeSnapshot>& tsnap,
                                      const std::vector<std::unique_ptr<TreeStorage>>& ordered, const SnapshotArea& area,
                                      uint64_t snapshot_epoch, uint64_t unmatched, const std::vector<std::string>& torn) {
  uint64_t bad = 0;
  std::vector<std::string> ex;
  auto fail = [&](const std::string& m) { if (++bad <= 10) ex.push_back(m); };
  for (auto& t : trees)
    for (size_t level = 0; level < t.ptrs.size(); level++)
      for (uint64_t idx = 0; idx < t.ptrs[level].size(); idx++) {
        const Page* p = area.page(snapshot_index(t.ptrs[level][idx]));
        if (!t.ptrs[level][idx] || p->hdr.storage != t.id || p->hdr.level != level || p->hdr.index != idx) {
          fail("storage " + std::to_string(t.id) + " level " + std::to_string(level) + " page " + std::to_string(idx) +
               " names a snapshot page of another position");
          continue;
        }
        if (level == 0)
          for (uint64_t r = 0; r < t.shape.records(idx); r++) {
            uint64_t tid = const_cast<Page*>(p)->tid(r, t.shape.g.slot)->load();
            if ((tid >> 63) || epoch_of(tid) > std::max<uint64_t>(p->hdr.snapshot_epoch, snapshot_epoch))
              fail("snapshot record " + std::to_string(idx * t.shape.g.per_leaf + r) + " of storage " +
                   std::to_string(t.id) + " locked or above its snapshot's epoch");
          }
      }
  for (size_t i = 0; i < ordered.size(); i++) {
    const TreeSnapshot& t = tsnap[i];
    const std::string name = ordered[i]->info.name;
    uint64_t expect = 0;
    for (const TreeLeaf& l : t.leaves) {
      const Page* p = area.page(snapshot_index(l.ptr));
      if (l.low != expect || l.low >= l.high || p->hdr.storage != t.id || p->hdr.level != 0 || tp::low(p) != l.low ||
          tp::high(p) != l.high) {
        fail(name + ": snapshot leaf [" + std::to_string(l.low) + ", " + std::to_string(l.high) + ") out of place");
        expect = l.high;
        continue;
      }
      expect = l.high;
      for (uint64_t j = 0; j < tp::count(p); j++) {
        uint64_t k = tp::key(p, j, t.g.slot), w = tp::tid(p, j, t.g.slot);
        if (k < l.low || k >= l.high || (j > 0 && k <= tp::key(p, j - 1, t.g.slot)) || (w & ~kTidBits) ||
            epoch_of(w) > std::max<uint64_t>(p->hdr.snapshot_epoch, snapshot_epoch))
          fail(name + ": snapshot record " + std::to_string(k) + " out of order, flagged or above its snapshot's epoch");
      }
    }
    if (expect != kInfKey) fail(name + ": the snapshot leaves stop at key " + std::to_string(expect));
    ordered[i]->visit(0, kInfKey, false, [&](const TreeStorage::Leaf& l) {
      Page* v = l.v;
      if (!v && !l.sp) fail(name + ": leaf pointer at key " + std::to_string(l.low) + " leads nowhere");
      if (v)
        for (uint64_t j = 0; j < tp::count(v); j++)
          if (tp::tid(v, j, t.g.slot)->load() & (kTidLock | kTidInserting | kTidMoved))
            fail(name + ": volatile record " + std::to_string(tp::key(v, j, t.g.slot)) + " locked, moved or mid-insert");
      return true;
    });
  }
  if (unmatched) fail(std::to_string(unmatched) + " snapshot-only leaf pointers found no leaf of their range");
  for (const std::string& t : torn) fail(t);
  return {{"violations", bad}, {"examples", ex}};
}

}  // namespace nvt::foedus
