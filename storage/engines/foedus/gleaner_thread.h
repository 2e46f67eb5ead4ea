// The thread the log gleaner (7.1) runs on: it wakes every --gleaner-interval-ms, or when a
// worker asks (a volatile page refused, the pool past kPressure), and runs a round; the engine
// decides whether the round gleans. Sleeping between rounds, it pays the device model's debt.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "storage/device/device.h"

namespace nvt::foedus {

class GleanerThread {
 public:
  ~GleanerThread() { stop(); }

  bool running() const { return running_.load(); }

  // `round(due)` runs on each wake-up (`due`: the interval passed) and returns whether it
  // gleaned (the next interval starts then). Nothing when already running.
  template <class Round>
  void start(std::chrono::milliseconds interval, Round round) {
    if (running_.exchange(true)) return;
    thread_ = std::thread([this, interval, round]() mutable {
      auto next = std::chrono::steady_clock::now() + interval;
      while (running_.load()) {
        {
          std::unique_lock g(mu_);
          cv_.wait_until(g, next, [&] { return wake_ || !running_.load(); });
          wake_ = false;
        }
        if (!running_.load()) break;
        if (round(std::chrono::steady_clock::now() >= next)) next = std::chrono::steady_clock::now() + interval;
        dev::pay_debt();
        dev::publish();
      }
    });
  }

  void stop() {
    if (running_.exchange(false)) {
      {
        std::lock_guard g(mu_);
        wake_ = true;
      }
      cv_.notify_all();
      thread_.join();
    }
  }

  void wake() {
    {
      std::lock_guard g(mu_);
      wake_ = true;
    }
    cv_.notify_one();
  }

 private:
  std::atomic<bool> running_{false};
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool wake_ = false;
};

}  // namespace nvt::foedus
