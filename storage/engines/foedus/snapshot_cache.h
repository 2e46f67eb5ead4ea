// FOEDUS's snapshot cache (foedus-sigmod15 section 7.6): DRAM frames holding copies of snapshot
// pages, found through a hash of the snapshot pointer. Snapshot pages are immutable, so the
// cache is lossy: two threads that miss the same page at once may both load it (a duplicate,
// harmless), and a hash slot simply points at the last frame loaded for it. Eviction is CLOCK
// over the frames. A frame is pinned while a reader copies out of it (a count taken by CAS, -1
// while the evicting thread refills it), which plays the role of the paper's grace period.
// A miss reads the whole page from NVM through the device model: the read amplification that
// papers/zen-vldb21.txt holds against FOEDUS.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <thread>

#include "storage/device/device.h"
#include "storage/device/dram_budget.h"
#include "storage/engines/foedus/page.h"

namespace nvt::foedus {

class SnapshotCache {
 public:
  static constexpr uint32_t kNone = ~0u;
  // DRAM per frame besides the page: its metadata and up to four hash slots (overhead; the
  // frames' pages are data).
  static constexpr uint64_t kOverhead = 32;
  static constexpr uint64_t kMinFrames = 4;

  SnapshotCache(dev::DramBudget& budget, uint64_t frames, uint32_t page_size)
      : budget_(budget), frames_(frames), page_size_(page_size) {
    if (frames_ < kMinFrames) throw dev::BudgetError("FOEDUS snapshot cache: the DRAM budget leaves fewer than 4 page frames");
    nbuckets_ = 1;
    while (nbuckets_ < frames_ * 2) nbuckets_ <<= 1;
    mem_ = static_cast<char*>(budget.alloc(frames_ * page_size_, "foedus.snapshot_cache", dev::DramUse::Data));
    meta_ = static_cast<Frame*>(budget.alloc(frames_ * sizeof(Frame), "foedus.snapshot_cache_index"));
    buckets_ = static_cast<std::atomic<uint32_t>*>(budget.alloc(nbuckets_ * 4, "foedus.snapshot_cache_index"));
    for (uint64_t i = 0; i < frames_; i++) new (&meta_[i]) Frame();
    for (uint64_t i = 0; i < nbuckets_; i++) new (&buckets_[i]) std::atomic<uint32_t>(kNone);
  }
  ~SnapshotCache() {
    budget_.free(mem_, frames_ * page_size_, "foedus.snapshot_cache");
    budget_.free(meta_, frames_ * sizeof(Frame), "foedus.snapshot_cache_index");
    budget_.free(buckets_, nbuckets_ * 4, "foedus.snapshot_cache_index");
  }
  SnapshotCache(const SnapshotCache&) = delete;
  SnapshotCache& operator=(const SnapshotCache&) = delete;

  struct Pin {
    const Page* page;
    uint32_t frame;
    bool hit;
  };
  // The page `ptr` names (stored at `nvm` in the snapshot area), pinned: unpin() when done.
  Pin get(SnapshotPtr ptr, const Page* nvm) {
    std::atomic<uint32_t>& b = buckets_[hash(ptr) & (nbuckets_ - 1)];
    uint32_t f = b.load(std::memory_order_acquire);
    if (f != kNone && pin(f)) {
      if (meta_[f].tag.load(std::memory_order_relaxed) == ptr) {
        meta_[f].referenced.store(1, std::memory_order_relaxed);
        return {frame(f), f, true};
      }
      unpin(f);
    }
    f = victim();
    dev::read(nvm, page_size_);  // the whole page, whatever the caller needs of it
    memcpy(mem_ + uint64_t(f) * page_size_, static_cast<const void*>(nvm), page_size_);
    meta_[f].tag.store(ptr, std::memory_order_relaxed);
    meta_[f].referenced.store(1, std::memory_order_relaxed);
    meta_[f].pins.store(1, std::memory_order_release);  // ours, and visible to readers
    b.store(f, std::memory_order_release);
    return {frame(f), f, false};
  }
  void unpin(uint32_t f) { meta_[f].pins.fetch_sub(1, std::memory_order_release); }

  uint64_t frames() const { return frames_; }
  uint64_t bytes() const { return frames_ * (page_size_ + sizeof(Frame)) + nbuckets_ * 4; }
  uint64_t evictions() const { return evictions_.load(std::memory_order_relaxed); }

 private:
  struct Frame {
    std::atomic<uint64_t> tag{0};        // the snapshot pointer it holds (0: none)
    std::atomic<int32_t> pins{0};        // readers; -1 while being refilled
    std::atomic<uint8_t> referenced{0};  // CLOCK bit
  };
  const Page* frame(uint32_t f) const { return reinterpret_cast<const Page*>(mem_ + uint64_t(f) * page_size_); }
  bool pin(uint32_t f) {
    int32_t p = meta_[f].pins.load(std::memory_order_relaxed);
    while (p >= 0)
      if (meta_[f].pins.compare_exchange_weak(p, p + 1, std::memory_order_acquire)) return true;
    return false;
  }
  // CLOCK: pass over referenced frames clearing their bit; take the first unreferenced, unpinned
  // one exclusively.
  uint32_t victim() {
    for (uint64_t n = 0;; n++) {
      uint32_t f = uint32_t(hand_.fetch_add(1, std::memory_order_relaxed) % frames_);
      Frame& m = meta_[f];
      if (m.referenced.load(std::memory_order_relaxed)) {
        m.referenced.store(0, std::memory_order_relaxed);
        continue;
      }
      int32_t zero = 0;
      if (m.pins.compare_exchange_strong(zero, -1, std::memory_order_acquire)) {
        if (m.tag.load(std::memory_order_relaxed)) evictions_.fetch_add(1, std::memory_order_relaxed);
        return f;
      }
      if (n > 4 * frames_) std::this_thread::yield();  // every frame pinned for now
    }
  }
  static uint64_t hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
  }

  dev::DramBudget& budget_;
  uint64_t frames_;
  uint32_t page_size_;
  uint64_t nbuckets_ = 0;
  char* mem_ = nullptr;
  Frame* meta_ = nullptr;
  std::atomic<uint32_t>* buckets_ = nullptr;
  alignas(64) std::atomic<uint64_t> hand_{0};
  std::atomic<uint64_t> evictions_{0};
};

}  // namespace nvt::foedus
