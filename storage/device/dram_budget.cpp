#include "storage/device/dram_budget.h"

#include <cstdlib>
#include <cstring>

#include "storage/device/nvm_image.h"

namespace nvt::dev {

void DramBudget::charge(uint64_t bytes, const std::string& what, DramUse use) {
  {
    std::lock_guard g(mu_);
    auto [it, fresh] = kind_.emplace(what, use);
    if (!fresh && it->second != use)
      throw std::logic_error("DRAM ledger entry " + what + " charged as both data and overhead");
  }
  if (use == DramUse::Data) {
    uint64_t prev = data_used_.fetch_add(bytes);
    if (prev + bytes > data_cap_) {
      data_used_.fetch_sub(bytes);
      throw BudgetError("DRAM data cap exhausted: " + what + " needs " + format_size(bytes) + ", " +
                        format_size(prev >= data_cap_ ? 0 : data_cap_ - prev) + " left of " +
                        format_size(data_cap_) + " for data (database / P; lower --p-ratio)");
    }
  }
  uint64_t prev = used_.fetch_add(bytes);
  if (prev + bytes > budget_) {
    used_.fetch_sub(bytes);
    if (use == DramUse::Data) data_used_.fetch_sub(bytes);
    throw BudgetError("DRAM budget exhausted: " + what + " needs " + format_size(bytes) + ", " +
                      format_size(prev >= budget_ ? 0 : budget_ - prev) + " left of " +
                      format_size(budget_) + " (raise --dram-size or lower --p-ratio)");
  }
  std::lock_guard g(mu_);
  by_what_[what] += bytes;
}

void DramBudget::uncharge(uint64_t bytes, const std::string& what) {
  std::lock_guard g(mu_);
  auto k = kind_.find(what);
  if (k != kind_.end() && k->second == DramUse::Data) data_used_.fetch_sub(bytes);
  used_.fetch_sub(bytes);
  by_what_[what] -= bytes;
}

void* DramBudget::alloc(uint64_t bytes, const std::string& what, DramUse use) {
  charge(bytes, what, use);
  uint64_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!p) {
    uncharge(bytes, what);
    throw BudgetError("host out of memory allocating " + format_size(bytes) + " for " + what);
  }
  memset(p, 0, rounded);
  return p;
}

void DramBudget::free(void* p, uint64_t bytes, const std::string& what) {
  std::free(p);
  uncharge(bytes, what);
}

std::map<std::string, uint64_t> DramBudget::breakdown() const {
  std::lock_guard g(mu_);
  return by_what_;
}

std::map<std::string, DramUse> DramBudget::kinds() const {
  std::lock_guard g(mu_);
  return kind_;
}

}  // namespace nvt::dev
