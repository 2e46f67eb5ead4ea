// DL_DETECT two-phase locking (DBx1000's DL_DETECT): a conflicting request waits, and a
// waits-for graph finds deadlocks. A waiting transaction publishes the set of holders it waits
// for (its out-edges, refreshed whenever the holders change); it then searches the graph from
// itself, and when the search comes back to it, it is on a cycle. One transaction of the cycle
// aborts, with cause Deadlock: the youngest (largest timestamp, taken at a transaction's first
// start and kept across its retries, as WAIT_DIE's). Were every member that finds the cycle to
// abort, two transfers that read the same two accounts and then upgrade would abort together
// and meet again on retry, forever (a livelock TSan's slowness made common). Every waiter
// searches again periodically, so the victim finds the cycle even when another member closed
// it. Waiting is also bounded by `timeout` (DBx1000's timeout), recorded as the conflict that
// made it wait, so nothing hangs. Locks are held to commit; writes go to a private image
// installed at commit.
#pragma once
#include <chrono>

#include "concurrency_control/lock2pl.h"

namespace nvt::cc {

struct DlDetect : lock2pl::Waiting<DlDetect> {
  static constexpr const char* name = "dl_detect";
  // DBx1000's 10 ms. Set only while no transaction runs: a test lengthens it so that only a
  // found cycle can end a wait, whatever the scheduler does.
  static inline std::chrono::microseconds timeout{10000};
  static constexpr uint32_t kDetectEvery = 16;  // waiting steps between searches

  // The slots the waits-for graph leads to from `v` (DRAM only: the edges live in the
  // registry, one word per transaction).
  static uint64_t reachable(int v) {
    uint64_t seen = 0;
    uint64_t todo = Registry::slot[v].waits_for.load(std::memory_order_seq_cst);
    while (todo) {
      int u = __builtin_ctzll(todo);
      todo &= todo - 1;
      if (seen & (1ull << u)) continue;
      seen |= 1ull << u;
      todo |= Registry::slot[u].waits_for.load(std::memory_order_seq_cst) & ~seen;
    }
    return seen;
  }
  // Whether `me` is on a cycle and is its victim: no other transaction on a cycle through `me`
  // (one that `me` reaches and that reaches `me`) is younger.
  static bool is_victim(int me) {
    const uint64_t from_me = reachable(me);
    if (!(from_me >> me & 1)) return false;
    const uint64_t my_ts = Registry::slot[me].ts.load(std::memory_order_acquire);
    for (uint64_t o = from_me & ~(1ull << me); o; o &= o - 1) {
      int v = __builtin_ctzll(o);
      uint64_t ts = Registry::slot[v].ts.load(std::memory_order_acquire);
      if ((ts > my_ts || (ts == my_ts && v > me)) && (reachable(v) >> me & 1)) return false;
    }
    return true;
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
      if ((changed || steps % kDetectEvery == 0) && is_victim(t.slot.id())) {
        t.cause = AbortCause::Deadlock;
        return false;
      }
      if (++steps % kDetectEvery == 0 && clk::now() - since > timeout) {
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
