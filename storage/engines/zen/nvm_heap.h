// Zen's NVM-tuple heap as a whole (papers/zen-vldb21.txt section 3.4): the page manager, one
// heap region per writer thread of any run of the image (tuple_allocator.h), and the way old
// versions get back to a region's free lists. Zen writes NVM-tuples into it; WBL writes its
// versions into it the same way (its out-of-place versions use Zen's space management).
//
// Regions: thread t of a run with T threads writes the regions r with r % T == t (one writer per
// region, as Algorithm 2 requires), its own one (r == t) last. A transaction's writes go to one
// region; a slot only ever returns to its own region's free lists, by its writer: a slot of
// another thread's region goes through that thread's inbox.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "storage/device/device.h"
#include "storage/engine.h"
#include "storage/engines/zen/page_manager.h"
#include "storage/engines/zen/recovery.h"
#include "storage/engines/zen/tuple_allocator.h"

namespace nvt::zen {

class NvmHeap {
 public:
  static constexpr double kSpaceWaitS = 5;  // reserve(): how long space may stay short

  // Pages: every table twice its capacity (room for one old version per tuple until reclaimed:
  // under high skew and heavy writes, versions wait for the global minimum to pass them; 25%
  // ran out in write-heavy YCSB at 0.95) plus two pages per thread (each writes its own region).
  // `slot_bytes`: the engine's slot size for a tuple length (its own header).
  using SlotBytes = uint32_t (*)(uint32_t len);
  static uint64_t pages_for(const std::vector<TableInfo>& tables, int threads, SlotBytes slot_bytes) {
    uint64_t p = 0;
    for (auto& t : tables) {
      uint64_t per = kPageBytes / slot_bytes(t.schema.tuple_size());
      p += (2 * t.capacity + per - 1) / per + 2 * uint64_t(threads);
    }
    return p;
  }
  // DRAM for the allocator: one free-list pointer per heap slot, each table's pages by its own
  // slot size.
  static uint64_t allocator_bytes(const std::vector<TableInfo>& tables, int threads, SlotBytes slot_bytes) {
    uint64_t b = 0;
    for (auto& t : tables) b += pages_for({t}, threads, slot_bytes) * (kPageBytes / slot_bytes(t.schema.tuple_size())) * 8;
    return b;
  }
  // NVM for `pages` pages and their page table.
  static uint64_t nvm_bytes(uint64_t pages) { return pages * kPageBytes + pages * 8; }

  // `strides`: each table's slot size; `naive`: Zen's naive allocation bitmap (Figure 14);
  // `full`: the message when the heap has no slot left.
  NvmHeap(dev::NvmImage& nvm, uint64_t npages, const std::string& prefix, std::vector<uint32_t> strides,
          int threads, bool naive, std::string full)
      : pages_(nvm, npages, prefix), strides_(std::move(strides)), threads_(threads),
        inbox_(new Inbox[size_t(threads)]), full_(std::move(full)) {
    if (naive) bitmap_ = std::make_unique<AllocBitmap>(nvm, pages_);
    // One region per thread of any run of this image (a larger run left more).
    uint32_t nregions = uint32_t(threads_);
    for (uint64_t i = 0; i < pages_.pages(); i++)
      if (pages_.owner(i).used) nregions = std::max(nregions, pages_.owner(i).region + 1);
    for (uint32_t r = 0; r < nregions; r++)
      regions_.push_back(std::make_unique<HeapRegion>(r, pages_, strides_, bitmap_.get()));
    for (uint64_t i = 0; i < pages_.pages(); i++)
      if (pages_.owner(i).used) regions_[pages_.owner(i).region]->count_page();
  }

  PageManager& pages() { return pages_; }
  const PageManager& pages() const { return pages_; }
  size_t regions() const { return regions_.size(); }
  HeapRegion& region(size_t r) { return *regions_[r]; }
  const std::vector<std::unique_ptr<HeapRegion>>& all_regions() const { return regions_; }
  uint32_t stride(uint32_t table) const { return strides_[table]; }

  // The regions thread `tid` writes: those a larger run left (r % threads == tid), its own last.
  std::vector<uint32_t> regions_of(int tid) const {
    std::vector<uint32_t> rs;
    for (uint32_t r = uint32_t(threads_); r < regions_.size(); r++)
      if (int(r % uint32_t(threads_)) == tid) rs.push_back(r);
    rs.push_back(uint32_t(tid));
    return rs;
  }

  // Slots per table a transaction's writes need (`need`); their total.
  static size_t count_need(std::vector<uint32_t>& need, const Access* acc, size_t n) {
    std::fill(need.begin(), need.end(), 0);
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
      if (acc[i].type != AccessType::Read) need[acc[i].table]++, total++;
    return total;
  }

  // Region for a transaction's writes: a secondary region (left by a run with more threads) if it
  // has room for all of them without a new page, else the thread's own region.
  HeapRegion& pick(const std::vector<uint32_t>& rs, const std::vector<uint32_t>& need) {
    for (size_t i = 0; i + 1 < rs.size(); i++) {
      HeapRegion& r = *regions_[rs[i]];
      bool fits = true;
      for (uint32_t t = 0; t < need.size(); t++) fits &= r.free_slots(t) >= need[t];
      if (fits) return r;
    }
    return *regions_[rs.back()];
  }

  // Room in the thread's regions `rs` for a transaction's writes (counted from `acc` into
  // `need`), checked before the CC validates. Space runs short only while another thread holds
  // the reclamation minimum back (e.g. descheduled): after `reclaim_all()` and `on_short()` the
  // transaction then aborts (false), stops holding the minimum itself, and is retried. Short
  // for kSpaceWaitS on end (`short_since`: when it first was) means the heap is really full.
  template <class ReclaimAll, class OnShort>
  bool reserve(const std::vector<uint32_t>& rs, std::vector<uint32_t>& need, const Access* acc, size_t n,
               std::chrono::steady_clock::time_point& short_since, ReclaimAll&& reclaim_all, OnShort&& on_short) {
    if (!count_need(need, acc, n) || has_room(rs, need)) return true;
    reclaim_all();
    auto now = std::chrono::steady_clock::now();
    if (has_room(rs, need)) {
      short_since = {};
      return true;
    }
    on_short();
    if (short_since == std::chrono::steady_clock::time_point{}) short_since = now;
    else if (now - short_since > std::chrono::duration<double>(kSpaceWaitS)) throw std::runtime_error(full_);
    return false;
  }

  // Whether the picked region's free lists, plus the pages the heap has left, hold `need`.
  bool has_room(const std::vector<uint32_t>& rs, const std::vector<uint32_t>& need) {
    HeapRegion& r = pick(rs, need);
    uint64_t pages = 0;
    for (uint32_t t = 0; t < need.size(); t++)
      if (r.free_slots(t) < need[t]) {
        uint64_t per = kPageBytes / strides_[t];
        pages += (need[t] - r.free_slots(t) + per - 1) / per;
      }
    return pages == 0 || pages_.pages_left() >= pages;
  }

  // A free slot of `table` in `r`; with none and no page left, `reclaim_all()` (the heap is used
  // up: reclaim without bound) and once more, else the heap is full.
  template <class ReclaimAll>
  char* take(HeapRegion& r, uint32_t table, ReclaimAll&& reclaim_all) {
    if (char* s = r.take(table)) return s;
    reclaim_all();
    if (char* s = r.take(table, false)) return s;
    throw std::runtime_error(full_);
  }

  // Slots other threads reclaimed for `tid`'s regions go to their free lists.
  void collect_inbox(int tid) {
    Inbox& in = inbox_[tid];
    if (!in.has.load(std::memory_order_acquire)) return;
    std::lock_guard g(in.mu);
    for (auto& x : in.slots) regions_[pages_.region_of(x.slot)]->put(x.table, x.slot);
    in.slots.clear();
    in.has.store(false, std::memory_order_relaxed);
  }

  // Up to `budget` entries of `q` below `min` to the free list of the region that owns their
  // slot: `tid`'s own, or another's through its writer's inbox. Returns how many.
  size_t drain(int tid, std::deque<Garbage>& q, uint64_t min, size_t budget) {
    size_t n = 0;
    for (; budget && !q.empty() && q.front().cts < min; budget--, n++) {
      Garbage x = q.front();
      q.pop_front();
      uint32_t r = pages_.region_of(x.slot);
      int owner = int(r % uint32_t(threads_));
      if (owner == tid) {
        regions_[r]->put(x.table, x.slot);
      } else {
        Inbox& o = inbox_[owner];
        std::lock_guard g(o.mu);
        o.slots.push_back(x);
        o.has.store(true, std::memory_order_release);
      }
    }
    return n;
  }

  // Recovery: the slots each recovery thread found free, to their regions' lists.
  void put_free(int nthreads, const std::vector<std::vector<char*>>& freed) {
    put_free_by_region(nthreads, freed, pages_, regions_);
  }

  // Loader threads end without a last fence: the loaded pages are written back from here.
  void flush_used_pages() {
    for (uint64_t p = 0; p < pages_.pages(); p++)
      if (pages_.owner(p).used) dev::flush(pages_.page(p), kPageBytes);
  }

  // Invariants at quiescence: every heap slot is exactly one of `live` (indexed), free (free
  // lists, a region's held LP slot once it is free, inboxes), awaiting reclamation or a held
  // tombstone (each of `threads`' garbage and tombstones): none lost, none both in use and free.
  template <class Threads, class Fail>
  void check_slots(const std::unordered_set<const char*>& live, const Threads& threads, Fail&& fail) const {
    std::unordered_set<const char*> spare;
    auto add_spare = [&](const char* s) {
      if (live.count(s) || !spare.insert(s).second) fail("slot both in use and free, or freed twice");
    };
    for (auto& r : regions_) {
      for (uint32_t ti = 0; ti < strides_.size(); ti++)
        for (char* s : r->free_list(ti)) add_spare(s);
      if (r->lp_slot() && r->lp_held_free()) add_spare(r->lp_slot());
    }
    for (auto& th : threads) {
      for (auto& g : th.garbage) add_spare(g.slot);
      for (auto& g : th.tombstones) add_spare(g.slot);
    }
    for (int t = 0; t < threads_; t++)
      for (auto& g : inbox_[t].slots) add_spare(g.slot);
    for (uint64_t p = 0; p < pages_.pages(); p++) {
      if (!pages_.owner(p).used) continue;
      uint32_t stride = strides_[pages_.owner(p).table];
      for (uint64_t s = 0; s + stride <= kPageBytes; s += stride) {
        const char* slot = pages_.page(p) + s;
        if (!live.count(slot) && !spare.count(slot))
          fail("slot " + std::to_string(uint64_t(slot - pages_.page(0))) + " leaked: neither in use nor free");
      }
    }
  }

 private:
  // Slots of a thread's regions that other threads reclaimed, for it to free.
  struct alignas(64) Inbox {
    std::mutex mu;
    std::vector<Garbage> slots;
    std::atomic<bool> has{false};
  };

  PageManager pages_;
  std::vector<uint32_t> strides_;
  std::unique_ptr<AllocBitmap> bitmap_;
  std::vector<std::unique_ptr<HeapRegion>> regions_;
  int threads_;
  std::unique_ptr<Inbox[]> inbox_;
  std::string full_;
};

}  // namespace nvt::zen
