// The DRAM budget: DRAM an engine may use (database size / P unless given explicitly).
// Indexes, caches and engine-private data are charged here; exceeding it is an error naming
// what asked, never a silent spill into NVM.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace nvt::dev {

struct BudgetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class DramBudget {
 public:
  explicit DramBudget(uint64_t budget) : budget_(budget) {}
  // Allocate zeroed, 64 B aligned DRAM charged to `what`. Throws BudgetError when over budget.
  void* alloc(uint64_t bytes, const std::string& what);
  void free(void* p, uint64_t bytes, const std::string& what);
  // Charge without allocating (memory owned elsewhere).
  void charge(uint64_t bytes, const std::string& what);
  uint64_t budget() const { return budget_; }
  uint64_t used() const { return used_.load(); }
  uint64_t left() const { uint64_t u = used(); return u >= budget_ ? 0 : budget_ - u; }
  std::map<std::string, uint64_t> breakdown() const;

 private:
  uint64_t budget_;
  std::atomic<uint64_t> used_{0};
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> by_what_;
};

}  // namespace nvt::dev
