// The snapshot pages in NVM (foedus-sigmod15 section 7.4): one persistent region of fixed-size
// pages. The gleaner takes pages for a new snapshot in ascending index order (free pages first,
// then the high-water mark), so a snapshot is written as long sequential runs; pages the new
// snapshot superseded are retired and become free only after the new snapshot's metadata is
// durable and its pointers are installed (no transaction can still follow them, and a crash
// recovers from the new snapshot). Page index 0 is never used (0 = no snapshot page).
#pragma once
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "storage/device/nvm_image.h"
#include "storage/engines/foedus/page.h"

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
  // Restart: pages below `high_water` that `live` (sorted or not) does not name are free.
  void reset(uint64_t high_water, std::vector<uint64_t> live) {
    std::lock_guard g(mu_);
    high_water_ = std::max<uint64_t>(1, high_water);
    std::sort(live.begin(), live.end());
    free_.clear();
    retired_.clear();
    next_free_ = 0;
    for (uint64_t i = 1, j = 0; i < high_water_; i++) {
      while (j < live.size() && live[j] < i) j++;
      if (j == live.size() || live[j] != i) free_.push_back(i);
    }
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
