// What the CC-method tests share (test_cc_methods.cpp: bank transfers and rules of single
// methods; test_cc_isolation.cpp: histories, write skew, opposite-order writes): the version
// counter every committed write bumps, retry and hang guards, and the fixture over every
// engine-CC pair of MMDB, Zen and WBL.
#pragma once
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <thread>
#include <type_traits>
#include <vector>

#include "concurrency_control/cicada.h"
#include "concurrency_control/dl_detect.h"
#include "concurrency_control/hekaton.h"
#include "concurrency_control/mvcc.h"
#include "concurrency_control/hstore.h"
#include "concurrency_control/no_wait.h"
#include "concurrency_control/occ.h"
#include "concurrency_control/silo.h"
#include "concurrency_control/tictoc.h"
#include "concurrency_control/wait_die.h"
#include "storage/engines/zen/zen.h"
#include "tests/unit/engine_util.h"

namespace nvt::test {

using clk = std::chrono::steady_clock;

// Each committed write bumps a counter in the account's payload, so any image names its
// version: 0 as loaded, n after the n-th committed write.
constexpr uint32_t kCounter = 56;
inline uint64_t counter_of(const char* img) {
  uint64_t c;
  memcpy(&c, img + kCounter, 8);
  return c;
}
inline void bump(char* img) {
  uint64_t c = counter_of(img) + 1;
  memcpy(img + kCounter, &c, 8);
}

// Run `attempt` until it commits (true), backing off between tries; false if `deadline` passed.
template <class F>
bool until_committed(F&& attempt, clk::time_point deadline, uint64_t* aborts = nullptr) {
  for (int i = 0;; i++) {
    if (attempt()) return true;
    if (aborts) (*aborts)++;
    if (clk::now() > deadline) return false;
    if (i > 3) std::this_thread::yield();
  }
}

// Fails the test run loudly instead of hanging when `f` does not return within `limit`.
template <class F>
void within(std::chrono::seconds limit, const char* what, F&& f) {
  auto fut = std::async(std::launch::async, std::forward<F>(f));
  if (fut.wait_for(limit) == std::future_status::timeout) {
    fprintf(stderr, "FATAL: %s did not finish within %llds (hang)\n", what, (long long)limit.count());
    std::abort();
  }
  fut.get();
}

template <class P>
class CCMethods : public ::testing::Test {
 public:
  using CC = typename P::CC;
  using Db = nvt::test::TestDb<CC, P::template EngineT>;
  // MMDB numbers a tuple's versions 2, 4, ... per committed write; Zen's is its Tx-CTS.
  static constexpr bool kVersionCountsWrites = std::is_same_v<typename Db::Engine, mmdb::Mmdb<CC>>;
  using Mgr = typename Db::Mgr;
  using Services = nvt::test::CCServices<CC>;

  static std::unique_ptr<Db> make_db(const TempPath& p, uint64_t rows, int threads, int64_t balance) {
    nvt::test::DbOptions o;
    o.rows = rows;
    o.threads = threads;
    auto db = std::make_unique<Db>(p.str(), o);
    db->load(balance);
    return db;
  }
};

using Methods = ::testing::Types<
    Pair<mmdb::Mmdb, cc::NoWait>, Pair<mmdb::Mmdb, cc::WaitDie>, Pair<mmdb::Mmdb, cc::DlDetect>,
    Pair<mmdb::Mmdb, cc::Silo>, Pair<mmdb::Mmdb, cc::Occ>, Pair<mmdb::Mmdb, cc::TicToc>,
    Pair<mmdb::Mmdb, cc::HStore>, Pair<mmdb::Mmdb, cc::Mvcc>, Pair<mmdb::Mmdb, cc::Hekaton>,
    Pair<mmdb::Mmdb, cc::Cicada>, Pair<zen::Zen, cc::NoWait>, Pair<zen::Zen, cc::WaitDie>,
    Pair<zen::Zen, cc::DlDetect>, Pair<zen::Zen, cc::Silo>, Pair<zen::Zen, cc::Occ>,
    Pair<zen::Zen, cc::TicToc>, Pair<zen::Zen, cc::HStore>, Pair<zen::Zen, cc::Mvcc>,
    Pair<zen::Zen, cc::Hekaton>, Pair<zen::Zen, cc::Cicada>, Pair<wbl::Wbl, cc::NoWait>,
    Pair<wbl::Wbl, cc::WaitDie>, Pair<wbl::Wbl, cc::DlDetect>, Pair<wbl::Wbl, cc::Silo>,
    Pair<wbl::Wbl, cc::Occ>, Pair<wbl::Wbl, cc::TicToc>, Pair<wbl::Wbl, cc::HStore>,
    Pair<wbl::Wbl, cc::Mvcc>, Pair<wbl::Wbl, cc::Hekaton>, Pair<wbl::Wbl, cc::Cicada>>;

}  // namespace nvt::test
