// An ordered index in DRAM: a set of uint64 keys for range scans (TPC-C's "oldest NEW-ORDER",
// "last 20 orders", secondary indexes). Lookup of a key's tuple stays with the hash index; this
// index only answers "which keys lie in [lo, hi], in order". std::sets behind one reader-writer
// lock: scans share it, inserts and removals take it alone. Simple and correct rather than
// scalable (a latch-free B+-tree would scale further; the testbed's scans are short). The keys
// are split into key ranges, one set each, only so that recovery can rebuild the index on all
// its threads (rebuild()); a loaded index is one range. DRAM is charged up front for the keys
// the table may hold (kNodeBytes each), like the hash index.
#pragma once
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "storage/device/dram_budget.h"
#include "storage/parallel.h"

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
    return part(key).insert(key).second;
  }
  bool remove(uint64_t key) {
    std::unique_lock g(mu_);
    return part(key).erase(key) != 0;
  }
  // Remove `key` if pred() holds, decided under the index's lock (so that an insert of the key
  // that follows a change pred() observes is not undone).
  template <class Pred>
  bool remove_if(uint64_t key, Pred&& pred) {
    std::unique_lock g(mu_);
    return pred() && part(key).erase(key) != 0;
  }
  bool contains(uint64_t key) const {
    std::shared_lock g(mu_);
    return part(key).count(key) != 0;
  }
  size_t size() const {
    std::shared_lock g(mu_);
    size_t n = 0;
    for (auto& p : parts_) n += p.size();
    return n;
  }

  // Keys in [lo, hi], ascending (or descending when `reverse`), at most `limit` of them.
  void range(uint64_t lo, uint64_t hi, size_t limit, std::vector<uint64_t>& out,
             bool reverse = false) const {
    out.clear();
    if (lo > hi || limit == 0) return;
    std::shared_lock g(mu_);
    if (!reverse) {
      for (size_t i = index_of(lo); i < parts_.size() && out.size() < limit; i++)
        for (auto it = parts_[i].lower_bound(lo); it != parts_[i].end() && out.size() < limit; ++it) {
          if (*it > hi) return;
          out.push_back(*it);
        }
    } else {
      for (size_t i = index_of(hi) + 1; i-- > 0 && out.size() < limit;) {
        auto it = parts_[i].upper_bound(hi);
        while (it != parts_[i].begin() && out.size() < limit) {
          --it;
          if (*it < lo) return;
          out.push_back(*it);
        }
      }
    }
  }

  template <class F>
  void for_each(F&& f) const {
    std::shared_lock g(mu_);
    for (auto& p : parts_)
      for (uint64_t k : p) f(k);
  }

  // Recovery: replace the keys by those `collect(w, nthreads, add)` passes to add(key) on worker
  // w (each worker its own share, e.g. a slice of the hash index), on nthreads threads with no
  // serial step that grows with the keys: each worker sorts its share, samples of the shares
  // cut the key space into nthreads ranges, and each worker sorts one range into its own set.
  // No other thread may use the index meanwhile.
  template <class Collect>
  void rebuild(int nthreads, Collect&& collect) {
    const size_t n = size_t(std::max(1, nthreads));
    std::vector<std::vector<uint64_t>> share(n);
    parallel(int(n), [&](int w) {
      auto& v = share[size_t(w)];
      collect(w, int(n), [&v](uint64_t key) { v.push_back(key); });
      std::sort(v.begin(), v.end());
    });
    std::vector<uint64_t> samples;  // n - 1 cuts from n x 8 evenly spaced samples
    for (auto& v : share)
      for (size_t j = 1; j <= 8 && !v.empty(); j++) samples.push_back(v[(v.size() - 1) * j / 8]);
    std::sort(samples.begin(), samples.end());
    bounds_.clear();
    for (size_t i = 1; i < n && !samples.empty(); i++) {
      uint64_t b = samples[samples.size() * i / n];
      if (bounds_.empty() || b > bounds_.back()) bounds_.push_back(b);
    }
    parts_.assign(bounds_.size() + 1, {});
    parallel(int(parts_.size()), [&](int i) {
      std::vector<uint64_t> mine;
      for (auto& v : share) {
        auto from = i == 0 ? v.begin() : std::lower_bound(v.begin(), v.end(), bounds_[size_t(i) - 1]);
        auto to = size_t(i) == bounds_.size() ? v.end() : std::lower_bound(v.begin(), v.end(), bounds_[size_t(i)]);
        mine.insert(mine.end(), from, to);
      }
      std::sort(mine.begin(), mine.end());
      auto& p = parts_[size_t(i)];
      for (uint64_t k : mine) p.insert(p.end(), k);  // sorted: constant time each
    });
  }

  // rebuild() from the keys of a hash index (HashIndex) whose values keep(value) accepts, each
  // thread a slice of its slots.
  template <class Index, class Keep = bool (*)(uint64_t)>
  void rebuild_from(const Index& index, int nthreads, Keep&& keep = [](uint64_t) { return true; }) {
    const uint64_t slots = index.slot_count();
    rebuild(nthreads, [&](int w, int n, auto&& add) {
      index.for_each_in(slots * uint64_t(w) / uint64_t(n), slots * uint64_t(w + 1) / uint64_t(n),
                        [&](uint64_t key, uint64_t v) { if (keep(v)) add(key); });
    });
  }

 private:
  // parts_[i] holds the keys in [bounds_[i - 1], bounds_[i]).
  size_t index_of(uint64_t key) const {
    return size_t(std::upper_bound(bounds_.begin(), bounds_.end(), key) - bounds_.begin());
  }
  std::set<uint64_t>& part(uint64_t key) { return parts_[index_of(key)]; }
  const std::set<uint64_t>& part(uint64_t key) const { return parts_[index_of(key)]; }

  mutable std::shared_mutex mu_;
  std::vector<std::set<uint64_t>> parts_{1};
  std::vector<uint64_t> bounds_;
  uint64_t bytes_ = 0;
};

}  // namespace nvt
