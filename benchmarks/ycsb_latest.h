// YCSB's "latest" request distribution (workload D): keys skewed toward the most recently
// inserted ones. Recency rank r (0 = the newest key) is Zipf(theta) distributed over the keys
// that exist now, [0, high_water), and the key is high_water - 1 - r. YCSB's
// SkewedLatestGenerator recomputes zeta as the key count grows; here one rejection-inversion
// generator (zipf.h) built for the most keys there may ever be draws exactly over the current
// count, with no setup per insert.
#pragma once
#include <cstdint>

#include "benchmarks/zipf.h"

namespace nvt {

class Latest {
 public:
  // max_keys: the largest high_water() the caller will pass (loaded rows + insert room).
  Latest(uint64_t max_keys, double theta) : zipf_(max_keys, theta) {}

  // A key in [0, high_water), the newest (high_water - 1) the most likely;
  // 0 < high_water <= max_keys.
  uint64_t next(Rng& r, uint64_t high_water) const { return high_water - 1 - zipf_.rank(r, high_water); }

 private:
  Zipf zipf_;
};

}  // namespace nvt
