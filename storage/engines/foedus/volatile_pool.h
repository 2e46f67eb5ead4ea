// The pool of volatile pages in DRAM (foedus-sigmod15 section 4): fixed-size pages taken when a
// transaction installs a volatile page and given back when the gleaner drops one (7.5). Its size
// comes from the DRAM budget's data share (its pages are data; the free list is overhead); its
// fill is the gleaner's "DRAM pressure" trigger.
#pragma once
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "storage/device/dram_budget.h"
#include "storage/engines/foedus/page.h"

namespace nvt::foedus {

class VolatilePool {
 public:
  VolatilePool(dev::DramBudget& budget, uint64_t pages, uint32_t page_size)
      : budget_(budget), pages_(pages), page_size_(page_size) {
    mem_ = static_cast<char*>(budget.alloc(pages_ * page_size_, "foedus.volatile_pages", dev::DramUse::Data));
    budget.charge(pages_ * sizeof(Page*), "foedus.volatile_free_list");
    free_.reserve(pages_);
    for (uint64_t i = pages_; i-- > 0;) free_.push_back(reinterpret_cast<Page*>(mem_ + i * page_size_));
  }
  ~VolatilePool() {
    budget_.free(mem_, pages_ * page_size_, "foedus.volatile_pages");
    budget_.uncharge(pages_ * sizeof(Page*), "foedus.volatile_free_list");
  }
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
  uint64_t pages_;
  uint32_t page_size_;
  char* mem_ = nullptr;
  mutable std::mutex mu_;
  std::vector<Page*> free_;
};

}  // namespace nvt::foedus
