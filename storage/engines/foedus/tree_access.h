// Master-Tree (foedus-sigmod15 section 8, Appendix C) as transactions and checkers use an
// ordered tree (tree_storage.h): point lookups, inserts and their undo, the cursor scans, and
// records that a split (foster twins, 8.2) moved. What a read relied on goes into the worker's
// node set and pointer set (6.1, D.3), which validate_node_set() (commit.h) checks.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "storage/access.h"
#include "storage/device/device.h"
#include "storage/engines/foedus/dual_pages.h"
#include "storage/engines/foedus/epoch.h"
#include "storage/engines/foedus/tree_storage.h"

namespace nvt::foedus {

// A point lookup: a volatile leaf, else the snapshot leaf read (a read) or installed (a write).
// A lookup that finds no key puts the leaf into the node set (a volatile leaf's version; a
// snapshot leaf's parent version and pointer).
inline bool tree_lookup(Worker& th, DualPages& pages, TreeStorage& t, uint64_t key, RowRef& ref, bool for_write) {
  const uint32_t slot = t.g.slot;
  for (;;) {
    TreeStorage::Leaf l = t.find(key);
    if (l.d) dev::read(l.d, sizeof *l.d);
    Page* v = l.v;
    if (!v) {
      if (!for_write) {
        th.node_set.push_back({tp::version(l.parent), l.parent_version});
        char* copy = th.copy_space(t.g.len);
        bool found = false;
        pages.with_snapshot_page(th, l.sp, [&](const Page* p) {
          int64_t s = tp::find_sorted(p, key, slot);
          if (s >= 0) memcpy(copy, tp::payload(p, uint64_t(s), slot), t.g.len), found = true;
        });
        th.snapshot_reads++;
        if (!found) {
          th.scan_ptrs.push_back(l.d);
          return false;
        }
        ref = RowRef{copy, nullptr, l.d};  // the CC watches d (its pointer set)
        return true;
      }
      Page* np = pages.copy_page(th, l.sp);
      if (!np) {
        pages.refuse(th);
        return false;
      }
      if (!(v = t.install(l.parent, key, np, *pages.pool))) continue;  // the parent split: again
      l.version = tp::ver(v) & ~tp::kLocked;
      if (l.version & tp::kMoved) continue;
    }
    int64_t s = tp::find(v, key, slot);
    // A committed delete's tombstone, or an insert not committed: not there, and its word goes
    // into the node set (an insert's commit, or a claim of the tombstone, changes it).
    if (s >= 0) {
      std::atomic<uint64_t>* w = tp::tid(v, uint64_t(s), slot);
      uint64_t cur = w->load(std::memory_order_acquire);
      if (cur & kTidAbsent) {
        th.node_set.push_back({w, cur});
        s = -1;
      }
    }
    if (s < 0) {
      th.node_set.push_back({tp::version(v), l.version});  // read before the records
      return false;
    }
    ref = RowRef{tp::payload(v, uint64_t(s), slot), tp::tid(v, uint64_t(s), slot), v};
    th.volatile_reads++;
    return true;
  }
}

// An insert (TxnManager::insert): the key's record, being inserted (invisible: kTidAbsent |
// kTidInserting) until the commit. False: the key is present or being inserted (or no DRAM
// page: th.refusal says so).
inline bool tree_insert(Worker& th, DualPages& pages, TreeStorage& t, uint64_t key, RowRef& ref,
                        uint64_t snapshot_epoch) {
  Page* leaf = nullptr;
  uint64_t before = 0;
  TreeStorage::Insert r =
      t.insert(key, *pages.pool, [&](SnapshotPtr sp) { return pages.copy_page(th, sp); }, ref, leaf, before, snapshot_epoch);
  if (r == TreeStorage::Insert::NoPage) {
    pages.refuse(th);
    return false;
  }
  if (r == TreeStorage::Insert::Duplicate) return false;
  // This transaction's own insert does not invalidate its own scan of the leaf, nor its own
  // lookup that found the key absent.
  auto* word = static_cast<std::atomic<uint64_t>*>(ref.meta);
  for (auto& [v, seen] : th.node_set)
    if (v == tp::version(leaf) && seen == before) seen = before + 1;
  std::erase_if(th.node_set, [&](const auto& e) { return e.first == word; });
  th.inserted.push_back(word);
  return true;
}

// The current copy of a moved record (false: none, the split left it behind).
inline bool tree_relocate(TreeStorage& t, Access& a) {
  for (;;) {
    Page* v = t.find(a.key).v;
    int64_t s = v ? tp::find(v, a.key, t.g.slot) : -1;
    if (s < 0) return false;
    std::atomic<uint64_t>* w = tp::tid(v, uint64_t(s), t.g.slot);
    if (w->load(std::memory_order_acquire) & kTidMoved) {  // a split still copying it (we hold no lock)
      std::this_thread::yield();
      continue;
    }
    a.row = RowRef{tp::payload(v, uint64_t(s), t.g.slot), w, v};
    return true;
  }
}

// The insert's transaction aborted: its record becomes a tombstone (wherever splits moved it).
inline void tree_undo_insert(TreeStorage& t, Access& a) {
  for (;;) {
    auto* w = static_cast<std::atomic<uint64_t>*>(a.row.meta);
    uint64_t cur = w->load(std::memory_order_acquire);
    if (cur & kTidMoved) {
      if (!tree_relocate(t, a)) return;
      continue;
    }
    if (w->compare_exchange_weak(cur, cur & ~kTidInserting, std::memory_order_acq_rel)) return;
  }
}

// A cursor scan (Appendix C) of keys in [lo, hi] (lo <= hi, limit > 0), ascending or
// descending, appended to `out` up to `limit`. With a worker, the leaves it covered go into the
// node set (a volatile leaf's version, which an insert bumps; a snapshot leaf's parent version
// and dual pointer), and so do the words of the absent records it passed over (an insert not
// yet committed, a tombstone). Without one (checkers at quiescence), snapshot leaves are read
// directly in NVM.
inline void tree_scan(Worker* th, DualPages& pages, TreeStorage& t, uint64_t lo, uint64_t hi, size_t limit,
                      std::vector<uint64_t>& out, bool reverse) {
  const uint32_t slot = t.g.slot;
  std::vector<uint64_t> keys;
  t.visit(lo, hi, reverse, [&](const TreeStorage::Leaf& l) {
    keys.clear();
    if (Page* v = l.v) {
      if (th) th->node_set.push_back({tp::version(v), l.version});  // read before the records
      uint64_t n = tp::count_acq(v);
      dev::read(v, sizeof(PageHeader) + n * slot);
      for (uint64_t j = 0; j < n; j++) {
        uint64_t k = tp::key(v, j, slot);
        if (k < lo || k > hi) continue;
        std::atomic<uint64_t>* word = tp::tid(v, j, slot);
        uint64_t w = word->load(std::memory_order_acquire);
        if (!(w & kTidAbsent)) {
          keys.push_back(k);
        } else if (th && std::find(th->inserted.begin(), th->inserted.end(), word) == th->inserted.end()) {
          th->node_set.push_back({word, w});  // passed over: its insert's commit aborts us
        }
      }
    } else {
      if (th) {
        th->node_set.push_back({tp::version(l.parent), l.parent_version});
        th->scan_ptrs.push_back(l.d);
      }
      auto collect = [&](const Page* p) {
        for (uint64_t j = 0, n = tp::count(p); j < n; j++)
          if (uint64_t k = tp::key(p, j, slot); k >= lo && k <= hi) keys.push_back(k);
      };
      if (th) pages.with_snapshot_page(*th, l.sp, collect);
      else collect(pages.read_snapshot_page(l.sp));
    }
    std::sort(keys.begin(), keys.end());
    if (reverse) std::reverse(keys.begin(), keys.end());
    for (uint64_t k : keys) {
      out.push_back(k);
      if (out.size() == limit) return false;
    }
    return true;
  });
}

// The current image of a record (checkers, at quiescence); version = its TID.
inline bool tree_read_current(const DualPages& pages, TreeStorage& t, uint64_t key, char* out, uint64_t& version) {
  const uint32_t slot = t.g.slot;
  TreeStorage::Leaf l = t.find(key);
  if (Page* v = l.v) {
    int64_t s = tp::find(v, key, slot);
    if (s < 0) return false;
    uint64_t w = tp::tid(v, uint64_t(s), slot)->load();
    if (w & kTidAbsent) return false;
    memcpy(out, tp::payload(v, uint64_t(s), slot), t.g.len);
    version = w & kTidBits;
    return true;
  }
  const Page* p = pages.read_snapshot_page(l.sp);
  int64_t s = tp::find_sorted(p, key, slot);
  if (s < 0) return false;
  memcpy(out, tp::payload(p, uint64_t(s), slot), t.g.len);
  version = tp::tid(p, uint64_t(s), slot);
  return true;
}

}  // namespace nvt::foedus
