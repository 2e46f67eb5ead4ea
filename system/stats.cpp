#include "system/stats.h"

namespace nvt {

double LatencyHistogram::lower(size_t i) {
  if (i < 16) return double(i);
  size_t e = i / 16 + 3;
  return double((16 + i % 16) << (e - 4));
}

double LatencyHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  uint64_t want = uint64_t(p * double(count_));
  if (want >= count_) want = count_ - 1;
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets_.size(); i++) {
    seen += buckets_[i];
    if (seen > want) return (lower(i) + lower(i + 1)) / 2;
  }
  return lower(buckets_.size() - 1);
}

}  // namespace nvt
