// One DRAM ledger entry for memory that grows and shrinks (std::vector lists, hash maps): set()
// charges or gives back the difference from what was charged, so the ledger follows the
// memory's size where the owner re-measures it (NVCaracal: at each epoch commit, when no core
// touches its lists). Gives back what it holds when it goes.
#pragma once
#include <cstdint>
#include <string>

#include "storage/device/dram_budget.h"

namespace nvt::nvc {

class LedgerEntry {
 public:
  LedgerEntry(dev::DramBudget& dram, std::string what) : dram_(dram), what_(std::move(what)) {}
  ~LedgerEntry() { set(0); }
  LedgerEntry(const LedgerEntry&) = delete;
  LedgerEntry& operator=(const LedgerEntry&) = delete;
  // Throws dev::BudgetError (nothing changed) when the growth does not fit the budget.
  void set(uint64_t bytes) {
    if (bytes > charged_) dram_.charge(bytes - charged_, what_);
    else if (bytes < charged_) dram_.uncharge(charged_ - bytes, what_);
    charged_ = bytes;
  }
  uint64_t charged() const { return charged_; }

 private:
  dev::DramBudget& dram_;
  std::string what_;
  uint64_t charged_ = 0;
};

// Bytes a vector holds on the heap.
template <class V>
uint64_t heap_bytes_of(const V& v) {
  return uint64_t(v.capacity()) * sizeof(typename V::value_type);
}

}  // namespace nvt::nvc
