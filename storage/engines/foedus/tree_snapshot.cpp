#include "storage/engines/foedus/tree_snapshot.h"

#include <algorithm>
#include <barrier>
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
                           uint64_t snapshot_id, LeafList& out) {
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

void splice_tree_leaves(TreeSnapshot& t, const std::vector<std::pair<uint64_t, const LeafList*>>& changed,
                        int nthreads) {
  constexpr size_t kMinRunLeaves = 16384;  // fewer leaves a thread are not worth its start
  // before[k]: the pieces of the changes ahead of changed[k]; an unchanged leaf l with k changes
  // ahead of it goes to l - k + before[k].
  std::vector<size_t> before(changed.size() + 1, 0);
  for (size_t k = 0; k < changed.size(); k++) before[k + 1] = before[k] + changed[k].second->size();
  LeafList out;
  out.resize(t.leaves.size() - changed.size() + before.back());
  parallel_runs(t.leaves.size(), nthreads, kMinRunLeaves, [&](size_t b, size_t e, bool) {
    size_t k = size_t(std::lower_bound(changed.begin(), changed.end(), b,
                                       [](const auto& c, uint64_t l) { return c.first < l; }) -
                      changed.begin());
    TreeLeaf* o = out.data() + (b - k + before[k]);
    for (size_t l = b; l < e; l++) {
      if (k < changed.size() && changed[k].first == l) {
        o = std::copy(changed[k].second->begin(), changed[k].second->end(), o);
        k++;
      } else {
        *o++ = t.leaves[l];
      }
    }
  });
  t.leaves = std::move(out);
}

uint64_t write_tree_interiors(TreeSnapshot& t, SnapshotArea& area, uint64_t epoch, uint64_t snapshot_id,
                              int nthreads, const HelperTraffic& traffic) {
  const uint32_t ps = area.page_size();
  const size_t fanout = t.g.fanout;
  if (!t.interior.empty()) area.retire(std::move(t.interior));
  // Every level's size is known before one is written, so each page's pointer goes straight to
  // its place in t.interior (bottom up) from the thread that wrote the page.
  std::vector<size_t> first{0};
  for (size_t n = t.leaves.size(); first.size() == 1 || n > 1;) {
    n = (n + fanout - 1) / fanout;
    first.push_back(first.back() + n);
  }
  t.interior = {};
  t.interior.resize(first.back());
  LeafList level;  // the level just written, as (low, high, page); below it the leaves themselves
  const TreeLeaf* below = t.leaves.data();
  size_t count = t.leaves.size();
  for (size_t k = 0; k + 1 < first.size(); k++) {
    LeafList up;
    up.resize(first[k + 1] - first[k]);
    page_runs(up.size(), nthreads, traffic, [&](size_t begin, size_t end) {
      std::vector<char> buf(ps);
      Page* p = reinterpret_cast<Page*>(buf.data());
      for (size_t u = begin; u < end; u++) {
        const size_t i = u * fanout, n = std::min(fanout, count - i);
        memset(buf.data(), 0, ps);
        tp::init(p, t.id, uint16_t(k + 1), below[i].low, below[i + n - 1].high);
        p->hdr.snapshot_epoch = epoch;
        for (size_t j = 0; j < n; j++) {
          tp::ekey(p, j) = below[i + j].low;
          tp::entry(p, j)->snapshot_page.store(below[i + j].ptr, std::memory_order_relaxed);
        }
        tp::count(p) = n;
        uint64_t at = area.take();
        dev::nt_copy(area.page(at), buf.data(), ps);
        up[u] = {below[i].low, below[i + n - 1].high, make_snapshot_ptr(snapshot_id, at)};
        t.interior[first[k] + u] = up[u].ptr;
      }
    });
    level = std::move(up);
    below = level.data();
    count = level.size();
  }
  t.root = level[0].ptr;
  return t.interior.size();
}

void read_tree_snapshot(TreeSnapshot& t, const SnapshotArea& area, SnapshotPtr root, int nthreads) {
  t.leaves.clear();
  t.interior.clear();
  t.root = root;
  // A level at a time, each level's pages in key order split into equal runs, one per thread.
  // Each thread reads its run's children into lists of its own, then (once every thread's count
  // is known) copies them to its offset in the next level and the leaves, and its run of the
  // level to its place in t.interior: the lists stay in key order and none is copied on one thread.
  ParallelVector<SnapshotPtr> level;
  level.push_back(root);
  while (!level.empty()) {
    const size_t nw = std::clamp<size_t>(level.size() / kMinRunPages, 1, size_t(std::max(1, nthreads)));
    const size_t interior0 = t.interior.size(), leaves0 = t.leaves.size();
    std::vector<std::vector<SnapshotPtr>> below(nw);
    std::vector<std::vector<TreeLeaf>> leaves(nw);
    std::vector<size_t> at_below(nw + 1, 0), at_leaf(nw + 1, 0);
    ParallelVector<SnapshotPtr> next;
    std::barrier sized{std::ptrdiff_t(nw), [&]() noexcept {
      for (size_t w = 0; w < nw; w++) {
        at_below[w + 1] = at_below[w] + below[w].size();
        at_leaf[w + 1] = at_leaf[w] + leaves[w].size();
      }
      next.resize(at_below[nw]);
      t.leaves.resize(leaves0 + at_leaf[nw]);
      t.interior.resize(interior0 + level.size());
    }};
    parallel(int(nw), [&](int w) {
      const size_t lo = level.size() * size_t(w) / nw, hi = level.size() * size_t(w + 1) / nw;
      auto& mine = below[size_t(w)];
      auto& my_leaves = leaves[size_t(w)];
      for (size_t k = lo; k < hi; k++) {
        const Page* p = area.page(snapshot_index(level[k]));
        dev::read(p, area.page_size());
        for (uint64_t i = 0; i < tp::count(p); i++) {
          SnapshotPtr c = tp::entry(p, i)->snapshot_page.load(std::memory_order_relaxed);
          if (p->hdr.level == 1) {
            auto [lo_key, hi_key] = tp::range(p, i);
            my_leaves.push_back({lo_key, hi_key, c});
          } else {
            mine.push_back(c);
          }
        }
      }
      sized.arrive_and_wait();
      std::copy(mine.begin(), mine.end(), next.begin() + long(at_below[size_t(w)]));
      std::copy(my_leaves.begin(), my_leaves.end(), t.leaves.begin() + long(leaves0 + at_leaf[size_t(w)]));
      std::copy(level.begin() + long(lo), level.begin() + long(hi), t.interior.begin() + long(interior0 + lo));
    });
    level = std::move(next);
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
