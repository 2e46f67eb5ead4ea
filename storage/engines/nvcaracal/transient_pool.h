// The transient pool (papers/nvcaracal-eurosys23.txt section 5.1): per core, a bump allocator
// in DRAM for the epoch's version arrays and intermediate values, reset as a whole when the
// epoch is checkpointed. Sized once from --epoch-txns and charged to the DRAM budget, so an
// epoch that cannot fit is an error at start, not a spill mid-run.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

#include "storage/device/dram_budget.h"

namespace nvt::nvc {

class TransientPool {
 public:
  TransientPool(dev::DramBudget& dram, uint64_t bytes, const std::string& what)
      : dram_(dram), what_(what), size_((bytes + 63) / 64 * 64) {
    base_ = static_cast<char*>(dram_.alloc(size_, what_));
  }
  ~TransientPool() { dram_.free(base_, size_, what_); }
  TransientPool(const TransientPool&) = delete;
  TransientPool& operator=(const TransientPool&) = delete;

  // 64 B aligned bytes valid until reset().
  char* alloc(uint64_t bytes) {
    uint64_t need = (bytes + 63) / 64 * 64;
    if (used_ + need > size_)
      throw std::runtime_error(what_ + " is full (" + std::to_string(size_) +
                               " B): an epoch wrote more than --epoch-txns was sized for");
    char* p = base_ + used_;
    used_ += need;
    if (used_ > peak_) peak_ = used_;
    return p;
  }
  void reset() { used_ = 0; }
  uint64_t used() const { return used_; }
  uint64_t peak() const { return peak_; }
  uint64_t size() const { return size_; }

 private:
  dev::DramBudget& dram_;
  std::string what_;
  uint64_t size_;
  char* base_ = nullptr;
  uint64_t used_ = 0, peak_ = 0;
};

}  // namespace nvt::nvc
