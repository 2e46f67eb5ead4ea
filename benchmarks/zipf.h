// Zipfian key generator: exact Zipf(theta) over n ranks by rejection-inversion, O(1) per draw,
// no O(n) setup (so paper-scale tables start at once). theta = 0 is uniform. Ranks are scrambled into keys by a bijection (rank * a + b mod n, a
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
      h_x1_ = h_integral(1.5) - 1.0;
      h_n_ = h_integral(double(n) + 0.5);
      s_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
    }
    a_ = 0x9e3779b97f4a7c15ull % n;
    if (a_ == 0) a_ = 1;
    while (std::gcd(a_, n) != 1) a_++;
    b_ = 0x632be59bd9b4e019ull % n;
  }

  // Rank 0 is the most popular. Rejection-inversion (Hoermann and Derflinger, "Rejection-
  // inversion to generate variates from monotone discrete distributions", 1996): exact Zipf
  // probabilities, O(1) expected per draw (about 1.01 tries) and no O(n) setup, where Gray et
  // al.'s approximation used by YCSB over-samples ranks 2-4 by 7-16%.
  uint64_t rank(Rng& r) const { return rank(r, n_); }
  // A rank below m (1 <= m <= n), exactly Zipf(theta) over m ranks: the method's range
  // enters only through H(m + 0.5), so a generator for n draws for any smaller count too
  // (YCSB's "latest" keys, whose count grows with every insert).
  uint64_t rank(Rng& r, uint64_t m) const {
    if (theta_ == 0) return r.below(m);
    double h_m = m == n_ ? h_n_ : h_integral(double(m) + 0.5);
    for (;;) {
      double u = h_m + r.uniform() * (h_x1_ - h_m);
      double x = h_integral_inverse(u);
      double k = std::floor(x + 0.5);
      if (k < 1) k = 1;
      if (k > double(m)) k = double(m);
      if (k - x <= s_ || u >= h_integral(k + 0.5) - h(k)) return uint64_t(k) - 1;
    }
  }
  uint64_t key_of_rank(uint64_t rank) const {
    return uint64_t((__uint128_t(rank) * a_ + b_) % n_);
  }
  uint64_t next(Rng& r) const { return key_of_rank(rank(r)); }

  // Zipf probability of rank i, 1 / ((i+1)^theta * zeta(n, theta)); for tests (O(n) once).
  double probability(uint64_t i) const {
    if (theta_ == 0) return 1.0 / double(n_);
    return 1.0 / std::pow(double(i + 1), theta_) / zeta(n_, theta_);
  }

  static double zeta(uint64_t n, double theta) {
    double s = 0;
    for (uint64_t i = 1; i <= n; i++) s += 1.0 / std::pow(double(i), theta);
    return s;
  }

 private:
  // h(x) = x^-theta and its integral H(x) = (x^(1-theta) - 1) / (1 - theta), written with
  // log1p/expm1 so they stay accurate as theta approaches 0.
  double h(double x) const { return std::exp(-theta_ * std::log(x)); }
  double h_integral(double x) const {
    double lx = std::log(x);
    return expm1_over((1 - theta_) * lx) * lx;
  }
  double h_integral_inverse(double x) const {
    double t = x * (1 - theta_);
    if (t < -1) t = -1;
    return std::exp(log1p_over(t) * x);
  }
  static double expm1_over(double x) {
    return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x));
  }
  static double log1p_over(double x) {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
  }

  uint64_t n_;
  double theta_;
  double h_x1_ = 0, h_n_ = 0, s_ = 0;
  uint64_t a_, b_;
};

}  // namespace nvt
