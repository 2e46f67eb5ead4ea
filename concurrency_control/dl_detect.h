// DL_DETECT two-phase locking (DBx1000's DL_DETECT): a conflicting request waits, and a
// waits-for graph finds deadlocks. A waiting transaction publishes the set of holders it waits
// for (its out-edges, refreshed whenever the holders change); it then searches the graph from
// itself, and when the search comes back to it, it has closed a cycle and aborts with cause
// Deadlock. It searches again periodically while it waits, so a cycle that two transactions
// closed at the same instant is still found by one of them. Waiting is also bounded by
// kTimeout (DBx1000's timeout), recorded as the conflict that made it wait, so nothing hangs.
// Locks are held to commit; writes go to a private image installed at commit.
#pragma once
#include <chrono>

#include "concurrency_control/lock2pl.h"

namespace nvt::cc {

struct DlDetect : lock2pl::Waiting<DlDetect> {
  static constexpr const char* name = "dl_detect";
  static constexpr auto kTimeout = std::chrono::milliseconds(10);
  static constexpr uint32_t kDetectEvery = 16;  // waiting steps between searches
  using Meta = lock2pl::Meta;
  using Slot = lock2pl::Slot<DlDetect>;
  using Registry = lock2pl::Registry<DlDetect>;

  struct Txn {
    AbortCause cause = AbortCause::None;
    Slot slot;
  };

  static void start(int threads) { Registry::check_threads(threads, name); }
  static void stop() {}

  void begin(Txn& t) {
    t.cause = AbortCause::None;
    t.slot.get(name);
  }

  void abort(Txn& t, Access* acc, size_t n) {
    if (t.slot.id() >= 0) lock2pl::release(acc, n, t.slot.bit());
  }

  // Whether the waits-for graph leads from `me` back to itself (DRAM only: the edges live in
  // the registry, one word per transaction).
  static bool closes_cycle(int me) {
    uint64_t seen = 0;
    uint64_t todo = Registry::slot[me].waits_for.load(std::memory_order_seq_cst);
    while (todo) {
      int v = __builtin_ctzll(todo);
      todo &= todo - 1;
      if (v == me) return true;
      if (seen & (1ull << v)) continue;
      seen |= 1ull << v;
      todo |= Registry::slot[v].waits_for.load(std::memory_order_seq_cst) & ~seen;
    }
    return false;
  }

 private:
  friend lock2pl::Waiting<DlDetect>;
  static bool lock(Txn& t, Access& a, uint8_t mode, AbortCause on_timeout) {
    using clk = std::chrono::steady_clock;
    std::atomic<uint64_t>& edges = t.slot.state().waits_for;
    clk::time_point since{};
    uint32_t steps = 0;
    bool ok = lock2pl::acquire(a, t.slot.bit(), mode, [&](uint64_t holders) {
      // Publish before searching (seq_cst), so of two transactions closing one cycle at once at
      // least one sees the other's edges.
      bool changed = edges.exchange(holders, std::memory_order_seq_cst) != holders;
      if (steps == 0) since = clk::now();
      if ((changed || steps % kDetectEvery == 0) && closes_cycle(t.slot.id())) {
        t.cause = AbortCause::Deadlock;
        return false;
      }
      if (++steps % kDetectEvery == 0 && clk::now() - since > kTimeout) {
        t.cause = on_timeout;
        return false;
      }
      return true;
    });
    if (steps || !ok) edges.store(0, std::memory_order_release);  // it waited: no edges now
    return ok;
  }
};

}  // namespace nvt::cc
