// The snapshot pages in NVM (foedus-sigmod15 section 7.4): one persistent region of fixed-size
// pages. The gleaner takes pages for a new snapshot in ascending index order (free pages first,
// then the high-water mark), so a snapshot is written as long sequential runs; pages the new
// snapshot superseded are retired and become free only after the new snapshot's metadata is
// durable and its pointers are installed (no transaction can still follow them, and a crash
// recovers from the new snapshot). Page index 0 is never used (0 = no snapshot page).
#pragma once
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "storage/device/nvm_image.h"
#include "storage/engines/foedus/dual_pointer.h"
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
  // Pages superseded as a whole list (an ordered tree's old interior): handed over, not copied;
  // their indexes are taken when they are released.
  void retire(ParallelVector<SnapshotPtr>&& pages) {
    std::lock_guard g(mu_);
    retired_lists_.push_back(std::move(pages));
  }
  // The new snapshot is durable and installed: what it superseded is free. The retired pages
  // are sorted and merged into the free list (ascending: a snapshot is written in long
  // sequential runs) on up to `nthreads` threads; no step walks a list on one thread.
  void release_retired(int nthreads = 1) {
    std::lock_guard g(mu_);
    std::vector<size_t> at{retired_.size()};
    for (const auto& l : retired_lists_) at.push_back(at.back() + l.size());
    ParallelVector<uint64_t> r;
    r.resize(at.back());
    std::copy(retired_.begin(), retired_.end(), r.begin());  // single pages: as many as the log tail changed
    for (size_t k = 0; k < retired_lists_.size(); k++)
      parallel_runs(retired_lists_[k].size(), nthreads, kMinRun, [&](size_t b, size_t e, bool) {
        for (size_t i = b; i < e; i++) r[at[k] + i] = snapshot_index(retired_lists_[k][i]);
      });
    parallel_sort(r, nthreads, kMinRun);
    ParallelVector<uint64_t> merged;
    merged.resize(free_.size() - next_free_ + r.size());
    parallel_merge(free_.data() + next_free_, free_.size() - next_free_, r.data(), r.size(), merged.data(), nthreads,
                   kMinRun);
    free_.swap(merged);
    next_free_ = 0;
    retired_.clear();
    retired_lists_.clear();
  }
  // Restart: pages below `high_water` that no thread marks live are free. On `nthreads`
  // threads: each_live(w, n, mark) calls mark(page) for the w-th of n shares of the live pages,
  // then each thread lists the free pages of one run.
  template <class EachLive>
  void reset(uint64_t high_water, int nthreads, EachLive&& each_live) {
    std::lock_guard g(mu_);
    high_water_ = std::max<uint64_t>(1, high_water);
    const size_t n = size_t(std::max(1, nthreads));
    const uint64_t hw = high_water_;
    // One fan-out in four phases (thread starts cost a VM up to half a millisecond): zero a
    // share of the byte map, mark a share of the live pages, count a share's free pages, write
    // them at the share's offset (a prefix sum of the counts, so the list stays ascending with no
    // serial concatenation). The byte map and the list are first touched on every thread: fresh
    // memory costs microseconds a page on a VM.
    ParallelVector<uint8_t> in_use(hw);
    uint8_t* used = in_use.data();
    std::vector<uint64_t> at(n + 1, 0);
    std::barrier sync{std::ptrdiff_t(n)};
    std::barrier counted{std::ptrdiff_t(n), [&]() noexcept {
      for (size_t w = 0; w < n; w++) at[w + 1] += at[w];
      free_ = ParallelVector<uint64_t>(at[n]);
    }};
    parallel(int(n), [&](int w) {
      const uint64_t lo = std::max<uint64_t>(1, hw * uint64_t(w) / n), hi = hw * uint64_t(w + 1) / n;
      std::fill(used + hw * uint64_t(w) / n, used + hi, uint8_t(0));
      sync.arrive_and_wait();
      each_live(w, int(n), [used, hw](uint64_t page) {
        if (page < hw) std::atomic_ref<uint8_t>(used[page]).store(1, std::memory_order_relaxed);
      });
      sync.arrive_and_wait();
      uint64_t c = 0;
      for (uint64_t i = lo; i < hi; i++) c += !used[i];
      at[size_t(w) + 1] = c;
      counted.arrive_and_wait();
      uint64_t* o = free_.data() + at[size_t(w)];
      for (uint64_t i = lo; i < hi; i++)
        if (!used[i]) *o++ = i;
    });
    retired_.clear();
    retired_lists_.clear();
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
  ParallelVector<uint64_t> free_;  // ascending; [next_free_, end) not yet taken
  size_t next_free_ = 0;
  std::vector<uint64_t> retired_;
  std::vector<ParallelVector<SnapshotPtr>> retired_lists_;
  static constexpr size_t kMinRun = 4096;  // fewer pages a thread are not worth its start
};

}  // namespace nvt::foedus
