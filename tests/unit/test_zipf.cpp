// The Zipfian generator: rank frequencies match the Zipf law, theta = 0 is uniform, ranks map to
// keys by a bijection, bad parameters are rejected.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "benchmarks/zipf.h"

using namespace nvt;

namespace {

std::vector<uint64_t> histogram(const Zipf& z, uint64_t n, uint64_t draws, uint64_t seed) {
  Rng r(seed);
  std::vector<uint64_t> h(n, 0);
  for (uint64_t i = 0; i < draws; i++) {
    uint64_t k = z.rank(r);
    EXPECT_LT(k, n);
    if (k < n) h[k]++;
  }
  return h;
}

}  // namespace

TEST(Zipf, ProbabilitiesSumToOne) {
  Zipf z(1000, 0.9);
  double s = 0;
  for (uint64_t i = 0; i < 1000; i++) s += z.probability(i);
  EXPECT_NEAR(s, 1.0, 1e-9);
  EXPECT_GT(z.probability(0), z.probability(1));
  EXPECT_NEAR(z.probability(0) / z.probability(1), std::pow(2.0, 0.9), 1e-9);
}

// The two hottest ranks are exact by construction of Gray et al.'s method.
TEST(Zipf, HottestRanksMatchProbability) {
  const uint64_t n = 1000, draws = 2000000;
  Zipf z(n, 0.9);
  auto h = histogram(z, n, draws, 12345);
  for (uint64_t i = 0; i < 2; i++) {
    double f = double(h[i]) / double(draws);
    EXPECT_NEAR(f / z.probability(i), 1.0, 0.05) << "rank " << i << ": frequency " << f
                                                 << ", probability " << z.probability(i);
  }
}

// Ranks 0..4 each within 5% (relative) of the Zipf probability the generator reports.
TEST(Zipf, TopFiveRanksWithinFivePercentOfProbability) {
  const uint64_t n = 1000, draws = 2000000;
  Zipf z(n, 0.9);
  auto h = histogram(z, n, draws, 777);
  for (uint64_t i = 0; i < 5; i++) {
    double f = double(h[i]) / double(draws);
    EXPECT_NEAR(f / z.probability(i), 1.0, 0.05) << "rank " << i << ": frequency " << f
                                                 << ", probability " << z.probability(i);
  }
}

TEST(Zipf, SkewOrdersRanks) {
  const uint64_t n = 1000, draws = 500000;
  Zipf z(n, 0.9);
  auto h = histogram(z, n, draws, 4);
  // Hotter decades of ranks get more draws than colder ones.
  auto sum = [&](uint64_t a, uint64_t b) {
    uint64_t s = 0;
    for (uint64_t i = a; i < b; i++) s += h[i];
    return s;
  };
  EXPECT_GT(sum(0, 10), sum(10, 20));
  EXPECT_GT(sum(10, 100), sum(900, 1000));
  EXPECT_GT(h[0], h[500] * 50);
}

TEST(Zipf, ThetaZeroIsUniform) {
  const uint64_t n = 1000, draws = 1000000;
  Zipf z(n, 0.0);
  EXPECT_DOUBLE_EQ(z.probability(0), 1.0 / double(n));
  EXPECT_DOUBLE_EQ(z.probability(999), 1.0 / double(n));
  auto h = histogram(z, n, draws, 99);
  double expect = double(draws) / double(n);
  double chi2 = 0, maxdev = 0;
  for (uint64_t i = 0; i < n; i++) {
    double d = double(h[i]) - expect;
    chi2 += d * d / expect;
    maxdev = std::max(maxdev, std::fabs(d) / expect);
  }
  // 999 degrees of freedom: mean 999, standard deviation ~45.
  EXPECT_LT(chi2, 1300.0);
  EXPECT_LT(maxdev, 0.2);
}

TEST(Zipf, SmallThetaIsNearlyUniform) {
  const uint64_t n = 100, draws = 400000;
  Zipf z(n, 0.01);
  auto h = histogram(z, n, draws, 5);
  for (uint64_t i = 0; i < n; i++) EXPECT_NEAR(double(h[i]) / double(draws), 0.01, 0.002) << i;
}

TEST(Zipf, KeyOfRankIsABijection) {
  for (uint64_t n : {1000ull, 1024ull, 1ull, 2ull, 997ull, 20000ull}) {
    Zipf z(n, 0.6);
    std::vector<int> seen(n, 0);
    for (uint64_t r = 0; r < n; r++) {
      uint64_t k = z.key_of_rank(r);
      ASSERT_LT(k, n) << "n=" << n;
      seen[k]++;
    }
    for (uint64_t k = 0; k < n; k++) ASSERT_EQ(seen[k], 1) << "n=" << n << " key " << k;
  }
  // Hot keys are scattered, not packed at the table's start.
  Zipf z(1000, 0.9);
  int low = 0;
  for (uint64_t r = 0; r < 10; r++) low += z.key_of_rank(r) < 10;
  EXPECT_LT(low, 10);
}

TEST(Zipf, NextDrawsKeysInRange) {
  Zipf z(1024, 0.99);
  Rng r(3);
  for (int i = 0; i < 100000; i++) ASSERT_LT(z.next(r), 1024u);
}

TEST(Zipf, BadParametersThrow) {
  EXPECT_THROW(Zipf(1000, 1.0), std::invalid_argument);
  EXPECT_THROW(Zipf(1000, 1.5), std::invalid_argument);
  EXPECT_THROW(Zipf(1000, -0.1), std::invalid_argument);
  EXPECT_THROW(Zipf(0, 0.5), std::invalid_argument);
  EXPECT_NO_THROW(Zipf(1000, 0.0));
  EXPECT_NO_THROW(Zipf(1000, 0.99));
}

TEST(Rng, UniformAndBelowStayInRange) {
  Rng r(42);
  double s = 0;
  for (int i = 0; i < 100000; i++) {
    double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    s += u;
    ASSERT_LT(r.below(7), 7u);
  }
  EXPECT_NEAR(s / 100000, 0.5, 0.01);
  Rng a(1), b(1), c(2);
  EXPECT_EQ(a.next(), b.next());
  EXPECT_NE(a.next(), c.next());
}
