// The cache pool (papers/nvcaracal-eurosys23.txt sections 4, 4.2, 5.2): DRAM copies of
// persistent-row values ("cached versions") so hot rows are read from DRAM. Fixed-size blocks
// handed out per core, within a byte limit (the DRAM that may hold data: database / P, the
// ledger's data_left(), charged as data); when it is reached a row simply stays uncached
// (`cache_full`), as a cache may. Eviction is epoch-based and runs between epochs (the engine's eviction lists).
// Blocks are freed to the freeing core's list; a list grown past two chunks spills a chunk to
// a shared list, from which a core whose list ran dry takes a chunk once the limit is reached
// (else the blocks one core evicts would be lost to the others).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "storage/device/dram_budget.h"
#include "storage/engines/nvcaracal/ledger_entry.h"

namespace nvt::nvc {

class CachePool {
 public:
  static constexpr uint64_t kChunkBlocks = 64;
  static constexpr const char* kWhat = "nvcaracal cache pool (cached versions)";
  CachePool(dev::DramBudget& dram, uint64_t block_bytes, uint64_t limit_bytes, int cores)
      : dram_(dram), block_((block_bytes + 63) / 64 * 64), limit_(limit_bytes), free_(size_t(cores)) {}
  ~CachePool() {
    for (auto& [p, b] : chunks_) dram_.free(p, b, kWhat);
  }
  CachePool(const CachePool&) = delete;
  CachePool& operator=(const CachePool&) = delete;

  // A block, or nullptr when the pool is at its limit.
  char* alloc(int core) {
    auto& f = free_[size_t(core)];
    if (f.empty()) {
      // At the limit, a miss costs a shared load or two, not two atomic updates on a shared line.
      if (full_.load(std::memory_order_relaxed)) return take_spilled(f) ? pop(f) : nullptr;
      uint64_t bytes = kChunkBlocks * block_;
      if (reserved_.fetch_add(bytes) + bytes > limit_) {
        reserved_.fetch_sub(bytes);
        full_.store(true, std::memory_order_relaxed);
        return take_spilled(f) ? pop(f) : nullptr;
      }
      char* c = static_cast<char*>(dram_.alloc(bytes, kWhat, dev::DramUse::Data));
      {
        std::lock_guard g(mu_);
        chunks_.push_back({c, bytes});
      }
      for (uint64_t i = kChunkBlocks; i-- > 0;) f.push_back(c + i * block_);
    }
    return pop(f);
  }
  void free(int core, char* p) {
    auto& f = free_[size_t(core)];
    f.push_back(p);
    in_use_.fetch_sub(block_, std::memory_order_relaxed);
    if (f.size() > 2 * kChunkBlocks) {
      std::lock_guard g(mu_);
      spilled_.insert(spilled_.end(), f.end() - long(kChunkBlocks), f.end());
      f.resize(f.size() - kChunkBlocks);
      spilled_count_.store(spilled_.size(), std::memory_order_relaxed);
    }
  }
  uint64_t bytes_in_use() const { return in_use_.load(); }
  uint64_t bytes_reserved() const { return reserved_.load(); }
  uint64_t limit() const { return limit_; }
  // Its free lists and chunk list (overhead beside the blocks); read between epochs.
  uint64_t list_bytes() {
    std::lock_guard g(mu_);
    uint64_t b = heap_bytes_of(free_) + heap_bytes_of(chunks_) + heap_bytes_of(spilled_);
    for (auto& f : free_) b += heap_bytes_of(f);
    return b;
  }

 private:
  char* pop(std::vector<char*>& f) {
    char* p = f.back();
    f.pop_back();
    in_use_.fetch_add(block_, std::memory_order_relaxed);
    return p;
  }
  // Up to a chunk of spilled blocks into an empty list; false when none.
  bool take_spilled(std::vector<char*>& f) {
    if (!spilled_count_.load(std::memory_order_relaxed)) return false;
    std::lock_guard g(mu_);
    uint64_t n = std::min<uint64_t>(kChunkBlocks, spilled_.size());
    f.insert(f.end(), spilled_.end() - long(n), spilled_.end());
    spilled_.resize(spilled_.size() - n);
    spilled_count_.store(spilled_.size(), std::memory_order_relaxed);
    return n > 0;
  }

  dev::DramBudget& dram_;
  uint64_t block_, limit_;
  std::vector<std::vector<char*>> free_;
  std::atomic<uint64_t> reserved_{0}, in_use_{0};
  std::atomic<bool> full_{false};  // no chunk left to take (blocks freed to a core's list stay usable)
  std::mutex mu_;  // chunks_ and spilled_
  std::vector<std::pair<char*, uint64_t>> chunks_;
  std::vector<char*> spilled_;
  std::atomic<uint64_t> spilled_count_{0};
};

}  // namespace nvt::nvc
