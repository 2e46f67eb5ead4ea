// FOEDUS's ordered tree (foedus-sigmod15 section 5 has the Master-tree; this is a simpler tree
// with the same dual pointers, see docs/engines/foedus.md): a B+-tree of `--page-size` pages (tree_page.h)
// over uint64 keys, for the tables TPC-C and YCSB D/E insert into and scan. Every child pointer
// is a dual pointer {volatile page, snapshot page}. The interior pages are always volatile (a
// fraction of a percent of the pages; restart rebuilds them from the snapshot's); a leaf is a
// volatile page where one was installed (a copy of its snapshot page, for a write or an insert)
// and otherwise only its immutable snapshot page, read through the snapshot cache.
//
// Concurrency as the Master-tree's, with no tree-wide latch. Readers take no lock: they read an
// interior entry between two loads of its page's version word (again if an in-place change ran
// meanwhile) and a leaf's records below its `count` (records never move within a page, and an
// insert publishes `count` after its record). Writers lock only the pages they change (the lock
// bit of the version word): an insert its leaf, an install its leaf's parent (the dual
// pointer's volatile half), a split the page it splits, then the parent that adopts the halves.
// A split never changes the page it splits: it copies the live records (entries) into new pages,
// the foster twins (two halves, or one compacted page when tombstones fill a leaf), names them in
// the old page and marks it moved; a reader that reaches a moved page follows its twins, so the
// split blocks no reader, and a writer that reaches one has the parent adopt the twins (an
// in-place change of the parent, kChanging while entries shift; a full parent splits first; a
// root split installs a new root). The gleaner's pause adopts any twins left over (settle()).
// Before moving a leaf every record is marked kTidMoved (waiting for a committer that holds its
// lock), so a transaction holding the old copy follows it or aborts at validation; moved pages
// are retired until the gleaner's next pause (no transaction runs then, so none can still hold
// one: no reader ever reads a freed page). OCC stays correct through page versions: an insert
// bumps its leaf's, a split bumps (and moves) the replaced page's and an adoption the parent's;
// a scan (or a lookup that finds no key) records the versions of the leaves it covered, or for a
// leaf it read in the snapshot the parent's version and the dual pointer (the pointer set), and
// the transaction aborts at pre-commit if any changed (the engine's validate()). Unlike the
// paper, the Master-tree's permutation-based in-page sort and its layer tree (Masstree's keys
// longer than 8 B) are absent: keys are uint64, leaves unsorted, interiors shifted in place.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <span>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include "storage/access.h"
#include "storage/device/dram_budget.h"
#include "storage/engines/foedus/epoch.h"
#include "storage/engines/foedus/tree_page.h"
#include "storage/engines/foedus/volatile_pool.h"
#include "storage/parallel.h"
#include "storage/schema.h"

namespace nvt::foedus {

class TreeStorage {
 public:
  enum class Insert { Done, Duplicate, NoPage };
  // A leaf as a descent found it.
  struct Leaf {
    Page* parent = nullptr;       // the interior page whose entry names it (null: a foster twin)
    uint64_t parent_version = 0;  // that page's version when the entry was read
    DualPointer* d = nullptr;     // that entry (null: a foster twin)
    Page* v = nullptr;            // the volatile leaf, or null: only the snapshot page `sp`
    uint64_t version = 0;         // v's version before its records were read
    SnapshotPtr sp = 0;
    uint64_t low = 0, high = 0;
  };

  TreeStorage(const TableInfo& ti, uint32_t page_size) : info(ti), g(page_size, ti.schema.tuple_size(), ti.name) {}

  const TableInfo info;
  const TreeGeometry g;

  Page* root() const { return root_.load(std::memory_order_acquire); }
  uint64_t splits() const { return splits_.load(std::memory_order_relaxed); }

  // The leaf whose range holds `key` (no lock taken).
  Leaf find(uint64_t key) const {
    Leaf out;
    visit(key, key, false, [&](const Leaf& l) { return out = l, false; });
    return out;
  }

  // Add `key` as a record being inserted (kTidAbsent | kTidInserting, its TID that of the
  // tombstone it reuses, if any) to its volatile leaf, holding that leaf's lock. `make(sp)`
  // copies snapshot page sp into a fresh volatile page for a leaf that has none (nullptr: the
  // pool is empty). A full leaf is split first (its parent first when that is full).
  // `version_before`: the leaf's version before this insert bumped it. `snapshot_epoch`: the
  // current snapshot's (a split drops only tombstones of deletes it holds).
  template <class Make>
  Insert insert(uint64_t key, VolatilePool& pool, Make&& make, RowRef& ref, Page*& leaf_out, uint64_t& version_before,
                uint64_t snapshot_epoch) {
    if (key == kInfKey) throw std::invalid_argument("FOEDUS ordered tree " + info.name + ": key 2^64-1 is reserved");
    for (;;) {
      // Down to the leaf's parent; a moved page met on the way is adopted first.
      Page* from = nullptr;
      Page* p = root();
      Entry e;
      bool again = false;
      for (;;) {
        if (!read_entry(p, key, e)) {
          again = true;
          if (from && !adopt(from, p, pool)) return Insert::NoPage;
          break;  // (a moved root was replaced already)
        }
        if (p->hdr.level == 1) break;
        from = p;
        p = e.v;
      }
      if (again) continue;
      Page* leaf = e.v;
      if (!leaf) {
        Page* np = make(e.sp);
        if (!np) return Insert::NoPage;
        if (!(leaf = install(p, key, np, pool))) continue;
      }
      uint64_t w = tp::lock(leaf);
      if (w & tp::kMoved) {
        tp::unlock(leaf, w, false);
        if (!adopt(p, leaf, pool)) return Insert::NoPage;
        continue;
      }
      int64_t s = tp::find(leaf, key, g.slot);
      if (s >= 0) {
        // Present, or being inserted, is a duplicate; a committed delete's tombstone is claimed.
        std::atomic<uint64_t>* t = tp::tid(leaf, uint64_t(s), g.slot);
        uint64_t cur = t->load(std::memory_order_acquire);
        if ((cur & (kTidAbsent | kTidInserting | kTidLock | kTidMoved)) != kTidAbsent ||
            !t->compare_exchange_strong(cur, cur | kTidInserting, std::memory_order_acq_rel)) {
          tp::unlock(leaf, w, false);
          return Insert::Duplicate;
        }
      } else if (uint64_t n = tp::count(leaf); n == g.per_leaf) {
        if (tp::count_acq(p) >= g.fanout) {  // room in the parent first, for the adoption
          tp::unlock(leaf, w, false);
          if (!split_interior(p, tp::lock(p), pool)) return Insert::NoPage;
        } else if (!split_leaf(leaf, w, pool, snapshot_epoch) || !adopt(p, leaf, pool)) {
          return Insert::NoPage;
        }
        continue;  // from the root again
      } else {
        s = int64_t(n);
        tp::key(leaf, n, g.slot) = key;
        tp::tid(leaf, n, g.slot)->store(kTidAbsent | kTidInserting, std::memory_order_relaxed);
        tp::store(leaf->hdr.reserved[2], n + 1, std::memory_order_release);  // the record is whole
      }
      version_before = w;
      tp::unlock(leaf, w, true);
      ref = RowRef{tp::payload(leaf, uint64_t(s), g.slot), tp::tid(leaf, uint64_t(s), g.slot), leaf};
      leaf_out = leaf;
      return Insert::Done;
    }
  }

  // The volatile page of the leaf whose range in `parent` holds `key`: `np` (a copy of its
  // snapshot page) unless another was installed first (np goes back to the pool). Null, np
  // given back too: `parent` moved (find the leaf again). Under the parent's lock, so that a
  // split of the parent copies the pointer; it changes no entry, so readers of the parent go on.
  Page* install(Page* parent, uint64_t key, Page* np, VolatilePool& pool) {
    uint64_t w = tp::lock(parent);
    Page* v = nullptr;
    if (!(w & tp::kMoved)) {
      DualPointer* d = tp::entry(parent, tp::child_of(parent, key));
      v = d->volatile_page.load(std::memory_order_acquire);
      if (!v) d->volatile_page.store(v = np, std::memory_order_release);
    }
    tp::unlock(parent, w, false);
    if (v != np) pool.give(np);
    return v;
  }

  // Visit the leaves whose ranges meet [lo, hi], in key order (descending when `reverse`),
  // until f(const Leaf&) returns false; no lock taken. False: f stopped it.
  template <class F>
  bool visit(uint64_t lo, uint64_t hi, bool reverse, F&& f) const {
    return visit(root(), lo, hi, reverse, f);
  }

  // The low key of every leaf, ascending: the gleaner cuts new snapshot leaves there, so that
  // they cover the same ranges as the volatile leaves they replace (which may then be dropped).
  std::vector<uint64_t> leaf_bounds() const {
    std::vector<uint64_t> out;
    visit(0, kInfKey, false, [&](const Leaf& l) { return out.push_back(l.low), true; });
    return out;
  }

  // No transaction running (the gleaner's pause): parents adopt every foster twin left over, so
  // that each leaf has a dual pointer of its own again. Stops early when the pool is empty.
  void settle(VolatilePool& pool) {
    for (;;) {
      Page* from = nullptr;
      Page* x = nullptr;
      if (!moved_child(root(), from, x) || !adopt(from, x, pool)) return;
    }
  }

  // A fresh volatile interior over the snapshot leaves `leaves` (load, restart): every volatile
  // page of the tree (leaves and retired pages included) goes back to the pool first. Each
  // level's pages are filled on `nthreads` threads, each a run of them.
  void build(std::span<const TreeLeaf> leaves, VolatilePool& pool, int nthreads = 1) {
    free_all(pool);
    uint64_t per = std::max<uint64_t>(2, g.fanout * 3 / 4);
    struct Child {
      uint64_t low, high;
      Page* page;
      SnapshotPtr ptr;
    };
    ParallelVector<Child> level;  // the level just built; below the first, the leaves themselves
    size_t count = leaves.size();
    uint16_t lv = 1;
    do {
      auto child = [&](size_t i) {
        return lv == 1 ? Child{leaves[i].low, leaves[i].high, nullptr, leaves[i].ptr} : level[i];
      };
      ParallelVector<Child> up;
      up.resize((count + per - 1) / per);
      const size_t nw = std::min(up.size(), size_t(std::max(1, nthreads)));
      std::atomic<bool> full{false};
      parallel(int(nw), [&](int w) {
        const size_t lo = up.size() * size_t(w) / nw, hi = up.size() * size_t(w + 1) / nw;
        std::fill(up.begin() + long(lo), up.begin() + long(hi), Child{});  // no page yet (a full pool stops the run)
        for (size_t k = lo; k < hi; k++) {
          const size_t i = k * per, n = std::min<size_t>(per, count - i);
          Page* p = pool.take();
          if (!p) return full.store(true);
          tp::init(p, info.id, lv, child(i).low, child(i + n - 1).high);
          for (size_t j = 0; j < n; j++) {
            const Child c = child(i + j);
            tp::ekey(p, j) = c.low;
            tp::entry(p, j)->volatile_page.store(c.page, std::memory_order_relaxed);
            tp::entry(p, j)->snapshot_page.store(c.ptr, std::memory_order_relaxed);
          }
          tp::count(p) = n;
          up[k] = {tp::low(p), tp::high(p), p, 0};
        }
      });
      if (full) {
        for (const Child& c : up)
          if (c.page) pool.give(c.page);
        for (const Child& c : level)
          if (c.page) free_subtree(c.page, pool);
        take(pool);  // the pool is empty: throws the budget error
      }
      level = std::move(up);
      count = level.size();
      lv++;
    } while (count > 1);
    root_.store(level[0].page, std::memory_order_release);
  }

  // Every volatile page back to the pool (build(), the engine's end).
  void free_all(VolatilePool& pool) {
    if (Page* r = root()) free_subtree(r, pool);
    root_.store(nullptr, std::memory_order_release);
    free_retired(pool);
  }
  // Pages replaced by splits: no transaction can hold them once none runs (the gleaner's pause).
  uint64_t free_retired(VolatilePool& pool) {
    std::lock_guard l(retired_mu_);
    uint64_t n = retired_.size();
    for (Page* p : retired_) pool.give(p);
    retired_.clear();
    return n;
  }

 private:
  // An interior page's entry as a reader saw it, between two loads of the page's version.
  struct Entry {
    uint64_t i = 0, low = 0, high = 0, version = 0;
    Page* v = nullptr;
    SnapshotPtr sp = 0;
  };

  // The entry of interior page `p` whose range holds `key`. False: p moved (see its twins). A
  // lock alone (a split copying p, an install) changes no entry, so only a counter change or an
  // in-place change (kChanging) makes the reader read again.
  static bool read_entry(const Page* p, uint64_t key, Entry& e) {
    for (;;) {
      uint64_t w = tp::ver(p);
      if (w & tp::kMoved) return false;
      if (w & tp::kChanging) {
        std::this_thread::yield();
        continue;
      }
      e.i = tp::child_of(p, key);
      std::tie(e.low, e.high) = tp::range(p, e.i);
      const DualPointer* d = tp::entry(p, e.i);
      e.v = d->volatile_page.load(std::memory_order_acquire);
      e.sp = d->snapshot_page.load(std::memory_order_acquire);
      std::atomic_thread_fence(std::memory_order_acquire);
      uint64_t again = tp::version(const_cast<Page*>(p))->load(std::memory_order_relaxed);
      if ((again & ~tp::kLocked) == (w & ~tp::kLocked)) {
        e.version = w & ~tp::kLocked;
        return true;
      }
    }
  }

  // Calls g(twin, lo, hi) for the foster twins of moved page p that meet [lo, hi], in order.
  template <class G>
  static bool twins(const Page* p, uint64_t lo, uint64_t hi, bool reverse, G&& g) {
    Page* m = tp::foster_minor(p);
    Page* M = tp::foster_major(p);
    if (!M) return g(m, lo, hi);
    uint64_t mid = tp::high(m);
    bool minor = lo < mid, major = hi >= mid;
    if (reverse) {
      if (major && !g(M, std::max(lo, mid), hi)) return false;
      return !minor || g(m, lo, std::min(hi, mid - 1));
    }
    if (minor && !g(m, lo, std::min(hi, mid - 1))) return false;
    return !major || g(M, std::max(lo, mid), hi);
  }

  // The leaves under interior page p meeting [lo, hi], entry by entry: each entry is read anew
  // at the key after the last one's range, so an adoption in between skips or repeats nothing.
  template <class F>
  bool visit(const Page* p, uint64_t lo, uint64_t hi, bool reverse, F& f) const {
    for (uint64_t cur = reverse ? hi : lo;;) {
      Entry e;
      if (!read_entry(p, cur, e))
        return twins(p, reverse ? lo : cur, reverse ? cur : hi, reverse,
                     [&](Page* q, uint64_t a, uint64_t b) { return visit(q, a, b, reverse, f); });
      uint64_t a = std::max(lo, e.low), b = std::min(hi, e.high - 1);
      if (p->hdr.level > 1) {
        if (!visit(e.v, a, b, reverse, f)) return false;
      } else {
        Page* parent = const_cast<Page*>(p);
        Leaf l{parent, e.version, tp::entry(parent, e.i), e.v, 0, e.sp, e.low, e.high};
        if (!visit_leaf(l, a, b, reverse, f)) return false;
      }
      if (reverse ? e.low <= lo : e.high > hi || e.high == kInfKey) return true;  // (no key is 2^64-1)
      cur = reverse ? e.low - 1 : e.high;
    }
  }
  template <class F>
  static bool visit_leaf(Leaf l, uint64_t lo, uint64_t hi, bool reverse, F& f) {
    // (A lock alone changes nothing a reader relies on; what the holder changes bumps the counter.)
    if (l.v && ((l.version = tp::ver(l.v) & ~tp::kLocked) & tp::kMoved))
      return twins(l.v, lo, hi, reverse, [&](Page* q, uint64_t a, uint64_t b) {
        return visit_leaf(Leaf{nullptr, 0, nullptr, q, 0, 0, tp::low(q), tp::high(q)}, a, b, reverse, f);
      });
    return f(static_cast<const Leaf&>(l));
  }

  // A moved page still named by an interior page (no transaction running).
  static bool moved_child(Page* p, Page*& from, Page*& x) {
    for (uint64_t i = 0, n = tp::count(p); i < n; i++) {
      Page* c = tp::entry(p, i)->volatile_page.load(std::memory_order_relaxed);
      if (!c) continue;
      if (tp::ver(c) & tp::kMoved) return from = p, x = c, true;
      if (p->hdr.level > 1 && moved_child(c, from, x)) return true;
    }
    return false;
  }

  Page* take(VolatilePool& pool) {
    Page* p = pool.take();
    if (!p)
      throw dev::BudgetError("FOEDUS: the volatile pool cannot hold the interior pages of ordered tree " +
                             info.name + ": raise --dram-size or lower --p-ratio");
    return p;
  }

  void free_subtree(Page* p, VolatilePool& pool) {
    if (tp::ver(p) & tp::kMoved) {  // retired (freed with those): its twins are the subtree
      free_subtree(tp::foster_minor(p), pool);
      if (Page* M = tp::foster_major(p)) free_subtree(M, pool);
      return;
    }
    if (p->hdr.level > 0)
      for (uint64_t i = 0; i < tp::count(p); i++)
        if (Page* c = tp::entry(p, i)->volatile_page.load(std::memory_order_relaxed)) free_subtree(c, pool);
    pool.give(p);
  }

  // Page p (locked by this writer, `w` its word before) is replaced by its foster twins for good.
  void move(Page* p, uint64_t w, Page* minor, Page* major) {
    tp::set_foster(p, minor, major);
    tp::version(p)->store((w + 1) | tp::kMoved, std::memory_order_release);  // unlocks
    std::lock_guard l(retired_mu_);
    retired_.push_back(p);
  }

  // Parent p adopts the foster twins of moved page x (in place, readers waiting on kChanging);
  // a full p splits instead (its own parent adopts it later). False: the pool has no page.
  bool adopt(Page* p, Page* x, VolatilePool& pool) {
    uint64_t w = tp::lock(p);
    uint64_t at = tp::child_of(p, tp::low(x)), n = tp::count(p);
    if ((w & tp::kMoved) || tp::entry(p, at)->volatile_page.load(std::memory_order_relaxed) != x) {
      tp::unlock(p, w, false);  // adopted already, or p moved: the next descent sees to it
      return true;
    }
    Page* a = tp::foster_minor(x);
    Page* b = tp::foster_major(x);
    if (b && n >= g.fanout) return split_interior(p, w, pool);
    tp::version(p)->store(w | tp::kLocked | tp::kChanging, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    auto set = [&](uint64_t i, uint64_t key, Page* v, SnapshotPtr sp) {
      tp::store(tp::ekey(p, i), key);
      tp::entry(p, i)->volatile_page.store(v, std::memory_order_relaxed);
      tp::entry(p, i)->snapshot_page.store(sp, std::memory_order_relaxed);
    };
    if (b) {
      for (uint64_t i = n; i > at + 1; i--) {
        const DualPointer* from = tp::entry(p, i - 1);
        set(i, tp::ekey(p, i - 1), from->volatile_page.load(std::memory_order_relaxed),
            from->snapshot_page.load(std::memory_order_relaxed));
      }
      set(at + 1, tp::low(b), b, 0);
      tp::store(p->hdr.reserved[2], n + 1);
    }
    set(at, tp::ekey(p, at), a, 0);
    tp::unlock(p, w, true);
    return true;
  }

  // Make room in the full leaf `leaf` (locked, `w` its word before) by moving it: its foster
  // twins are two halves, or one compacted page when enough records are tombstones. Unlocks it.
  // False: the pool has no page for them.
  bool split_leaf(Page* leaf, uint64_t w, VolatilePool& pool, uint64_t snapshot_epoch) {
    Page* a = pool.take();
    Page* b = a ? pool.take() : nullptr;
    if (!b) {
      if (a) pool.give(a);
      tp::unlock(leaf, w, false);
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
      std::atomic<uint64_t>* t = tp::tid(leaf, i, g.slot);
      uint64_t cur = t->load(std::memory_order_acquire);
      for (;;) {
        if (cur & kTidLock) {
          std::this_thread::yield();
          cur = t->load(std::memory_order_acquire);
          continue;
        }
        if (t->compare_exchange_weak(cur, cur | kTidMoved, std::memory_order_acq_rel)) break;
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
    if (compact) {
      pool.give(b);
      b = nullptr;
    } else {
      fill(b, mid, hi, half, live.size());
    }
    move(leaf, w, a, b);
    splits_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  // Split interior page p (locked, `w` its word before) into two foster twins; a root split
  // installs a new root over them. Unlocks p. False: the pool has no page for it.
  bool split_interior(Page* p, uint64_t w, VolatilePool& pool) {
    if (w & tp::kMoved) {  // split already: the next descent adopts its twins
      tp::unlock(p, w, false);
      return true;
    }
    bool root = root_.load(std::memory_order_relaxed) == p;  // only p's lock holder replaces it
    Page* a = pool.take();
    Page* b = a ? pool.take() : nullptr;
    Page* r = b && root ? pool.take() : nullptr;
    if (!b || (root && !r)) {
      for (Page* x : {a, b})
        if (x) pool.give(x);
      tp::unlock(p, w, false);
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
    if (root) {
      tp::init(r, info.id, uint16_t(p->hdr.level + 1), tp::low(p), tp::high(p));
      tp::ekey(r, 0) = tp::low(p);
      tp::entry(r, 0)->volatile_page.store(a, std::memory_order_relaxed);
      tp::ekey(r, 1) = mid;
      tp::entry(r, 1)->volatile_page.store(b, std::memory_order_relaxed);
      tp::count(r) = 2;
      root_.store(r, std::memory_order_release);
    }
    move(p, w, a, b);
    return true;
  }

  std::atomic<Page*> root_{nullptr};  // always volatile, interior (level >= 1)
  std::mutex retired_mu_;             // retired_: splits append, the gleaner's pause frees
  std::vector<Page*> retired_;
  std::atomic<uint64_t> splits_{0};
};

}  // namespace nvt::foedus
