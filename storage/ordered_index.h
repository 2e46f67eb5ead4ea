// An ordered index in DRAM: a set of uint64 keys for range scans (TPC-C's "oldest NEW-ORDER",
// "last 20 orders", secondary indexes). Lookup of a key's tuple stays with the hash index; this
// index only answers "which keys lie in [lo, hi], in order". A std::set behind a reader-writer
// lock: scans share it, inserts and removals take it alone. Simple and correct rather than
// scalable (a latch-free B+-tree would scale further; the testbed's scans are short). DRAM is
// charged up front for the keys the table may hold (kNodeBytes each), like the hash index.
#pragma once
#include <cstdint>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "storage/device/dram_budget.h"

namespace nvt {

class OrderedIndex {
 public:
  static constexpr uint64_t kNodeBytes = 48;  // a red-black tree node holding one key

  OrderedIndex(uint64_t expected_keys, dev::DramBudget& budget, const std::string& what) {
    budget.charge(expected_keys * kNodeBytes, what);
    bytes_ = expected_keys * kNodeBytes;
  }
  OrderedIndex(const OrderedIndex&) = delete;
  OrderedIndex& operator=(const OrderedIndex&) = delete;

  uint64_t bytes() const { return bytes_; }

  bool insert(uint64_t key) {
    std::unique_lock g(mu_);
    return keys_.insert(key).second;
  }
  bool remove(uint64_t key) {
    std::unique_lock g(mu_);
    return keys_.erase(key) != 0;
  }
  // Remove `key` if pred() holds, decided under the index's lock (so that an insert of the key
  // that follows a change pred() observes is not undone).
  template <class Pred>
  bool remove_if(uint64_t key, Pred&& pred) {
    std::unique_lock g(mu_);
    return pred() && keys_.erase(key) != 0;
  }
  bool contains(uint64_t key) const {
    std::shared_lock g(mu_);
    return keys_.count(key) != 0;
  }
  size_t size() const {
    std::shared_lock g(mu_);
    return keys_.size();
  }

  // Keys in [lo, hi], ascending (or descending when `reverse`), at most `limit` of them.
  void range(uint64_t lo, uint64_t hi, size_t limit, std::vector<uint64_t>& out,
             bool reverse = false) const {
    out.clear();
    if (lo > hi || limit == 0) return;
    std::shared_lock g(mu_);
    if (!reverse) {
      for (auto it = keys_.lower_bound(lo); it != keys_.end() && *it <= hi && out.size() < limit; ++it)
        out.push_back(*it);
    } else {
      auto it = keys_.upper_bound(hi);
      while (it != keys_.begin() && out.size() < limit) {
        --it;
        if (*it < lo) break;
        out.push_back(*it);
      }
    }
  }

  template <class F>
  void for_each(F&& f) const {
    std::shared_lock g(mu_);
    for (uint64_t k : keys_) f(k);
  }

 private:
  mutable std::shared_mutex mu_;
  std::set<uint64_t> keys_;
  uint64_t bytes_ = 0;
};

}  // namespace nvt
