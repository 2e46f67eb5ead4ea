#include "storage/device/dram_budget.h"

#include <cstdlib>
#include <cstring>

#include "storage/device/nvm_image.h"

namespace nvt::dev {

void DramBudget::charge(uint64_t bytes, const std::string& what) {
  uint64_t prev = used_.fetch_add(bytes);
  if (prev + bytes > budget_) {
    used_.fetch_sub(bytes);
    throw BudgetError("DRAM budget exhausted: " + what + " needs " + format_size(bytes) + ", " +
                      format_size(prev >= budget_ ? 0 : budget_ - prev) + " left of " +
                      format_size(budget_) + " (raise --dram-size or lower --p-ratio)");
  }
  std::lock_guard g(mu_);
  by_what_[what] += bytes;
}

void* DramBudget::alloc(uint64_t bytes, const std::string& what) {
  charge(bytes, what);
  uint64_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!p) {
    free(nullptr, bytes, what);
    throw BudgetError("host out of memory allocating " + format_size(bytes) + " for " + what);
  }
  memset(p, 0, rounded);
  return p;
}

void DramBudget::free(void* p, uint64_t bytes, const std::string& what) {
  std::free(p);
  used_.fetch_sub(bytes);
  std::lock_guard g(mu_);
  by_what_[what] -= bytes;
}

std::map<std::string, uint64_t> DramBudget::breakdown() const {
  std::lock_guard g(mu_);
  return by_what_;
}

}  // namespace nvt::dev
