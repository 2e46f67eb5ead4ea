// The snapshot pages in NVM (foedus-sigmod15 section 7.4): one persistent region of fixed-size
// pages. The gleaner takes pages for a new snapshot in ascending index order (free pages first,
// then the high-water mark), so a snapshot is written as long sequential runs; pages the new
// snapshot superseded are retired and become free only after the new snapshot's metadata is
// durable and its pointers are installed (no transaction can still follow them, and a crash
// recovers from the new snapshot). Page index 0 is never used (0 = no snapshot page).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "storage/device/nvm_image.h"
#include "storage/engines/foedus/page.h"
#include "storage/parallel.h"

namespace nvt::foedus {

class SnapshotArea {
 public:
  SnapshotArea(dev::Region r, uint32_t page_size) : base_(r.base), page_size_(page_size), pages_(r.size / page_size) {}

  Page* page(uint64_t index) const { return reinterpret_cast<Page*>(base_ + index * page_size_); }
  uint64_t pages() const { return pages_; }
  uint32_t page_size() const { return page_size_; }

  // A page for the snapshot being written.
  uint64_t take() {
    std::lock_guard g(mu_);
    if (next_free_ < free_.size()) return free_[next_free_++];
    if (high_water_ >= pages_)
      throw std::runtime_error("FOEDUS snapshot area full (" + std::to_string(pages_) +
                               " pages): give a larger --nvm-size");
    return high_water_++;
  }
  void retire(uint64_t index) {
    std::lock_guard g(mu_);
    retired_.push_back(index);
  }
  // The new snapshot is durable and installed: what it superseded is free.
  void release_retired() {
    std::lock_guard g(mu_);
    free_.erase(free_.begin(), free_.begin() + long(next_free_));
    next_free_ = 0;
    free_.insert(free_.end(), retired_.begin(), retired_.end());
    retired_.clear();
    std::sort(free_.begin(), free_.end());
  }
  // Restart: pages below `high_water` that no thread marks live are free. On `nthreads`
  // threads: each_live(w, n, mark) calls mark(page) for the w-th of n shares of the live pages,
  // then each thread lists the free pages of one run.
  template <class EachLive>
  void reset(uint64_t high_water, int nthreads, EachLive&& each_live) {
    std::lock_guard g(mu_);
    high_water_ = std::max<uint64_t>(1, high_water);
    const size_t n = size_t(std::max(1, nthreads));
    std::vector<uint8_t> in_use(high_water_, 0);
    parallel(int(n), [&](int w) {
      each_live(w, int(n), [&](uint64_t page) {
        if (page < high_water_) std::atomic_ref<uint8_t>(in_use[page]).store(1, std::memory_order_relaxed);
      });
    });
    std::vector<std::vector<uint64_t>> part(n);
    // Bounds and the byte map's address in locals: each push_back's store could otherwise alias
    // them (a byte may alias anything), and the bound's division would run for every page.
    parallel(int(n), [&](int w) {
      const uint64_t lo = std::max<uint64_t>(1, high_water_ * uint64_t(w) / n), hi = high_water_ * uint64_t(w + 1) / n;
      const uint8_t* used = in_use.data();
      std::vector<uint64_t>& out = part[size_t(w)];
      for (uint64_t i = lo; i < hi; i++)
        if (!used[i]) out.push_back(i);
    });
    free_.clear();
    for (auto& p : part) free_.insert(free_.end(), p.begin(), p.end());
    retired_.clear();
    next_free_ = 0;
  }
  uint64_t high_water() const {
    std::lock_guard g(mu_);
    return high_water_;
  }
  uint64_t in_use() const {
    std::lock_guard g(mu_);
    return high_water_ - 1 - (free_.size() - next_free_);
  }

 private:
  char* base_;
  uint32_t page_size_;
  uint64_t pages_;
  mutable std::mutex mu_;
  uint64_t high_water_ = 1;
  std::vector<uint64_t> free_;  // ascending; [next_free_, end) not yet taken
  size_t next_free_ = 0;
  std::vector<uint64_t> retired_;
};

}  // namespace nvt::foedus
