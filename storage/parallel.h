// Run f(0) .. f(n-1) on n threads and wait for all: the loaders' and recoveries' fan-out. Each
// thread pays what it owes the device model and publishes its counters before it ends, so
// that a recovery's report counts its helpers' traffic (dev::published()).
#pragma once
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

}  // namespace nvt
