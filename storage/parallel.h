// Run f(0) .. f(n-1) on n threads and wait for all: the loaders' and recoveries' fan-out. Each
// thread pays what it owes the device model and publishes its counters before it ends, so
// that a recovery's report counts its helpers' traffic (dev::published()).
#pragma once
#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "storage/device/device.h"

namespace nvt {

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
