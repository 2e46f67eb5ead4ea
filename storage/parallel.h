// Run f(0) .. f(n-1) on n threads and wait for all: the loaders' and recoveries' fan-out.
#pragma once
#include <thread>
#include <vector>

namespace nvt {

template <class F>
void parallel(int n, F&& f) {
  std::vector<std::thread> ts;
  for (int i = 0; i < n; i++) ts.emplace_back([&f, i] { f(i); });
  for (auto& t : ts) t.join();
}

}  // namespace nvt
