// The pool of volatile pages in DRAM (foedus-sigmod15 section 4): fixed-size pages taken when a
// transaction installs a volatile page and given back when the gleaner drops one (7.5). Its size
// comes from the DRAM budget: `index_pages` for what FOEDUS keeps volatile whatever the data
// (roots, the ordered trees' interior pages, a path per thread: overhead, as other engines'
// indexes are) and `data_pages` from the data share (data); the free list is overhead. Its fill
// is the gleaner's "DRAM pressure" trigger.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "storage/device/dram_budget.h"
#include "storage/engines/foedus/page.h"

namespace nvt::foedus {

class VolatilePool {
 public:
  VolatilePool(dev::DramBudget& budget, uint64_t index_pages, uint64_t data_pages, uint32_t page_size)
      : budget_(budget), index_pages_(index_pages), pages_(index_pages + data_pages), page_size_(page_size) {
    budget.charge(index_pages_ * page_size_, kIndex);
    try {
      mem_ = static_cast<char*>(budget.alloc(data_pages * page_size_, kData, dev::DramUse::Data));
      budget.charge(pages_ * sizeof(Page*), "foedus.volatile_free_list");
    } catch (...) {
      if (mem_) budget.free(mem_, data_pages * page_size_, kData);
      budget.uncharge(index_pages_ * page_size_, kIndex);
      throw;
    }
    // One block for both: the ledger's allocation holds the data pages, this the index pages.
    index_mem_ = static_cast<char*>(std::aligned_alloc(64, std::max<uint64_t>(1, index_pages_) * page_size_));
    if (!index_mem_) throw dev::BudgetError("host out of memory for FOEDUS's volatile index pages");
    memset(index_mem_, 0, index_pages_ * page_size_);
    free_.reserve(pages_);
    for (uint64_t i = pages_ - index_pages_; i-- > 0;) free_.push_back(reinterpret_cast<Page*>(mem_ + i * page_size_));
    for (uint64_t i = index_pages_; i-- > 0;) free_.push_back(reinterpret_cast<Page*>(index_mem_ + i * page_size_));
  }
  ~VolatilePool() {
    budget_.free(mem_, (pages_ - index_pages_) * page_size_, kData);
    std::free(index_mem_);
    budget_.uncharge(index_pages_ * page_size_, kIndex);
    budget_.uncharge(pages_ * sizeof(Page*), "foedus.volatile_free_list");
  }
  static constexpr const char* kData = "foedus.volatile_pages";
  static constexpr const char* kIndex = "foedus.volatile_index_pages";
  VolatilePool(const VolatilePool&) = delete;
  VolatilePool& operator=(const VolatilePool&) = delete;

  // A page, or nullptr when the pool is empty (the caller aborts and the gleaner drops pages).
  Page* take() {
    std::lock_guard g(mu_);
    if (free_.empty()) return nullptr;
    Page* p = free_.back();
    free_.pop_back();
    return p;
  }
  void give(Page* p) {
    std::lock_guard g(mu_);
    free_.push_back(p);
  }
  uint64_t capacity() const { return pages_; }
  uint64_t in_use() const {
    std::lock_guard g(mu_);
    return pages_ - free_.size();
  }
  double fill() const { return double(in_use()) / double(pages_); }

 private:
  dev::DramBudget& budget_;
  uint64_t index_pages_, pages_;
  uint32_t page_size_;
  char* mem_ = nullptr;
  char* index_mem_ = nullptr;
  mutable std::mutex mu_;
  std::vector<Page*> free_;
};

}  // namespace nvt::foedus
