// FOEDUS's ordered tree (foedus-sigmod15 section 5 has the Master-tree; this is a simpler tree
// with the same dual pointers, see docs/engines/foedus.md): a B+-tree of `--page-size` pages (tree_page.h)
// over uint64 keys, for the tables TPC-C and YCSB D/E insert into and scan. Every child pointer
// is a dual pointer {volatile page, snapshot page}. The interior pages are always volatile (a
// fraction of a percent of the pages; restart rebuilds them from the snapshot's); a leaf is a
// volatile page where one was installed (a copy of its snapshot page, for a write or an insert)
// and otherwise only its immutable snapshot page, read through the snapshot cache.
//
// Instead of foster twins, structure changes take the tree's latch exclusively: lookups, scans
// and installs of volatile leaves share it, inserts and splits take it alone. Records never move
// within a page; a full leaf is replaced by two new pages (or one, compacted, when tombstones
// fill it): every record of the old page is first marked kTidMoved (waiting for a committer that
// holds its lock), so a transaction holding the old copy aborts at validation, and the old page
// is retired until the gleaner's next pause (no transaction runs then, so none can still hold
// it). OCC stays correct across all this through page versions (tree_page.h): an insert bumps its
// leaf's, a split bumps the replaced page's and the parent's; a scan (or a lookup that finds no
// key) records the versions of the leaves it covered, or for a leaf it read in the snapshot the
// parent's version and the dual pointer (the pointer set), and the transaction aborts at
// pre-commit if any changed (the engine's validate()).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstring>
#include <shared_mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "storage/access.h"
#include "storage/device/dram_budget.h"
#include "storage/engines/foedus/epoch.h"
#include "storage/engines/foedus/tree_page.h"
#include "storage/engines/foedus/volatile_pool.h"
#include "storage/schema.h"

namespace nvt::foedus {

class TreeStorage {
 public:
  struct Step {
    Page* page;
    uint64_t entry;
  };
  enum class Insert { Done, Duplicate, NoPage };

  TreeStorage(const TableInfo& ti, uint32_t page_size) : info(ti), g(page_size, ti.schema.tuple_size(), ti.name) {}

  const TableInfo info;
  const TreeGeometry g;
  mutable std::shared_mutex latch;  // shared: lookups, scans, installs; exclusive: inserts, splits

  Page* root() const { return root_; }
  uint64_t splits() const { return splits_.load(std::memory_order_relaxed); }

  // The dual pointer to the leaf whose range holds `key`, its parent, and the interior pages
  // from the root (latch held).
  DualPointer* leaf_ptr(uint64_t key, Page** parent = nullptr, std::vector<Step>* path = nullptr) const {
    Page* p = root_;
    for (;;) {
      uint64_t i = tp::child_of(p, key);
      if (path) path->push_back({p, i});
      DualPointer* d = tp::entry(p, i);
      if (p->hdr.level == 1) {
        if (parent) *parent = p;
        return d;
      }
      p = d->volatile_page.load(std::memory_order_acquire);
    }
  }

  // Add `key` as a record being inserted (kTidAbsent | kTidInserting, its TID that of the
  // tombstone it reuses, if any) to its volatile leaf, exclusive latch held. `install(d)` makes
  // the volatile copy of a leaf that has none (nullptr: the pool is empty). A full leaf is split
  // first. `version_before`: the leaf's version before this insert bumped it. `snapshot_epoch`:
  // the current snapshot's (a split drops only tombstones of deletes it holds).
  template <class Install>
  Insert insert(uint64_t key, VolatilePool& pool, Install&& install, RowRef& ref, Page*& leaf_out,
                uint64_t& version_before, uint64_t snapshot_epoch) {
    if (key == kInfKey) throw std::invalid_argument("FOEDUS ordered tree " + info.name + ": key 2^64-1 is reserved");
    for (;;) {
      std::vector<Step> path;
      DualPointer* d = leaf_ptr(key, nullptr, &path);
      Page* leaf = d->volatile_page.load(std::memory_order_acquire);
      if (!leaf && !(leaf = install(*d))) return Insert::NoPage;
      int64_t s = tp::find(leaf, key, g.slot);
      if (s >= 0) {
        // Present, or being inserted, is a duplicate; a committed delete's tombstone is claimed.
        std::atomic<uint64_t>* w = tp::tid(leaf, uint64_t(s), g.slot);
        uint64_t cur = w->load(std::memory_order_acquire);
        if ((cur & (kTidAbsent | kTidInserting | kTidLock | kTidMoved)) != kTidAbsent ||
            !w->compare_exchange_strong(cur, cur | kTidInserting, std::memory_order_acq_rel))
          return Insert::Duplicate;
      } else if (tp::count(leaf) == g.per_leaf) {
        if (!split(path, leaf, pool, snapshot_epoch)) return Insert::NoPage;
        continue;  // from the root again
      } else {
        s = int64_t(tp::count(leaf));
        tp::key(leaf, uint64_t(s), g.slot) = key;
        tp::tid(leaf, uint64_t(s), g.slot)->store(kTidAbsent | kTidInserting, std::memory_order_release);
        tp::count(leaf)++;
      }
      version_before = tp::version(leaf)->fetch_add(1, std::memory_order_acq_rel);
      ref = RowRef{tp::payload(leaf, uint64_t(s), g.slot), tp::tid(leaf, uint64_t(s), g.slot), leaf};
      leaf_out = leaf;
      return Insert::Done;
    }
  }

  // Visit the leaf pointers whose ranges meet [lo, hi], in key order (descending when `reverse`),
  // until f(parent, entry, low, high) returns false (latch held). False: f stopped it.
  template <class F>
  bool visit(uint64_t lo, uint64_t hi, bool reverse, F&& f) const {
    return visit(root_, lo, hi, reverse, f);
  }

  // The low key of every leaf, ascending: the gleaner cuts new snapshot leaves there, so that
  // they cover the same ranges as the volatile leaves they replace (which may then be dropped).
  std::vector<uint64_t> leaf_bounds() const {
    std::shared_lock g(latch);
    std::vector<uint64_t> out;
    visit(0, kInfKey, false, [&](Page* p, uint64_t i, uint64_t lo, uint64_t) {
      (void)p, (void)i;
      out.push_back(lo);
      return true;
    });
    return out;
  }

  // A fresh volatile interior over the snapshot leaves `leaves` (load, restart): every volatile
  // page of the tree (leaves and retired pages included) goes back to the pool first.
  void build(const std::vector<TreeLeaf>& leaves, VolatilePool& pool) {
    free_all(pool);
    uint64_t per = std::max<uint64_t>(2, g.fanout * 3 / 4);
    struct Child {
      uint64_t low, high;
      Page* page;
      SnapshotPtr ptr;
    };
    std::vector<Child> level;
    for (const TreeLeaf& l : leaves) level.push_back({l.low, l.high, nullptr, l.ptr});
    uint16_t lv = 1;
    do {
      std::vector<Child> up;
      for (size_t i = 0; i < level.size(); i += per) {
        size_t n = std::min<size_t>(per, level.size() - i);
        Page* p = take(pool);
        tp::init(p, info.id, lv, level[i].low, level[i + n - 1].high);
        for (size_t j = 0; j < n; j++) {
          tp::ekey(p, j) = level[i + j].low;
          tp::entry(p, j)->volatile_page.store(level[i + j].page, std::memory_order_relaxed);
          tp::entry(p, j)->snapshot_page.store(level[i + j].ptr, std::memory_order_relaxed);
        }
        tp::count(p) = n;
        up.push_back({tp::low(p), tp::high(p), p, 0});
      }
      level = std::move(up);
      lv++;
    } while (level.size() > 1);
    root_ = level[0].page;
  }

  // Every volatile page back to the pool (build(), the engine's end).
  void free_all(VolatilePool& pool) {
    if (root_) free_subtree(root_, pool);
    root_ = nullptr;
    free_retired(pool);
  }
  // Pages replaced by splits: no transaction can hold them once none runs (the gleaner's pause).
  uint64_t free_retired(VolatilePool& pool) {
    uint64_t n = retired_.size();
    for (Page* p : retired_) pool.give(p);
    retired_.clear();
    return n;
  }

 private:
  template <class F>
  bool visit(Page* p, uint64_t lo, uint64_t hi, bool reverse, F& f) const {
    uint64_t first = tp::child_of(p, lo), last = tp::child_of(p, hi);
    for (uint64_t j = 0; j <= last - first; j++) {
      uint64_t i = reverse ? last - j : first + j;
      if (p->hdr.level == 1) {
        auto [a, b] = tp::range(p, i);
        if (!f(p, i, a, b)) return false;
      } else if (!visit(tp::entry(p, i)->volatile_page.load(std::memory_order_acquire), lo, hi, reverse, f)) {
        return false;
      }
    }
    return true;
  }

  Page* take(VolatilePool& pool) {
    Page* p = pool.take();
    if (!p)
      throw dev::BudgetError("FOEDUS: the volatile page pool cannot hold the interior pages of ordered tree " +
                             info.name + ": raise --dram-size or lower --p-ratio");
    return p;
  }

  void free_subtree(Page* p, VolatilePool& pool) {
    if (p->hdr.level > 0)
      for (uint64_t i = 0; i < tp::count(p); i++)
        if (Page* c = tp::entry(p, i)->volatile_page.load(std::memory_order_relaxed)) free_subtree(c, pool);
    pool.give(p);
  }

  void retire(Page* p) {
    tp::version(p)->fetch_add(1, std::memory_order_acq_rel);
    retired_.push_back(p);
  }

  // Entry `at` of interior page `p` (not full) becomes {key, child}; the entries from `at` on
  // move one up (field by field, atomically: validators read dual pointers without the latch).
  static void insert_entry(Page* p, uint64_t at, uint64_t key, Page* child) {
    for (uint64_t i = tp::count(p); i > at; i--) {
      tp::ekey(p, i) = tp::ekey(p, i - 1);
      DualPointer* to = tp::entry(p, i);
      const DualPointer* from = tp::entry(p, i - 1);
      to->volatile_page.store(from->volatile_page.load(std::memory_order_relaxed), std::memory_order_relaxed);
      to->snapshot_page.store(from->snapshot_page.load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
    tp::ekey(p, at) = key;
    tp::entry(p, at)->volatile_page.store(child, std::memory_order_release);
    tp::entry(p, at)->snapshot_page.store(0, std::memory_order_release);
    tp::count(p)++;
    tp::version(p)->fetch_add(1, std::memory_order_acq_rel);
  }
  static void replace_entry(Page* p, uint64_t at, Page* child) {
    tp::entry(p, at)->volatile_page.store(child, std::memory_order_release);
    tp::entry(p, at)->snapshot_page.store(0, std::memory_order_release);
    tp::version(p)->fetch_add(1, std::memory_order_acq_rel);
  }

  // Make room in the full leaf at the end of `path` (exclusive latch): if its parent is full,
  // split the highest full page of the full chain above it instead (the caller starts again
  // from the root). False: the pool has no page for it.
  bool split(const std::vector<Step>& path, Page* leaf, VolatilePool& pool, uint64_t snapshot_epoch) {
    size_t k = path.size();
    while (k > 0 && tp::count(path[k - 1].page) >= g.fanout) k--;
    if (k < path.size()) return split_interior(path, k, pool);
    Page* a = pool.take();
    Page* b = a ? pool.take() : nullptr;
    if (!b) {
      if (a) pool.give(a);
      return false;
    }
    // Freeze every record (a committer holding one's lock finishes first); the tombstones of
    // deletes the snapshot already holds stay behind. Whoever holds a record follows it to its
    // copy before validating (the engine's relocate()), an insert not yet committed included.
    // A newer tombstone is copied: a reinsert of its key claims it and so commits with a larger
    // TID than the delete's (a fresh record's TID could be smaller, and the gleaner, which
    // keeps the write of the largest TID, would then drop the reinsert for the delete).
    struct Live {
      uint64_t key, tid, slot;
    };
    std::vector<Live> live;
    for (uint64_t i = 0, n = tp::count(leaf); i < n; i++) {
      std::atomic<uint64_t>* w = tp::tid(leaf, i, g.slot);
      uint64_t cur = w->load(std::memory_order_acquire);
      for (;;) {
        if (cur & kTidLock) {
          std::this_thread::yield();
          cur = w->load(std::memory_order_acquire);
          continue;
        }
        if (w->compare_exchange_weak(cur, cur | kTidMoved, std::memory_order_acq_rel)) break;
      }
      if (!(cur & kTidAbsent) || (cur & kTidInserting) || epoch_of(cur) > snapshot_epoch)
        live.push_back({tp::key(leaf, i, g.slot), cur, i});
    }
    std::sort(live.begin(), live.end(), [](const Live& x, const Live& y) { return x.key < y.key; });
    uint64_t lo = tp::low(leaf), hi = tp::high(leaf);
    // Enough tombstones to make room: one compacted page of the same range; else two halves.
    bool compact = live.size() < g.per_leaf - g.per_leaf / 4 || live.size() < 2;
    size_t half = compact ? live.size() : live.size() / 2;
    uint64_t mid = compact ? hi : live[half].key;
    auto fill = [&](Page* p, uint64_t from, uint64_t to, size_t i0, size_t i1) {
      tp::init(p, info.id, 0, from, to);
      for (size_t i = i0; i < i1; i++) {
        uint64_t j = i - i0;
        tp::key(p, j, g.slot) = live[i].key;
        tp::tid(p, j, g.slot)->store(live[i].tid, std::memory_order_relaxed);
        memcpy(tp::payload(p, j, g.slot), tp::payload(leaf, live[i].slot, g.slot), g.len);
      }
      tp::count(p) = i1 - i0;
    };
    fill(a, lo, mid, 0, half);
    const Step& at = path.back();
    replace_entry(at.page, at.entry, a);
    if (compact) {
      pool.give(b);
    } else {
      fill(b, mid, hi, half, live.size());
      insert_entry(at.page, at.entry + 1, mid, b);
    }
    retire(leaf);
    splits_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  // Split interior page path[k] (full; its parent has room, or it is the root) into two.
  bool split_interior(const std::vector<Step>& path, size_t k, VolatilePool& pool) {
    Page* p = path[k].page;
    Page* a = pool.take();
    Page* b = a ? pool.take() : nullptr;
    Page* r = b && k == 0 ? pool.take() : nullptr;
    if (!b || (k == 0 && !r)) {
      for (Page* x : {a, b})
        if (x) pool.give(x);
      return false;
    }
    uint64_t n = tp::count(p), h = n / 2, mid = tp::ekey(p, h);
    auto fill = [&](Page* q, uint64_t from, uint64_t to, uint64_t i0, uint64_t i1) {
      tp::init(q, info.id, p->hdr.level, from, to);
      for (uint64_t i = i0; i < i1; i++) {
        tp::ekey(q, i - i0) = tp::ekey(p, i);
        tp::entry(q, i - i0)->volatile_page.store(tp::entry(p, i)->volatile_page.load(std::memory_order_relaxed),
                                                  std::memory_order_relaxed);
        tp::entry(q, i - i0)->snapshot_page.store(tp::entry(p, i)->snapshot_page.load(std::memory_order_relaxed),
                                                  std::memory_order_relaxed);
      }
      tp::ekey(q, 0) = from;
      tp::count(q) = i1 - i0;
    };
    fill(a, tp::low(p), mid, 0, h);
    fill(b, mid, tp::high(p), h, n);
    if (k == 0) {
      tp::init(r, info.id, uint16_t(p->hdr.level + 1), tp::low(p), tp::high(p));
      tp::ekey(r, 0) = tp::low(p);
      tp::entry(r, 0)->volatile_page.store(a, std::memory_order_relaxed);
      tp::ekey(r, 1) = mid;
      tp::entry(r, 1)->volatile_page.store(b, std::memory_order_relaxed);
      tp::count(r) = 2;
      root_ = r;
    } else {
      replace_entry(path[k - 1].page, path[k - 1].entry, a);
      insert_entry(path[k - 1].page, path[k - 1].entry + 1, mid, b);
    }
    retire(p);
    return true;
  }

  Page* root_ = nullptr;         // always volatile, interior (level >= 1)
  std::vector<Page*> retired_;   // exclusive latch (or no transaction running)
  std::atomic<uint64_t> splits_{0};
};

}  // namespace nvt::foedus
