#include "storage/engines/foedus/tree_snapshot.h"

#include <algorithm>
#include <cstring>

#include "storage/device/device.h"
#include "storage/engines/foedus/epoch.h"
#include "storage/parallel.h"

namespace nvt::foedus {

namespace {

// One page of records [i0, i1) covering [low, high), written to a page the area hands out.
TreeLeaf write_leaf(const TreeSnapshot& t, SnapshotArea& area, uint64_t low, uint64_t high,
                    const std::vector<TreeRecord>& recs, size_t i0, size_t i1, uint64_t epoch, uint64_t snapshot_id,
                    std::vector<char>& buf) {
  const uint32_t slot = t.g.slot;
  memset(buf.data(), 0, buf.size());
  Page* p = reinterpret_cast<Page*>(buf.data());
  tp::init(p, t.id, 0, low, high);
  p->hdr.snapshot_epoch = epoch;
  for (size_t i = i0; i < i1; i++) {
    uint64_t j = i - i0;
    tp::key(p, j, slot) = recs[i].key;
    tp::tid(p, j, slot)->store(recs[i].tid & kTidBits, std::memory_order_relaxed);
    memcpy(tp::payload(p, j, slot), recs[i].payload, t.g.len);
  }
  tp::count(p) = i1 - i0;
  uint64_t at = area.take();
  dev::nt_copy(area.page(at), buf.data(), buf.size());
  return {low, high, make_snapshot_ptr(snapshot_id, at)};
}

}  // namespace

uint64_t write_tree_leaves(const TreeSnapshot& t, SnapshotArea& area, uint64_t low, uint64_t high,
                           const std::vector<TreeRecord>& recs, const std::vector<uint64_t>& bounds, uint64_t epoch,
                           uint64_t snapshot_id, std::vector<TreeLeaf>& out) {
  std::vector<char> buf(area.page_size());
  uint64_t written = 0;
  // Cut points: the volatile leaves' bounds strictly inside (low, high).
  std::vector<uint64_t> cuts{low};
  for (auto it = std::upper_bound(bounds.begin(), bounds.end(), low); it != bounds.end() && *it < high; ++it)
    cuts.push_back(*it);
  cuts.push_back(high);
  size_t i = 0;
  for (size_t c = 0; c + 1 < cuts.size(); c++) {
    uint64_t lo = cuts[c], hi = cuts[c + 1];
    size_t j = i;
    while (j < recs.size() && recs[j].key < hi) j++;
    if (j - i <= t.g.per_leaf) {
      out.push_back(write_leaf(t, area, lo, hi, recs, i, j, epoch, snapshot_id, buf));
      written++;
    } else {  // more than a page: pages of g.fill() records, each from its first key
      for (size_t k = i; k < j; k += t.g.fill()) {
        size_t e = std::min<size_t>(j, k + t.g.fill());
        out.push_back(write_leaf(t, area, k == i ? lo : recs[k].key, e == j ? hi : recs[e].key, recs, k, e, epoch,
                                 snapshot_id, buf));
        written++;
      }
    }
    i = j;
  }
  return written;
}

uint64_t write_tree_interiors(TreeSnapshot& t, SnapshotArea& area, uint64_t epoch, uint64_t snapshot_id,
                              int nthreads, const HelperTraffic& traffic) {
  const uint32_t ps = area.page_size();
  for (SnapshotPtr old : t.interior) area.retire(snapshot_index(old));
  t.interior.clear();
  struct Child {
    uint64_t low, high;
    SnapshotPtr ptr;
  };
  std::vector<Child> level;
  for (const TreeLeaf& l : t.leaves) level.push_back({l.low, l.high, l.ptr});
  uint16_t lv = 1;
  do {
    std::vector<Child> up((level.size() + t.g.fanout - 1) / t.g.fanout);
    page_runs(up.size(), nthreads, traffic, [&](size_t begin, size_t end) {
      std::vector<char> buf(ps);
      Page* p = reinterpret_cast<Page*>(buf.data());
      for (size_t u = begin; u < end; u++) {
        const size_t i = u * t.g.fanout, n = std::min<size_t>(t.g.fanout, level.size() - i);
        memset(buf.data(), 0, ps);
        tp::init(p, t.id, lv, level[i].low, level[i + n - 1].high);
        p->hdr.snapshot_epoch = epoch;
        for (size_t j = 0; j < n; j++) {
          tp::ekey(p, j) = level[i + j].low;
          tp::entry(p, j)->snapshot_page.store(level[i + j].ptr, std::memory_order_relaxed);
        }
        tp::count(p) = n;
        uint64_t at = area.take();
        dev::nt_copy(area.page(at), buf.data(), ps);
        up[u] = {level[i].low, level[i + n - 1].high, make_snapshot_ptr(snapshot_id, at)};
      }
    });
    for (const Child& c : up) t.interior.push_back(c.ptr);
    level = std::move(up);
    lv++;
  } while (level.size() > 1);
  t.root = level[0].ptr;
  return t.interior.size();
}

void read_tree_snapshot(TreeSnapshot& t, const SnapshotArea& area, SnapshotPtr root, int nthreads) {
  t.leaves.clear();
  t.interior.clear();
  t.root = root;
  // A level at a time, each level's pages in key order split into equal runs, one per thread;
  // each run's children are appended in run order, so the next level (and the leaves) stay in
  // key order.
  const size_t nw = size_t(std::max(1, nthreads));
  std::vector<SnapshotPtr> level{root};
  while (!level.empty()) {
    std::vector<std::vector<SnapshotPtr>> below(nw);
    std::vector<std::vector<TreeLeaf>> leaves(nw);
    parallel(int(std::min(nw, level.size())), [&](int w) {
      const size_t n = std::min(nw, level.size());
      for (size_t k = level.size() * size_t(w) / n; k < level.size() * size_t(w + 1) / n; k++) {
        const Page* p = area.page(snapshot_index(level[k]));
        dev::read(p, area.page_size());
        for (uint64_t i = 0; i < tp::count(p); i++) {
          SnapshotPtr c = tp::entry(p, i)->snapshot_page.load(std::memory_order_relaxed);
          if (p->hdr.level == 1) {
            auto [lo, hi] = tp::range(p, i);
            leaves[size_t(w)].push_back({lo, hi, c});
          } else {
            below[size_t(w)].push_back(c);
          }
        }
      }
    });
    t.interior.insert(t.interior.end(), level.begin(), level.end());
    level.clear();
    for (size_t w = 0; w < nw; w++) {
      level.insert(level.end(), below[w].begin(), below[w].end());
      t.leaves.insert(t.leaves.end(), leaves[w].begin(), leaves[w].end());
    }
  }
}

uint64_t merge_tree_leaf(const TreeSnapshot& t, const Page* old, const std::vector<TreeUpdate>& upd,
                         std::vector<TreeRecord>& out) {
  const uint32_t slot = t.g.slot;
  uint64_t n = old ? tp::count(old) : 0, applied = 0;
  size_t i = 0, j = 0;
  out.clear();
  while (i < n || j < upd.size()) {
    uint64_t ko = i < n ? tp::key(old, i, slot) : kInfKey;
    if (j == upd.size() || ko < upd[j].key) {
      out.push_back({ko, tp::tid(old, i, slot), tp::payload(old, i, slot)});
      i++;
      continue;
    }
    const TreeUpdate& u = upd[j++];
    bool same = ko == u.key;
    if (same && tp::tid(old, i, slot) >= (u.tid & kTidBits)) {  // the page already holds it
      out.push_back({ko, tp::tid(old, i, slot), tp::payload(old, i, slot)});
    } else {
      if (!u.del) out.push_back({u.key, u.tid & kTidBits, u.payload});
      if (!u.del || same) applied++;
    }
    if (same) i++;
  }
  return applied;
}

}  // namespace nvt::foedus
