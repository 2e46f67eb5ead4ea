// Zen's tuple-level NVM space management (papers/zen-vldb21.txt section 3.4): each per-thread
// NVM-tuple heap region keeps, per HTable, a free list of slots in DRAM. Taking or freeing a slot
// touches no NVM: a slot is occupied exactly when it holds a committed tuple, which recovery
// (Algorithm 2) can tell from the header alone. A region takes a new 2 MB page only when its
// free list is empty.
//
// The region holds back one slot: the one carrying the region's newest LP tuple. Recovery takes
// "Tx-CTS <= the largest LP Tx-CTS in the region" as proof of commit, so if that slot were reused
// by a transaction that then crashed, older committed tuples without LP could be judged
// uncommitted. It is released when the region's next transaction sets LP elsewhere.
//
// ZEN_NAIVE_ALLOC=1 builds the naive design of the paper's Figure 14 instead: a persistent
// allocation bitmap updated and persisted (flush + fence) on every allocation and free.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "storage/device/device.h"
#include "storage/device/nvm_image.h"
#include "storage/engines/zen/page_manager.h"

#ifndef ZEN_NAIVE_ALLOC
#define ZEN_NAIVE_ALLOC 0
#endif

namespace nvt::zen {

// An old NVM-tuple version, reclaimable once every transaction that could still reach it is
// gone and its successor is durable: `cts` is the Tx-CTS of the transaction that superseded it.
struct Garbage {
  char* slot;
  uint32_t table;
  uint64_t cts;
};

// The naive design's allocation bitmap: one bit per slot, persisted on every change.
class AllocBitmap {
 public:
  AllocBitmap(dev::NvmImage& nvm, const PageManager& pm)
      : pm_(pm), bits_(reinterpret_cast<uint64_t*>(
                     nvm.region("zen.alloc", pm.pages() * kWordsPerPage * 8,
                                dev::RegionKind::Persistent).base)) {}
  void set(const char* slot, uint32_t stride, bool used) {
    uint64_t page = pm_.page_of(slot);
    uint64_t i = uint64_t(slot - pm_.page(page)) / stride;
    uint64_t* w = bits_ + page * kWordsPerPage + i / 64;
    if (used) *w |= 1ull << (i % 64); else *w &= ~(1ull << (i % 64));
    dev::persist(w, 8);
  }

 private:
  static constexpr uint64_t kWordsPerPage = kPageBytes / 32 / 64;  // slots are >= 32 B
  const PageManager& pm_;
  uint64_t* bits_;
};

class HeapRegion {
 public:
  HeapRegion(uint32_t id, PageManager& pm, const std::vector<uint32_t>& strides, AllocBitmap* naive)
      : id_(id), pm_(pm), strides_(strides), free_(strides.size()), naive_(naive) {}

  uint32_t id() const { return id_; }
  size_t free_slots(uint32_t table) const { return free_[table].size(); }
  const std::vector<char*>& free_list(uint32_t table) const { return free_[table]; }

  // A free slot of `table`, or nullptr when the free list is empty and `may_grow` is false or
  // the heap has no page left.
  char* take(uint32_t table, bool may_grow = true) {
    auto& f = free_[table];
    if (f.empty() && !(may_grow && grow(table))) return nullptr;
    char* s = f.back();
    f.pop_back();
    if (naive_) naive_->set(s, strides_[table], true);
    return s;
  }

  // `recovered`: rebuilt by recovery from the heap itself, so the naive bitmap is not written.
  void put(uint32_t table, char* slot, bool recovered = false) {
    if (slot == lp_slot_) { lp_freed_ = true; return; }
    if (naive_ && !recovered) naive_->set(slot, strides_[table], false);
    free_[table].push_back(slot);
  }

  // The region's newest LP tuple moved to `slot`; the previous one may be reused now.
  void set_lp(uint32_t table, char* slot) {
    char* old = lp_slot_;
    uint32_t old_table = lp_table_;
    bool was_freed = lp_freed_;
    lp_slot_ = slot;
    lp_table_ = table;
    lp_freed_ = false;
    if (old && was_freed && old != slot) put(old_table, old);
  }
  char* lp_slot() const { return lp_slot_; }
  bool lp_held_free() const { return lp_freed_; }

  uint64_t pages() const { return pages_; }

  // Every page of this region whose slots are all on its free lists leaves them and goes back to
  // the page manager (Zen+'s end of the exclusive stage); `released(page)` runs after each.
  // Only the region's writer calls this: the free lists are its own. Returns how many.
  template <class Released>
  uint64_t release_empty_pages(Released&& released) {
    uint64_t n = 0;
    for (uint32_t t = 0; t < free_.size(); t++) {
      auto& f = free_[t];
      std::unordered_map<uint64_t, uint64_t> count;
      for (char* s : f) count[pm_.page_of(s)]++;
      std::unordered_set<uint64_t> empty;
      for (auto& [page, c] : count)
        if (c == kPageBytes / strides_[t]) empty.insert(page);
      if (empty.empty()) continue;
      std::erase_if(f, [&](char* s) { return empty.count(pm_.page_of(s)) != 0; });
      for (uint64_t page : empty) {
        pm_.release(page);
        pages_--;
        n++;
        released(page);
      }
    }
    return n;
  }

 private:
  bool grow(uint32_t table) {
    uint64_t p = pm_.allocate(table, id_);
    if (p == PageManager::kNoPage) return false;
    add_page(table, p);
    return true;
  }

 public:
  // Every slot of a fresh page is free (Tx-CTS 0); pushed in reverse so they are used in order.
  void add_page(uint32_t table, uint64_t page) {
    uint32_t stride = strides_[table];
    uint64_t n = kPageBytes / stride;
    char* base = pm_.page(page);
    for (uint64_t i = n; i-- > 0;) free_[table].push_back(base + i * stride);
    pages_++;
  }
  void count_page() { pages_++; }

 private:
  uint32_t id_;
  PageManager& pm_;
  std::vector<uint32_t> strides_;
  std::vector<std::vector<char*>> free_;
  AllocBitmap* naive_;
  char* lp_slot_ = nullptr;
  uint32_t lp_table_ = 0;
  bool lp_freed_ = false;
  uint64_t pages_ = 0;
};

}  // namespace nvt::zen
