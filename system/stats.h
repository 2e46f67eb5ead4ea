// Per-thread statistics of the measured phase: commits, aborts by cause, a latency histogram.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>

#include "storage/access.h"
#include "storage/device/device.h"

namespace nvt {

// Log-linear latency histogram (16 sub-buckets per power of two): ~6% resolution, no allocation.
class LatencyHistogram {
 public:
  void add(uint64_t ns) {
    buckets_[index(ns)]++;
    count_++;
    sum_ += ns;
  }
  void merge(const LatencyHistogram& o) {
    for (size_t i = 0; i < buckets_.size(); i++) buckets_[i] += o.buckets_[i];
    count_ += o.count_;
    sum_ += o.sum_;
  }
  uint64_t count() const { return count_; }
  double mean() const { return count_ ? double(sum_) / double(count_) : 0; }
  double percentile(double p) const;  // ns, bucket midpoint

 private:
  static size_t index(uint64_t v) {
    if (v < 16) return v;
    int e = 63 - __builtin_clzll(v);
    return size_t(e - 3) * 16 + ((v >> (e - 4)) & 15);
  }
  static double lower(size_t i);
  std::array<uint64_t, 61 * 16> buckets_{};
  uint64_t count_ = 0, sum_ = 0;
};

struct ThreadStats {
  std::atomic<uint64_t> committed{0};  // atomic so the timeline can sample it
  std::array<uint64_t, size_t(AbortCause::kCount)> aborts{};
  uint64_t retried = 0;  // committed transactions that needed at least one retry
  LatencyHistogram latency;
  LatencyHistogram durable_latency;    // to the commit's durability (every engine; docs/output.md)
  dev::Counters dev_start, dev_end;    // device counters at the measured phase's bounds
  uint64_t engine_hits = 0, engine_accesses = 0;
  double hit_rate = 0;
  uint64_t aborted() const {
    uint64_t s = 0;
    for (auto a : aborts) s += a;
    return s;
  }
};

}  // namespace nvt
