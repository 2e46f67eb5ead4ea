// Every CC method (single- and multi-version) through the real engines (MMDB, and Zen, whose
// Met-Cache holds the CC metadata): bank transfers under high contention that conserve the total and explain every account, recorded histories whose
// conflict graph must be acyclic, write skew that must be prevented, and opposite-order
// locking that must finish. Then a few behaviours particular to one method.
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

using namespace nvt;
using nvt::test::balance_of;
using nvt::test::set_balance;
using nvt::test::TempPath;
using clk = std::chrono::steady_clock;

namespace {

// Each committed write bumps a counter in the account's payload, so any image names its
// version: 0 as loaded, n after the n-th committed write.
constexpr uint32_t kCounter = 56;
uint64_t counter_of(const char* img) {
  uint64_t c;
  memcpy(&c, img + kCounter, 8);
  return c;
}
void bump(char* img) {
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

}  // namespace

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
using nvt::test::Pair;
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
TYPED_TEST_SUITE(CCMethods, Methods);

// ---------------------------------------------------------------------------------------------
// Bank: 3 threads x 2000 transfers over 10 accounts. Half the transfers read both accounts first
// and then write them (lock upgrades, read-write conflicts), half write directly.

namespace {
template <class Mgr>
bool transfer(Mgr& m, uint64_t a, uint64_t b, int64_t amount, bool read_first) {
  m.begin();
  if (read_first && (!m.read(0, a) || !m.read(0, b))) { m.abort(); return false; }
  char* x = m.write(0, a);
  if (!x) { m.abort(); return false; }
  char* y = m.write(0, b);
  if (!y) { m.abort(); return false; }
  set_balance(x, balance_of(x) - amount);
  set_balance(y, balance_of(y) + amount);
  bump(x);
  bump(y);
  return m.commit();
}
}  // namespace

TYPED_TEST(CCMethods, BankTransfersConserveTotalAndExplainEveryAccount) {
  const uint64_t rows = 10;
  const int threads = 3, per_thread = 2000;
  const int64_t initial = 1000;
  TempPath p("ccm-bank");
  auto db = this->make_db(p, rows, threads, initial);
  typename TestFixture::Services services(threads);
  db->eng->start();

  // Per thread: the net amount its committed transfers moved into each account, and how many
  // committed transfers touched each account.
  std::vector<std::vector<int64_t>> moved(threads, std::vector<int64_t>(rows));
  std::vector<std::vector<uint64_t>> writes(threads, std::vector<uint64_t>(rows));
  std::vector<uint64_t> aborts(threads);
  std::atomic<int> unfinished{0};
  auto deadline = clk::now() + std::chrono::seconds(20);
  within(std::chrono::seconds(25), "bank", [&] {
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; t++)
      ts.emplace_back([&, t] {
        typename TestFixture::Mgr m(*db->eng, t);
        Rng r(uint64_t(t) * 7 + 1);
        for (int i = 0; i < per_thread; i++) {
          uint64_t a = r.below(rows), b = r.below(rows - 1);
          if (b >= a) b++;
          int64_t amount = int64_t(r.below(50)) + 1;
          bool read_first = r.below(2);
          if (!until_committed([&] { return transfer(m, a, b, amount, read_first); }, deadline,
                               &aborts[t])) {
            unfinished++;
            return;
          }
          moved[t][a] -= amount;
          moved[t][b] += amount;
          writes[t][a]++;
          writes[t][b]++;
        }
      });
    for (auto& t : ts) t.join();
  });
  db->eng->stop();
  ASSERT_EQ(unfinished.load(), 0) << "transfers still retrying at the deadline (livelock)";

  EXPECT_EQ(db->total(), initial * int64_t(rows));
  auto snap = db->snapshot();
  for (uint64_t k = 0; k < rows; k++) {
    int64_t expect = initial;
    uint64_t w = 0;
    for (int t = 0; t < threads; t++) { expect += moved[t][k]; w += writes[t][k]; }
    const char* img = snap.images[k].data();
    EXPECT_EQ(balance_of(img), expect) << "account " << k;
    EXPECT_EQ(counter_of(img), w) << "account " << k << ": committed writes";
    if constexpr (TestFixture::kVersionCountsWrites) {
      EXPECT_EQ(snap.versions[k], 2 * w) << "account " << k << ": engine versions";
    }
  }
  uint64_t total_aborts = 0;
  for (auto a : aborts) total_aborts += a;
  this->RecordProperty("aborts", int(total_aborts));

  // Nothing stays locked: every account can be written again by one transaction.
  typename TestFixture::Mgr m(*db->eng, 0);
  for (uint64_t k = 0; k < rows; k++) EXPECT_TRUE(transfer(m, k, (k + 1) % rows, 0, true)) << k;
}

// ---------------------------------------------------------------------------------------------
// Serializability: record, for every committed transaction, the version of each account it read
// and the version it wrote; the conflict graph over those must be acyclic.

namespace {
struct Op {
  uint64_t key;
  uint64_t read;  // the version read (a write reads the version it replaces)
  bool wrote;     // wrote version read + 1
};
using History = std::vector<std::vector<Op>>;  // per committed transaction

// Edges per key: writer(v) -> writer(v+1) and -> every reader of v; reader(v) -> writer(v+1).
// Also checks that each version was written once (no lost update) and every version read exists.
void expect_conflict_serializable(const History& h, uint64_t keys) {
  std::vector<std::map<uint64_t, size_t>> writer(keys);
  std::vector<std::map<uint64_t, std::vector<size_t>>> readers(keys);
  for (size_t i = 0; i < h.size(); i++)
    for (const Op& o : h[i]) {
      readers[o.key][o.read].push_back(i);
      if (o.wrote) {
        auto [it, fresh] = writer[o.key].emplace(o.read + 1, i);
        EXPECT_TRUE(fresh) << "key " << o.key << " version " << o.read + 1 << " written twice";
      }
    }
  std::vector<std::vector<size_t>> out(h.size());
  std::vector<size_t> in(h.size());
  auto edge = [&](size_t a, size_t b) {
    if (a == b) return;
    out[a].push_back(b);
    in[b]++;
  };
  for (uint64_t k = 0; k < keys; k++) {
    for (auto& [v, rs] : readers[k]) {
      auto w = writer[k].find(v);
      if (v > 0) {
        ASSERT_NE(w, writer[k].end()) << "key " << k << ": version " << v << " read, never written";
        for (size_t r : rs) edge(w->second, r);
      }
      auto next = writer[k].find(v + 1);
      if (next != writer[k].end())
        for (size_t r : rs) edge(r, next->second);
    }
  }
  // Kahn's algorithm: every node leaves the queue iff there is no cycle.
  std::vector<size_t> q;
  for (size_t i = 0; i < h.size(); i++)
    if (!in[i]) q.push_back(i);
  size_t done = 0;
  while (!q.empty()) {
    size_t n = q.back();
    q.pop_back();
    done++;
    for (size_t m : out[n])
      if (--in[m] == 0) q.push_back(m);
  }
  EXPECT_EQ(done, h.size()) << "the conflict graph of committed transactions has a cycle";
}
}  // namespace

TYPED_TEST(CCMethods, CommittedHistoriesAreConflictSerializable) {
  const uint64_t keys = 6;
  const int threads = 3, per_thread = 250;
  TempPath p("ccm-serial");
  auto db = this->make_db(p, keys, threads, 100);
  typename TestFixture::Services services(threads);
  db->eng->start();
  std::vector<History> hist(threads);
  std::atomic<int> unfinished{0}, engine_mismatch{0};
  auto deadline = clk::now() + std::chrono::seconds(15);
  within(std::chrono::seconds(20), "histories", [&] {
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; t++)
      ts.emplace_back([&, t] {
        typename TestFixture::Mgr m(*db->eng, t);
        Rng r(uint64_t(t) * 13 + 5);
        std::vector<Op> ops;
        for (int i = 0; i < per_thread; i++) {
          // Three distinct accounts, each read (0), written (1) or read then written (2).
          uint64_t ks[3];
          ks[0] = r.below(keys);
          do ks[1] = r.below(keys); while (ks[1] == ks[0]);
          do ks[2] = r.below(keys); while (ks[2] == ks[0] || ks[2] == ks[1]);
          int kind[3] = {int(r.below(3)), int(r.below(3)), int(r.below(3))};
          auto attempt = [&] {
            m.begin();
            ops.clear();
            for (int j = 0; j < 3; j++) {
              uint64_t v = 0;  // (set on every path below; -O1 cannot see it)
              if (kind[j] != 1) {
                const char* img = m.read(0, ks[j]);
                if (!img) { m.abort(); return false; }
                v = counter_of(img);
              }
              if (kind[j] != 0) {
                char* img = m.write(0, ks[j]);
                if (!img) { m.abort(); return false; }
                v = counter_of(img);
                bump(img);
              }
              ops.push_back({ks[j], v, kind[j] != 0});
            }
            return m.commit();
          };
          if (!until_committed(attempt, deadline)) { unfinished++; return; }
          // MMDB's persist numbers versions 2, 4, ...: the engine agrees with the payload.
          if constexpr (TestFixture::kVersionCountsWrites)
            for (const Access& a : m.accesses())
              if (a.type == AccessType::Write && a.version != 2 * counter_of(a.local)) engine_mismatch++;
          hist[t].push_back(ops);
        }
      });
    for (auto& t : ts) t.join();
  });
  db->eng->stop();
  ASSERT_EQ(unfinished.load(), 0) << "transactions still retrying at the deadline (livelock)";
  EXPECT_EQ(engine_mismatch.load(), 0);
  History all;
  for (auto& h : hist) all.insert(all.end(), h.begin(), h.end());
  ASSERT_EQ(all.size(), size_t(threads * per_thread));
  expect_conflict_serializable(all, keys);
}

// ---------------------------------------------------------------------------------------------
// Write skew: x + y >= 0 must hold; each transaction reads x and y and, if x + y >= 100,
// withdraws 100 from its own. Starting from 50 + 50, only one of the two may withdraw. Every
// round interleaves by construction: each transaction waits after its reads until the other
// has read too (or given up), so both see 100 and both try to withdraw; the method must abort
// one (or both), or make one wait for the other's commit and then fail it. Reads never wait
// for a reader in any method but HSTORE, which runs a transaction with its partitions locked:
// its second reader waits for the first transaction to end, so there the rounds cannot
// interleave and the test only checks that the outcome is serial.

TYPED_TEST(CCMethods, WriteSkewIsPrevented) {
  using CC = typename TestFixture::CC;
  constexpr bool kReadsExclude = std::is_same_v<CC, cc::HStore>;
  const int rounds = 20;
  TempPath p("ccm-skew");
  auto db = this->make_db(p, 2 * rounds, 2, 50);
  typename TestFixture::Services services(2);
  typename TestFixture::Mgr m0(*db->eng, 0), m1(*db->eng, 1);
  int interleaved = 0, one_withdrew = 0;
  within(std::chrono::seconds(60), "write skew", [&] {
    for (int round = 0; round < rounds; round++) {
      const uint64_t x = 2 * uint64_t(round), y = x + 1;
      std::atomic<int> arrived{0};
      bool committed[2] = {false, false}, withdrew[2] = {false, false}, both_read[2] = {false, false};
      auto body = [&](typename TestFixture::Mgr& m, int me) {
        m.begin();
        const char* px = m.read(0, x);
        int64_t sum = px ? balance_of(px) : 0;
        const char* py = px ? m.read(0, y) : nullptr;
        sum += py ? balance_of(py) : 0;
        // The barrier: nobody writes before both have read (or one failed to read).
        arrived++;
        if (!kReadsExclude)
          while (arrived.load() < 2) std::this_thread::yield();
        both_read[me] = py != nullptr && arrived.load() == 2;
        if (!py) { m.abort(); return; }
        if (sum >= 100) {
          char* w = m.write(0, me == 0 ? x : y);
          if (!w) { m.abort(); return; }
          set_balance(w, balance_of(w) - 100);
        }
        committed[me] = m.commit();
        withdrew[me] = committed[me] && sum >= 100;
      };
      std::thread t0([&] { body(m0, 0); }), t1([&] { body(m1, 1); });
      t0.join();
      t1.join();
      auto snap = db->snapshot();
      const int64_t sum = balance_of(snap.images[x].data()) + balance_of(snap.images[y].data());
      EXPECT_GE(sum, 0) << "round " << round << ": write skew committed";
      EXPECT_EQ(sum, 100 - 100 * int64_t(withdrew[0] + withdrew[1])) << "round " << round;
      if (both_read[0] && both_read[1]) interleaved++;
      one_withdrew += withdrew[0] != withdrew[1];
    }
  });
  // Both read 50 + 50 before either wrote in every round, so both tried to withdraw: a method
  // that lets both commit fails above in every round, not only in those that happened to overlap.
  if (!kReadsExclude) {
    EXPECT_EQ(interleaved, rounds);
  }
  this->RecordProperty("interleaved_rounds", interleaved);
  this->RecordProperty("rounds_one_withdrew", one_withdrew);
}

// ---------------------------------------------------------------------------------------------
// Two threads write two accounts in opposite orders, many times: a 2PL method must neither hang
// nor starve (DL_DETECT must find the deadlocks), the others must simply finish. The first
// attempt of each transfer waits, holding its first account, until the other thread holds its
// own first one too: every round overlaps by construction, not by timing (a busy-wait "long
// enough" did not overlap on a loaded machine, where one thread can run many rounds while the
// other is descheduled). Retries do not wait, so no method is kept in lockstep.

TYPED_TEST(CCMethods, OppositeOrderWritesFinish) {
  using CC = typename TestFixture::CC;
  const int per_thread = 100;  // every first attempt overlaps the other thread's
  TempPath p("ccm-deadlock");
  auto db = this->make_db(p, 2, 2, 0);
  typename TestFixture::Services services(2);
  std::atomic<uint64_t> by_cause[size_t(AbortCause::kCount)] = {};
  std::atomic<int> unfinished{0};
  std::atomic<int> started[2] = {}, holding[2] = {};  // rounds each thread began / took its first write in
  auto wait_for = [](std::atomic<int>& other, int round) {
    while (other.load() < round) std::this_thread::yield();
  };
  // Hang guards only: a correct method finishes far sooner, whatever the machine's load.
  auto deadline = clk::now() + std::chrono::seconds(60);
  within(std::chrono::seconds(90), "opposite-order writes", [&] {
    std::vector<std::thread> ts;
    for (int t = 0; t < 2; t++)
      ts.emplace_back([&, t] {
        typename TestFixture::Mgr m(*db->eng, t);
        const uint64_t first = uint64_t(t), second = 1 - first;
        for (int i = 1; i <= per_thread; i++) {
          started[t] = i;
          wait_for(started[1 - t], i);  // the other finished round i - 1
          bool paired = true;
          auto attempt = [&] {
            m.begin();
            char* a = m.write(0, first);
            if (paired) {
              paired = false;
              holding[t] = i;
              wait_for(holding[1 - t], i);
            }
            char* b = a ? m.write(0, second) : nullptr;
            if (!b) {
              by_cause[size_t(m.cause())]++;
              m.abort();
              return false;
            }
            set_balance(a, balance_of(a) + 1);
            set_balance(b, balance_of(b) + 1);
            if (m.commit()) return true;
            by_cause[size_t(m.cause())]++;
            return false;
          };
          if (!until_committed(attempt, deadline)) {
            unfinished++;
            started[t] = holding[t] = per_thread + 1;  // release the other thread
            return;
          }
        }
      });
    for (auto& t : ts) t.join();
  });
  ASSERT_EQ(unfinished.load(), 0);
  auto snap = db->snapshot();
  EXPECT_EQ(balance_of(snap.images[0].data()), 2 * per_thread);
  EXPECT_EQ(balance_of(snap.images[1].data()), 2 * per_thread);
  EXPECT_EQ(by_cause[size_t(AbortCause::None)].load(), 0u) << "every abort names its cause";
  if constexpr (std::is_same_v<CC, cc::DlDetect>)
    EXPECT_GT(by_cause[size_t(AbortCause::Deadlock)].load(), 0u);
  else
    EXPECT_EQ(by_cause[size_t(AbortCause::Deadlock)].load(), 0u);
}

// ---------------------------------------------------------------------------------------------
// Behaviours particular to one method.

namespace {
template <class CC>
struct Small {
  TempPath p{"ccm-small"};
  std::unique_ptr<nvt::test::TestDb<CC>> db = CCMethods<nvt::test::Pair<mmdb::Mmdb, CC>>::make_db(p, 8, 2, 100);
  nvt::test::CCServices<CC> services{2};
  typename nvt::test::TestDb<CC>::Mgr m0{*db->eng, 0}, m1{*db->eng, 1};
};
}  // namespace

TEST(WaitDie, TimestampKeptAcrossRetriesOnly) {
  cc::WaitDie c;
  cc::WaitDie::Txn x;
  c.begin(x);
  uint64_t ts = x.ts;
  c.abort(x, nullptr, 0);
  c.begin(x);
  EXPECT_EQ(x.ts, ts) << "a retry keeps its age";
  c.finish(x, nullptr, 0);
  c.begin(x);
  EXPECT_GT(x.ts, ts) << "a new transaction is younger";
}

TEST(WaitDie, YoungerDiesOlderWaits) {
  Small<cc::WaitDie> s;
  s.m0.begin();  // older
  s.m1.begin();  // younger
  ASSERT_NE(s.m0.write(0, 1), nullptr);
  EXPECT_EQ(s.m1.read(0, 1), nullptr) << "younger requester dies";
  EXPECT_EQ(s.m1.cause(), AbortCause::ReadConflict);
  s.m1.abort();
  s.m0.abort();

  // The older requester waits for the younger holder and then reads what it committed. The
  // holder commits only once it sees the requester waiting for it (the requester's slot names
  // it in waits_for) or the requester returned without waiting: a holder that simply committed
  // first would let the read pass without any wait.
  s.m0.begin();
  using Reg = cc::WaitDie::Registry;
  std::atomic<bool> held{false}, returned{false};
  std::atomic<uint64_t> seen_waiting{0};
  within(std::chrono::seconds(30), "older requester waits", [&] {
    std::thread young([&] {
      s.m1.begin();
      char* img = s.m1.write(0, 2);
      ASSERT_NE(img, nullptr);
      set_balance(img, 7);
      held = true;
      while (!returned.load()) {
        uint64_t w = 0;
        for (int i = 0; i < cc::lock2pl::kMaxSlots && !w; i++) w = Reg::slot[i].waits_for.load();
        if (w) { seen_waiting = w; break; }
        std::this_thread::yield();
      }
      EXPECT_TRUE(s.m1.commit());
    });
    while (!held) std::this_thread::yield();
    const char* img = s.m0.read(0, 2);
    returned = true;
    young.join();
    ASSERT_NE(img, nullptr) << "older requester died instead of waiting";
    EXPECT_NE(seen_waiting.load(), 0u) << "the older requester read without waiting";
    EXPECT_EQ(balance_of(img), 7);
    EXPECT_TRUE(s.m0.commit());
  });
}

TEST(DlDetect, WaitIsBoundedWithoutDeadlock) {
  Small<cc::DlDetect> s;
  s.m0.begin();
  ASSERT_NE(s.m0.write(0, 1), nullptr);
  s.m1.begin();
  auto t0 = clk::now();
  EXPECT_EQ(s.m1.write(0, 1), nullptr) << "the holder never lets go: the waiter times out";
  EXPECT_GE(clk::now() - t0, cc::DlDetect::timeout);
  EXPECT_EQ(s.m1.cause(), AbortCause::WriteConflict) << "a timeout is no proven deadlock";
  s.m1.abort();
  EXPECT_TRUE(s.m0.commit());
}

// The older transaction closes the cycle (it asks for what the younger, already waiting for it,
// holds): it must keep waiting, and the younger one, the victim, aborts. Before victims were
// chosen the closer aborted too, and two such transactions could abort each other on every retry.
TEST(DlDetect, OnlyTheYoungestOfACycleAborts) {
  using Reg = cc::DlDetect::Registry;
  // A waiter that is not scheduled for 10 ms (ASan on a busy host) would end the other's wait
  // by timeout, which proves nothing about victims: only the cycle may end these waits.
  struct LongTimeout {
    std::chrono::microseconds was = cc::DlDetect::timeout;
    LongTimeout() { cc::DlDetect::timeout = std::chrono::seconds(20); }
    ~LongTimeout() { cc::DlDetect::timeout = was; }
  } long_timeout;
  Small<cc::DlDetect> s;
  s.m0.begin();  // older
  s.m1.begin();  // younger
  ASSERT_NE(s.m0.write(0, 1), nullptr);
  ASSERT_NE(s.m1.write(0, 2), nullptr);
  std::atomic<bool> younger_got{true};
  std::thread young([&] {
    younger_got = s.m1.write(0, 1) != nullptr;  // waits for the older one
    if (!younger_got) s.m1.abort();
  });
  // Close the cycle while the younger one waits (each waiter publishes its edges).
  auto waiting = [] {
    for (int i = 0; i < cc::lock2pl::kMaxSlots; i++)
      if (Reg::slot[i].waits_for.load()) return true;
    return false;
  };
  for (int i = 0; i < 100000 && !waiting(); i++) std::this_thread::yield();
  const char* img = s.m0.write(0, 2);
  young.join();
  EXPECT_FALSE(younger_got.load()) << "the younger transaction got a lock the older one holds";
  ASSERT_NE(img, nullptr) << "the older transaction aborted: a cycle must cost one victim only";
  EXPECT_TRUE(s.m0.commit());
}

TEST(Occ, ReadFailsAgainstWriterThatFinishedDuringItsLife) {
  Small<cc::Occ> s;
  s.m0.begin();
  ASSERT_NE(s.m0.read(0, 3), nullptr);
  ASSERT_NE(s.m0.read(0, 4), nullptr);
  EXPECT_TRUE(transfer(s.m1, 3, 5, 10, false));
  EXPECT_FALSE(s.m0.commit());
  EXPECT_EQ(s.m0.cause(), AbortCause::Validation);
  // Started after that writer finished: nothing to validate against.
  s.m0.begin();
  ASSERT_NE(s.m0.read(0, 3), nullptr);
  EXPECT_TRUE(transfer(s.m1, 6, 7, 10, false)) << "disjoint writer";
  EXPECT_TRUE(s.m0.commit());
}

TEST(TicToc, ReadOnlyCommitsBeforeALaterWriter) {
  Small<cc::TicToc> s;
  // Silo and OCC abort this reader; TicToc orders it before the writer (its timestamp is the
  // wts it read), which is the point of computing timestamps lazily.
  s.m0.begin();
  const char* img = s.m0.read(0, 3);
  ASSERT_NE(img, nullptr);
  EXPECT_TRUE(transfer(s.m1, 3, 4, 10, false));
  EXPECT_EQ(balance_of(img), 100) << "a private copy";
  EXPECT_TRUE(s.m0.commit());
  // A reader that also writes must validate its read at a timestamp after that writer.
  s.m0.begin();
  ASSERT_NE(s.m0.read(0, 5), nullptr);
  ASSERT_NE(s.m0.write(0, 6), nullptr);
  EXPECT_TRUE(transfer(s.m1, 5, 4, 1, false));
  EXPECT_FALSE(s.m0.commit());
  EXPECT_EQ(s.m0.cause(), AbortCause::Validation);
}

TEST(HStore, PartitionsLockedInOrderOrAbort) {
  Small<cc::HStore> s;
  ASSERT_EQ(cc::HStore::partitions, 2u) << "one per thread";
  s.m0.begin();
  ASSERT_NE(s.m0.read(0, 0), nullptr);   // partition 0
  ASSERT_NE(s.m0.write(0, 2), nullptr);  // partition 0 again: already held
  s.m1.begin();
  ASSERT_NE(s.m1.read(0, 1), nullptr);  // partition 1
  EXPECT_EQ(s.m1.read(0, 4), nullptr) << "partition 0 is below one it holds: no wait, abort";
  EXPECT_EQ(s.m1.cause(), AbortCause::ReadConflict);
  s.m1.abort();
  EXPECT_NE(s.m0.read(0, 3), nullptr) << "partition 1 is free again";
  EXPECT_TRUE(s.m0.commit());
}
