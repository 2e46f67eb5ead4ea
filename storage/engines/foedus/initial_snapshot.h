// The initial snapshot, written by the load. On a fresh image the array storages' leaves are
// laid out first, in order, and load() writes records straight into them; the ordered trees'
// records are gathered and written sorted at the end (the paper loads, then snapshots; at load
// no transaction runs, so the result is the same, without the DRAM to hold it all). The
// interior pages follow, then the engine writes the snapshot metadata (7.4) and the roots.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "storage/device/device.h"
#include "storage/engines/foedus/gleaner.h"
#include "storage/engines/foedus/tree_snapshot.h"
#include "storage/engines/foedus/tree_storage.h"

namespace nvt::foedus {

// An ordered tree's loaded records, gathered until the load ends.
struct LoadBuffer {
  std::mutex mu;
  std::vector<uint64_t> keys;
  std::vector<char> images;

  void add(uint64_t key, const char* image, uint32_t len) {
    std::lock_guard g(mu);
    keys.push_back(key);
    images.insert(images.end(), image, image + len);
  }
};

// A fresh image: every array storage's leaf gets its snapshot page, in order.
inline void lay_out_leaves(std::vector<SnapshotTree>& trees, SnapshotArea& area) {
  for (auto& t : trees)
    for (auto& p : t.ptrs[0]) p = make_snapshot_ptr(1, area.take());
}

// A loaded record of an array storage, written into its snapshot leaf with TID 0.
inline void load_array_record(SnapshotTree& t, SnapshotArea& area, const std::string& name, uint64_t key,
                              const char* image) {
  if (key >= t.shape.capacity)
    throw std::runtime_error("FOEDUS array storage " + name + ": key " + std::to_string(key) + " beyond its capacity");
  Page* p = area.page(snapshot_index(t.ptrs[0][t.shape.leaf_of(key)]));
  uint64_t s = t.shape.slot_in_leaf(key);
  p->tid(s, t.shape.g.slot)->store(0, std::memory_order_relaxed);  // loaded: TID 0
  memcpy(p->payload(s, t.shape.g.slot), image, t.shape.g.len);
}

// The snapshot's pages once loaded: the array leaves' headers, the ordered trees' leaves (the
// loaded records sorted, leaves filled to 3/4: room for inserts) and everyone's interior pages.
inline void write_loaded_snapshot(std::vector<SnapshotTree>& trees, std::vector<TreeSnapshot>& tsnap,
                                  const std::vector<std::unique_ptr<TreeStorage>>& ordered,
                                  std::vector<std::unique_ptr<LoadBuffer>>& loads, SnapshotArea& area, uint32_t ps) {
  for (auto& t : trees)
    for (uint64_t leaf = 0; leaf < t.ptrs[0].size(); leaf++) {
      Page* p = area.page(snapshot_index(t.ptrs[0][leaf]));
      p->hdr = PageHeader{t.id, 0, 0, leaf, 0, {}};
      dev::flush(p, ps);
    }
  for (size_t i = 0; i < ordered.size(); i++) {
    LoadBuffer& b = *loads[i];
    TreeSnapshot& t = tsnap[i];
    std::vector<uint32_t> order(b.keys.size());
    for (uint32_t j = 0; j < order.size(); j++) order[j] = j;
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return b.keys[x] < b.keys[y]; });
    std::vector<TreeRecord> recs;
    recs.reserve(order.size());
    for (uint32_t j : order) {
      if (!recs.empty() && recs.back().key == b.keys[j])
        throw std::runtime_error("FOEDUS ordered tree " + ordered[i]->info.name + ": key " + std::to_string(b.keys[j]) +
                                 " loaded twice");
      if (b.keys[j] == kInfKey) throw std::runtime_error("FOEDUS ordered tree " + ordered[i]->info.name + ": key 2^64-1 is reserved");
      recs.push_back({b.keys[j], 0, b.images.data() + size_t(j) * t.g.len});
    }
    t.leaves.clear();
    std::vector<uint64_t> cuts;  // every g.fill() records
    for (size_t j = t.g.fill(); j < recs.size(); j += t.g.fill()) cuts.push_back(recs[j].key);
    write_tree_leaves(t, area, 0, kInfKey, recs, cuts, 0, 1, t.leaves);
    write_tree_interiors(t, area, 0, 1);
    b.keys = {};
    b.images = {};
  }
  std::vector<std::vector<uint64_t>> all(trees.size());
  for (size_t i = 0; i < trees.size(); i++)
    for (uint64_t l = 0; l < trees[i].ptrs[0].size(); l++) all[i].push_back(l);
  write_interiors(trees, area, all, 0, 1);  // fences (the trees' pages too)
}

}  // namespace nvt::foedus
