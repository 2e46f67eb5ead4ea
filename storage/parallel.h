// The fan-out of loaders and recoveries (parallel, parallel_runs) and what recoveries build
// on it: a merge and a sort on every thread, and vectors that threads first touch a share each.
#pragma once
#include <algorithm>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "storage/device/device.h"

namespace nvt {

// Run f(0) .. f(n-1) on n threads and wait for all: the loaders' and recoveries' fan-out. Each
// thread pays what it owes the device model and publishes its counters before it ends, so
// that a recovery's report counts its helpers' traffic (dev::published()). f(0) runs on a
// thread of its own too, not the caller: under --power-fail a thread's stores persist at its
// own fences, and the crash tests' injected faults (a reducer that skips its fence) rely on
// the helpers' stores being theirs alone.
template <class F>
void parallel(int n, F&& f) {
  std::vector<std::thread> ts;
  for (int i = 0; i < n; i++)
    ts.emplace_back([&f, i] {
      f(i);
      dev::pay_debt();
      dev::publish();
    });
  for (auto& t : ts) t.join();
}

// f(begin, end, helper) for `nthreads` equal runs of [0, n): on parallel() threads (helper =
// true) when each run would hold at least `min_run` items, else once on the calling thread for
// all of it (a thread start costs this VM 0.05-0.5 ms, more than a short run).
template <class F>
void parallel_runs(size_t n, int nthreads, size_t min_run, F&& f) {
  const size_t k = std::min(size_t(std::max(1, nthreads)), std::max<size_t>(1, n / std::max<size_t>(1, min_run)));
  if (k <= 1) {
    if (n) f(size_t(0), n, false);
    return;
  }
  parallel(int(k), [&](int w) { f(n * size_t(w) / k, n * size_t(w + 1) / k, true); });
}

// Merge ascending [a, a + na) and [b, b + nb) into out[0, na + nb) on up to `nthreads` threads:
// each merges an equal run of the output, whose start in a and b a binary search finds (the
// merge path), so no thread walks the whole lists. Equal items: a's first, as std::merge.
template <class T>
void parallel_merge(const T* a, size_t na, const T* b, size_t nb, T* out, int nthreads, size_t min_run = 4096) {
  // The number of a's items among the first d of the output.
  auto from_a = [&](size_t d) {
    size_t lo = d > nb ? d - nb : 0, hi = std::min(d, na);
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (!(b[d - mid - 1] < a[mid])) lo = mid + 1;  // a[mid] comes before b[d - mid - 1]
      else hi = mid;
    }
    return lo;
  };
  parallel_runs(na + nb, nthreads, min_run, [&](size_t d0, size_t d1, bool) {
    const size_t i0 = from_a(d0), i1 = from_a(d1);
    std::merge(a + i0, a + i1, b + (d0 - i0), b + (d1 - i1), out + d0);
  });
}

// Sort `v` on up to `nthreads` threads: a run per thread sorted side by side, then the runs
// merged pairwise, every merge on all the threads (parallel_merge).
template <class T, class A>
void parallel_sort(std::vector<T, A>& v, int nthreads, size_t min_run = 4096) {
  const size_t n = v.size(), k = std::min(size_t(std::max(1, nthreads)), std::max<size_t>(1, n / min_run));
  if (k <= 1) return std::sort(v.begin(), v.end());
  std::vector<size_t> at(k + 1);
  for (size_t w = 0; w <= k; w++) at[w] = n * w / k;
  parallel(int(k), [&](int w) { std::sort(v.begin() + long(at[size_t(w)]), v.begin() + long(at[size_t(w) + 1])); });
  std::vector<T, A> tmp;
  tmp.resize(n);
  while (at.size() > 2) {
    std::vector<size_t> up{0};
    for (size_t r = 0; r + 1 < at.size(); r += 2) {
      const size_t e = r + 2 < at.size() ? at[r + 2] : at[r + 1];
      if (r + 2 < at.size())
        parallel_merge(v.data() + at[r], at[r + 1] - at[r], v.data() + at[r + 1], e - at[r + 1], tmp.data() + at[r],
                       nthreads, min_run);
      else  // an odd run out: copied on as it is
        parallel_runs(e - at[r], nthreads, min_run,
                      [&](size_t b0, size_t b1, bool) { std::copy(v.data() + at[r] + b0, v.data() + at[r] + b1, tmp.data() + at[r] + b0); });
      up.push_back(e);
    }
    v.swap(tmp);
    at = std::move(up);
  }
}

// An allocator whose resize() leaves new elements uninitialized: a vector that parallel()
// threads fill a share each (zeroing it first on one thread would first-touch every page
// serially, microseconds a page on a VM).
template <class T>
struct UninitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
template <class T>
using ParallelVector = std::vector<T, UninitAllocator<T>>;

}  // namespace nvt
