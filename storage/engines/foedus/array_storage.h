// FOEDUS's array storage (foedus-sigmod15 section 5): a fixed-shape tree of pages over dense
// keys [0, capacity): leaves hold `per_leaf` records in key order, interior pages `fanout` dual
// pointers, one root. The shape never changes (no splits), so a volatile page and the snapshot
// page at the same position cover exactly the same keys, which is what the gleaner's pointer
// installation needs (7.5). Only the shape lives here; the engine walks it.
#pragma once
#include <cstdint>
#include <vector>

#include "storage/engines/foedus/page.h"

namespace nvt::foedus {

struct ArrayShape {
  Geometry g;
  uint64_t capacity;
  std::vector<uint64_t> pages;  // pages per level, leaves first; pages.back() == 1 (the root)
  std::vector<uint64_t> span;   // leaves under one page of each level (fanout^level)

  ArrayShape(const Geometry& geo, uint64_t cap) : g(geo), capacity(cap) {
    pages.push_back(cap ? (cap + g.per_leaf - 1) / g.per_leaf : 1);
    span.push_back(1);
    while (pages.back() > 1) {
      pages.push_back((pages.back() + g.fanout - 1) / g.fanout);
      span.push_back(span.back() * g.fanout);
    }
  }
  int root_level() const { return int(pages.size()) - 1; }
  uint64_t leaf_of(uint64_t key) const { return key / g.per_leaf; }
  uint64_t slot_in_leaf(uint64_t key) const { return key % g.per_leaf; }
  // The page of `level` that covers leaf `leaf`, and the child slot within it that leads there.
  uint64_t page_at(int level, uint64_t leaf) const { return leaf / span[size_t(level)]; }
  uint64_t child_slot(int level, uint64_t leaf) const { return (leaf / span[size_t(level) - 1]) % g.fanout; }
  // Children of page `index` at `level` (the last page of a level may have fewer).
  uint64_t children(int level, uint64_t index) const {
    uint64_t first = index * g.fanout, below = pages[size_t(level) - 1];
    return first + g.fanout <= below ? g.fanout : below - first;
  }
  // Records of leaf `index`.
  uint64_t records(uint64_t index) const {
    uint64_t first = index * g.per_leaf;
    return first + g.per_leaf <= capacity ? g.per_leaf : capacity - first;
  }
  uint64_t total_pages() const {
    uint64_t n = 0;
    for (auto p : pages) n += p;
    return n;
  }
};

}  // namespace nvt::foedus
