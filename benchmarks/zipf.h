// Zipfian key generator (Gray et al., "Quickly generating billion-record synthetic databases",
// SIGMOD'94, as YCSB and DBx1000 use it): O(1) per draw after an O(n) zeta precomputation.
// theta = 0 is uniform. Ranks are scrambled into keys by a bijection (rank * a + b mod n, a
// coprime with n) so that hot keys are spread over the table rather than packed at its start.
#pragma once
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>

namespace nvt {

// xoshiro256** : fast, good-quality per-thread generator.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& x : s_) x = splitmix(seed);
  }
  uint64_t next() {
    uint64_t r = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0]; s_[3] ^= s_[1]; s_[1] ^= s_[2]; s_[0] ^= s_[3]; s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  uint64_t below(uint64_t n) { return uint64_t((__uint128_t(next()) * n) >> 64); }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t s_[4];
};

class Zipf {
 public:
  Zipf(uint64_t n, double theta) : n_(n), theta_(theta) {
    if (n == 0) throw std::invalid_argument("zipf over an empty range");
    if (theta < 0 || theta >= 1) throw std::invalid_argument("zipf theta must be in [0, 1)");
    if (theta > 0) {
      zetan_ = zeta(n, theta);
      double zeta2 = zeta(2, theta);
      alpha_ = 1.0 / (1.0 - theta);
      eta_ = (1 - std::pow(2.0 / double(n), 1 - theta)) / (1 - zeta2 / zetan_);
      half_pow_ = 1 + std::pow(0.5, theta);
    }
    a_ = 0x9e3779b97f4a7c15ull % n;
    if (a_ == 0) a_ = 1;
    while (std::gcd(a_, n) != 1) a_++;
    b_ = 0x632be59bd9b4e019ull % n;
  }

  // Rank 0 is the most popular.
  uint64_t rank(Rng& r) const {
    if (theta_ == 0) return r.below(n_);
    double u = r.uniform();
    double uz = u * zetan_;
    if (uz < 1) return 0;
    if (uz < half_pow_) return n_ > 1 ? 1 : 0;
    uint64_t v = uint64_t(double(n_) * std::pow(eta_ * u - eta_ + 1, alpha_));
    return v < n_ ? v : n_ - 1;
  }
  uint64_t key_of_rank(uint64_t rank) const {
    return uint64_t((__uint128_t(rank) * a_ + b_) % n_);
  }
  uint64_t next(Rng& r) const { return key_of_rank(rank(r)); }

  // Probability of rank i under this distribution (for tests).
  double probability(uint64_t i) const {
    if (theta_ == 0) return 1.0 / double(n_);
    return 1.0 / std::pow(double(i + 1), theta_) / zetan_;
  }

  // Exact up to 2^20 terms; beyond, the Euler-Maclaurin tail (error far below 1e-9 relative),
  // so a paper-scale table (billions of rows) costs milliseconds, not minutes.
  static double zeta(uint64_t n, double theta) {
    constexpr uint64_t kExact = 1ull << 20;
    double s = 0;
    uint64_t m = n < kExact ? n : kExact;
    for (uint64_t i = 1; i <= m; i++) s += 1.0 / std::pow(double(i), theta);
    if (n > m) {
      double a = double(m), b = double(n), e = 1 - theta;
      s += (std::pow(b, e) - std::pow(a, e)) / e + (std::pow(b, -theta) - std::pow(a, -theta)) / 2 -
           theta / 12 * (std::pow(b, -theta - 1) - std::pow(a, -theta - 1));
    }
    return s;
  }

 private:
  uint64_t n_;
  double theta_;
  double zetan_ = 0, alpha_ = 0, eta_ = 0, half_pow_ = 0;
  uint64_t a_, b_;
};

}  // namespace nvt
