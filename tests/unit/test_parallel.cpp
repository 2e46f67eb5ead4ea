// The fan-outs of storage/parallel.h that recovery builds on: parallel_merge and parallel_sort
// give what std::merge and std::sort give, on any thread count and with runs shorter and longer
// than a thread's minimum.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "storage/parallel.h"

using namespace nvt;

TEST(Parallel, MergeMatchesStdMergeOnAnyThreadCount) {
  std::mt19937_64 rng(11);
  for (size_t na : {size_t(0), size_t(1), size_t(7), size_t(5000), size_t(40000)})
    for (size_t nb : {size_t(0), size_t(3), size_t(9000), size_t(33333)}) {
      std::vector<uint64_t> a(na), b(nb);
      for (auto& x : a) x = rng() % 50000;  // repeated values: ties between a and b
      for (auto& x : b) x = rng() % 50000;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      std::vector<uint64_t> want(na + nb);
      std::merge(a.begin(), a.end(), b.begin(), b.end(), want.begin());
      for (int threads : {1, 2, 3, 8})
        for (size_t min_run : {size_t(1), size_t(64), size_t(4096)}) {
          std::vector<uint64_t> got(na + nb, ~0ull);
          parallel_merge(a.data(), na, b.data(), nb, got.data(), threads, min_run);
          ASSERT_EQ(got, want) << na << " + " << nb << " on " << threads << " threads, runs of " << min_run;
        }
    }
}

TEST(Parallel, SortMatchesStdSortOnAnyThreadCount) {
  std::mt19937_64 rng(12);
  for (size_t n : {size_t(0), size_t(1), size_t(100), size_t(4097), size_t(100003)})
    for (int threads : {1, 2, 3, 5, 8}) {
      ParallelVector<uint64_t> v;
      v.resize(n);
      for (auto& x : v) x = rng() % (n + 1);
      std::vector<uint64_t> want(v.begin(), v.end());
      std::sort(want.begin(), want.end());
      parallel_sort(v, threads, 16);
      ASSERT_EQ(std::vector<uint64_t>(v.begin(), v.end()), want) << n << " on " << threads << " threads";
    }
}
