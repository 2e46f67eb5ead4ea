// The snapshot side of FOEDUS's ordered tree (tree_storage.h; foedus-sigmod15 section 7): the
// gleaner's page table of one tree's snapshot (its leaves in key order, its interior pages),
// writing new snapshot leaves from merged records, cut where the volatile tree's leaves are cut
// (so the volatile leaves they reproduce can be dropped), writing the interior pages above them,
// and reading a snapshot tree back at restart. Snapshot pages are written with non-temporal
// copies to pages the snapshot area hands out in ascending order; the caller fences.
#pragma once
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "storage/engines/foedus/snapshot_area.h"
#include "storage/engines/foedus/tree_page.h"
#include "storage/parallel.h"

namespace nvt::foedus {

// A tree's leaf list: filled a run per thread (its pages first touched there, not zeroed first).
using LeafList = ParallelVector<TreeLeaf>;

struct TreeSnapshot {
  uint32_t id;                            // storage (table) id
  TreeGeometry g;
  LeafList leaves;                        // ascending, contiguous, covering [0, kInfKey)
  ParallelVector<SnapshotPtr> interior;   // the snapshot's interior pages (rewritten whole on a change)
  SnapshotPtr root = 0;
  std::vector<uint64_t> bounds;      // the volatile leaves' low keys, taken before a gleaning
};

// One record to write into a snapshot leaf (TID without flags).
struct TreeRecord {
  uint64_t key, tid;
  const char* payload;
};

// Write `recs` (ascending, in [low, high)) as snapshot leaves covering [low, high), cut at every
// key of `bounds` inside the range, and a piece that overflows a page into pages of g.fill()
// records; append them to `out`. Returns the pages written.
uint64_t write_tree_leaves(const TreeSnapshot& t, SnapshotArea& area, uint64_t low, uint64_t high,
                           const std::vector<TreeRecord>& recs, const std::vector<uint64_t>& bounds, uint64_t epoch,
                           uint64_t snapshot_id, LeafList& out);

// t.leaves with each changed leaf replaced by its pieces: `changed` holds (leaf number, pieces)
// in ascending leaf order. The unchanged leaves are copied a run per thread, each run at its
// offset in the new list (its start plus the pieces the changes before it added).
void splice_tree_leaves(TreeSnapshot& t, const std::vector<std::pair<uint64_t, const LeafList*>>& changed,
                        int nthreads = 1);

// Told, on each helper thread of a page-writing pass, the device traffic that thread caused (the
// calling thread's own traffic stays on its counters).
using HelperTraffic = std::function<void(const dev::Counters&)>;

// Interior pages worth a thread of their own: fewer are read or written on the calling thread
// (a thread start costs a VM up to half a millisecond).
constexpr size_t kMinRunPages = 64;

// f(begin, end) over runs of [0, n) pages, on up to `nthreads` threads when the pages are many
// enough to pay for the threads' start (a level of interior pages: each page apart from the rest).
template <class F>
void page_runs(size_t n, int nthreads, const HelperTraffic& traffic, F&& f) {
  parallel_runs(n, nthreads, kMinRunPages, [&](size_t begin, size_t end, bool helper) {
    dev::Counters c0 = dev::my_counters();
    f(begin, end);
    if (helper && traffic) traffic(dev::my_counters() - c0);
  });
}

// The interior pages over t.leaves, written anew bottom up (the previous ones retired as one
// list), each level's pages on up to `nthreads` threads; sets t.root and t.interior. Returns the
// pages written.
uint64_t write_tree_interiors(TreeSnapshot& t, SnapshotArea& area, uint64_t epoch, uint64_t snapshot_id,
                              int nthreads = 1, const HelperTraffic& traffic = {});

// Restart: t.leaves, t.interior and t.root from the snapshot tree under `root` (its interior
// pages read, charged), each level's pages on `nthreads` threads, each thread writing what it
// read into the lists at its offset.
void read_tree_snapshot(TreeSnapshot& t, const SnapshotArea& area, SnapshotPtr root, int nthreads = 1);

// Merge the durable log's last writes `upd` (ascending keys, one per key; del: a delete) onto
// the records of snapshot leaf `old` (may be null): a write replaces an older TID only (a restart
// may glean a write twice). Returns the writes that changed something.
struct TreeUpdate {
  uint64_t key, tid;
  const char* payload;
  bool del;
};
uint64_t merge_tree_leaf(const TreeSnapshot& t, const Page* old, const std::vector<TreeUpdate>& upd,
                         std::vector<TreeRecord>& out);

}  // namespace nvt::foedus
