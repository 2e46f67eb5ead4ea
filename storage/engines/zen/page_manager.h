// Zen's page-level NVM space manager (papers/zen-vldb21.txt sections 3.1 and 3.4): the NVM-tuple
// heaps of all HTables are made of 2 MB pages from one heap region; the page table in the NVM
// metadata records, for every page, the HTable and the per-thread heap region that own it. It
// is persisted at each page allocation (rare: once per 2 MB), so a fresh process finds every
// table's pages; nothing is persisted for tuple-level allocation.
//
// Freed pages (Zen+'s exclusive stage returns whole empty pages, see Zen::free_empty_pages):
// the entry is cleared durably, so recovery (Algorithm 2 scans by the page table) skips the page
// from then on; the page goes to a DRAM free-page list and is zeroed and persisted when reused,
// before its new entry is written, so a new owner's recovery never meets another table's stale
// NVM-tuples. A crash anywhere in between leaves a cleared entry, i.e. a free page, stale or
// zero: below the durable high-water mark of bump allocation, a fresh process lists every
// cleared entry as free again (the mark keeps a freed top page from passing for a fresh one).
#pragma once
#include <atomic>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "storage/device/device.h"
#include "storage/device/nvm_image.h"

namespace nvt::zen {

constexpr uint64_t kPageBytes = 2ull << 20;

class PageManager {
 public:
  static constexpr uint64_t kNoPage = ~0ull;

  struct Owner {
    uint32_t table = 0;
    uint32_t region = 0;
    bool used = false;
  };

  // Creates the metadata and heap regions for `npages` pages, or reopens them as they were.
  // `prefix` names the regions (WBL's version heap reuses this manager as "wbl.*").
  PageManager(dev::NvmImage& nvm, uint64_t npages, const std::string& prefix = "zen") {
    dev::Region m = nvm.region(prefix + ".meta", sizeof(Meta), dev::RegionKind::Persistent);
    meta_ = reinterpret_cast<Meta*>(m.base);
    if (m.existed && meta_->magic == kMagic) {
      npages = meta_->npages;
    } else {
      meta_->npages = npages;
      meta_->high = 0;
      dev::persist(meta_, sizeof *meta_);
      meta_->magic = kMagic;  // valid once the rest is durable
      dev::persist(&meta_->magic, sizeof meta_->magic);
    }
    npages_ = npages;
    table_ = reinterpret_cast<uint64_t*>(
        nvm.region(prefix + ".pages", npages * 8, dev::RegionKind::Persistent).base);
    heap_ = nvm.region(prefix + ".heap", npages * kPageBytes, dev::RegionKind::Persistent).base;
    owners_.resize(npages);
    next_ = std::min(meta_->high, npages);
    for (uint64_t i = 0; i < npages; i++) {
      uint64_t e = table_[i];
      if (e == 0) continue;
      owners_[i] = Owner{uint32_t(e & 0xffffffff) - 1, uint32_t(e >> 32), true};
      next_ = std::max(next_, i + 1);
      used_++;
    }
    for (uint64_t i = next_; i-- > 0;)  // lowest reused first
      if (!owners_[i].used) free_.push_back(i);
    bump_.push_back({next_, npages_, -1});
  }

  // NUMA-local write (papers/zen-plus-journal.txt 4.2.2): under a per-node placement the pages
  // of heap region r come from the NVM of its writer's node (worker r mod threads), so a commit
  // writes only local NVM. The heap's pages alternate between nodes (the device model's 2 MB
  // extents); each node bump-allocates its own. A node whose pages are all taken borrows
  // another's (counted in foreign_pages()).
  void place_by_writer(int threads) {
    std::lock_guard g(mu_);
    threads_ = threads;
    bump_.clear();
    nodes_ = dev::g_model.nodes;
    for (int n = 0; n < nodes_; n++) bump_.push_back({next_, npages_, n});
  }
  // Pages a region got from another node than its writer's (its own had none left).
  uint64_t foreign_pages() const { return foreign_.load(); }

  uint64_t pages() const { return npages_; }
  // Pages allocate() can still hand out: never used ones and freed ones.
  uint64_t pages_left() {
    std::lock_guard g(mu_);
    uint64_t n = free_.size();
    for (auto& b : bump_) {
      if (b.node < 0 || b.next >= b.end) {
        n += b.end - b.next;
        continue;
      }
      // Pages of node b.node in [next, end): pages alternate nodes (node of page i is
      // (node of page 0 + i) mod nodes).
      uint64_t first = (uint64_t(b.node) + uint64_t(nodes_) - uint64_t(dev::nvm_node(page(0)) % nodes_)) % uint64_t(nodes_);
      auto below = [&](uint64_t x) { return x <= first ? 0 : (x - first + uint64_t(nodes_) - 1) / uint64_t(nodes_); };
      n += below(b.end) - below(b.next);
    }
    return n;
  }
  uint64_t used() const { return used_.load(); }
  // Freed pages not yet reused (on the free-page list).
  uint64_t freed() const {
    std::lock_guard g(mu_);
    return free_.size();
  }
  char* page(uint64_t i) const { return heap_ + i * kPageBytes; }
  const Owner& owner(uint64_t i) const { return owners_[i]; }
  uint64_t page_of(const void* p) const {
    return uint64_t(static_cast<const char*>(p) - heap_) / kPageBytes;
  }
  bool in_heap(const void* p) const {
    auto c = static_cast<const char*>(p);
    return c >= heap_ && c < heap_ + npages_ * kPageBytes;
  }
  uint32_t region_of(const void* slot) const { return owners_[page_of(slot)].region; }
  uint32_t table_of(const void* slot) const { return owners_[page_of(slot)].table; }

  // A fresh (all-zero) page for `table` in heap region `region`; its page-table entry is durable
  // before any slot of it is handed out. kNoPage when the heap is full.
  uint64_t allocate(uint32_t table, uint32_t region) {
    std::lock_guard g(mu_);
    int node = threads_ ? dev::node_of_thread(int(region % uint32_t(threads_))) : -1;
    uint64_t i = take(node);
    if (i == kNoPage && node >= 0) {
      i = take(-1);
      if (i != kNoPage) foreign_++;
    }
    if (i == kNoPage) return kNoPage;
    owners_[i] = Owner{table, region, true};
    std::atomic_ref<uint64_t>(table_[i]).store(uint64_t(table + 1) | uint64_t(region) << 32);
    dev::persist(&table_[i], 8);
    used_++;
    return i;
  }

  // A free page (of `node`, or any when -1): a freed one first (zeroed and persisted here, before
  // the entry names the new owner), else the next never used one; kNoPage when there is none.
  uint64_t take(int node) {
    for (size_t k = free_.size(); k-- > 0;) {
      uint64_t i = free_[k];
      if (node >= 0 && dev::nvm_node(page(i)) != node) continue;
      free_.erase(free_.begin() + std::ptrdiff_t(k));
      std::memset(page(i), 0, kPageBytes);  // durable before the entry names the new owner
      dev::persist(page(i), kPageBytes);
      return i;
    }
    for (auto& b : bump_) {
      if (node >= 0 && b.node != node) continue;
      // The range's next page of its node (every page when not placed).
      while (b.next < b.end && b.node >= 0 && dev::nvm_node(page(b.next)) != b.node) b.next++;
      if (b.next >= b.end) continue;
      uint64_t i = b.next++;
      if (i >= meta_->high) {
        meta_->high = i + 1;  // before the entry: a page above the mark is never written
        dev::persist(&meta_->high, sizeof meta_->high);
      }
      return i;
    }
    return kNoPage;
  }

  // Page `i` holds nothing live (every slot free): its entry is cleared durably and the page
  // goes to the free-page list, zeroed on reuse (see the header comment).
  void release(uint64_t i) {
    std::lock_guard g(mu_);
    owners_[i] = Owner{};
    std::atomic_ref<uint64_t>(table_[i]).store(0);
    dev::persist(&table_[i], 8);
    used_--;
    free_.push_back(i);
  }

  // The database is complete (loaded) once this flag is durable.
  bool loaded() const { return meta_->loaded == 1; }
  void set_loaded() {
    meta_->loaded = 1;
    dev::persist(&meta_->loaded, sizeof meta_->loaded);
  }

 private:
  static constexpr uint64_t kMagic = 0x5a454e5041474553ull;  // "ZENPAGES"
  struct Meta {
    uint64_t magic;
    uint64_t npages;
    uint64_t loaded;
    uint64_t high;  // pages bump-allocated so far (the free-page list is below it)
  };

  Meta* meta_ = nullptr;
  uint64_t* table_ = nullptr;
  char* heap_ = nullptr;
  uint64_t npages_ = 0;
  std::vector<Owner> owners_;  // DRAM mirror of the page table (a few bytes per 2 MB)
  mutable std::mutex mu_;
  uint64_t next_ = 0;          // pages below it were used before this process (or freed)
  struct Bump {
    uint64_t next, end;  // never used pages [next, end)
    int node;            // their NUMA node (-1: not placed)
  };
  std::vector<Bump> bump_;     // one range, or one per node under place_by_writer()
  int threads_ = 0;            // place_by_writer(): regions' writers
  int nodes_ = 1;
  std::atomic<uint64_t> foreign_{0};
  std::vector<uint64_t> free_;  // freed pages, entries cleared; the back one is reused first
  std::atomic<uint64_t> used_{0};
};

}  // namespace nvt::zen
