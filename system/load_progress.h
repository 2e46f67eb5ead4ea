// The load's progress line: loaders count what they loaded (load_progress), and while a run
// loads, LoadProgress prints "rundb: loading N / TOTAL rows (P%)" on stderr, updated in place,
// when stderr is a terminal (nothing otherwise: logs and pipes stay as they were).
#pragma once
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

namespace nvt {

inline std::atomic<uint64_t> g_load_done{0};

// A loader's count of units done (rows, or what the benchmark's load_units() names).
inline void load_progress(uint64_t n) { g_load_done.fetch_add(n, std::memory_order_relaxed); }

class LoadProgress {
 public:
  LoadProgress(uint64_t total, std::string unit) : total_(total), unit_(std::move(unit)) {
    g_load_done.store(0, std::memory_order_relaxed);
    if (total_ == 0 || !isatty(2)) return;
    show();
    printer_ = std::thread([this] {
      while (!stop_.load(std::memory_order_relaxed)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (++ticks_ % 10 == 0) show();  // every 0.2 s
      }
    });
  }
  ~LoadProgress() {
    if (!printer_.joinable()) return;
    stop_.store(true);
    printer_.join();
    show();
    std::fputs("\r\033[K", stderr);  // the line goes: the summary follows as without a terminal
  }
  LoadProgress(const LoadProgress&) = delete;
  LoadProgress& operator=(const LoadProgress&) = delete;

 private:
  void show() {
    uint64_t done = std::min(g_load_done.load(std::memory_order_relaxed), total_);
    std::fprintf(stderr, "\rrundb: loading %llu / %llu %s (%.0f%%)", (unsigned long long)done,
                 (unsigned long long)total_, unit_.c_str(), 100.0 * double(done) / double(total_));
    std::fflush(stderr);
  }
  const uint64_t total_;
  const std::string unit_;
  std::atomic<bool> stop_{false};
  uint64_t ticks_ = 0;
  std::thread printer_;
};

// Run `load` (the benchmark's loaders) with the progress line of the benchmark's load_units().
template <class Bench, class Load>
void load_with_progress(const Bench& bench, Load&& load) {
  auto [total, unit] = bench.load_units();
  LoadProgress progress(total, unit);
  load();
}

}  // namespace nvt
