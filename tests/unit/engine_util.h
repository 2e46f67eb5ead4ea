// A small database (MMDB unless another engine is named) for the engine and CC tests: one NVM image, one DRAM budget, one
// engine over hand-built tables, built fresh or over a reopened image (recovery).
#pragma once
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "benchmarks/zipf.h"
#include "concurrency_control/no_wait.h"
#include "concurrency_control/silo.h"
#include "storage/device/dram_budget.h"
#include "storage/device/nvm_image.h"
#include "storage/engine.h"
#include "concurrency_control/foedus.h"
#include "storage/engines/foedus/foedus.h"
#include "storage/engines/mmdb/mmdb.h"
#include "storage/engines/wbl/wbl.h"
#include "storage/engines/zen/zen.h"
#include "system/txn_manager.h"
#include "tests/unit/test_util.h"

namespace nvt::test {

// Accounts: an 8 B key, an 8 B signed balance, 48 B of payload (a 64 B tuple).
constexpr uint32_t kBalance = 8;
constexpr uint32_t kPayload = 16;
constexpr uint32_t kTuple = 64;

inline Schema account_schema() {
  Schema s;
  s.add("key", 8).add("balance", 8).add("payload", 48);
  return s;
}

inline std::vector<TableInfo> account_tables(uint64_t rows) {
  return {{0, "accounts", account_schema(), rows, false, true}};
}

inline std::string layout_of(const std::vector<TableInfo>& tables) {
  std::string s = "unit-test";
  for (auto& t : tables) s += " " + t.name + "(" + t.schema.describe() + ")" + std::to_string(t.capacity);
  return s;
}

inline int64_t balance_of(const char* img) {
  int64_t b;
  memcpy(&b, img + kBalance, 8);
  return b;
}
inline void set_balance(char* img, int64_t b) { memcpy(img + kBalance, &b, 8); }

// The image a loaded account starts with.
inline void initial_image(char* img, uint64_t key, int64_t balance) {
  memset(img, 0, kTuple);
  memcpy(img, &key, 8);
  set_balance(img, balance);
  snprintf(img + kPayload, 48, "account %llu", (unsigned long long)key);
}

struct DbOptions {
  uint64_t rows = 1000;
  int threads = 2;
  uint64_t dram_bytes = 64ull << 20;
  uint64_t log_bytes = 4ull << 20;
  bool checkpoint_after_load = true;
  std::string profile = "dram";
  // Power-failure mode (storage/device/power_fail.h): a persistent image apart from memory,
  // which only fenced flushes reach; crash_power() turns it into the image file.
  bool power_fail = false;
  // Zen+ (storage/engines/zen/lrt.h); off: plain Zen, as rundb's default
  bool zen_plus = false;
  double lrt_alpha = 0.95, lrt_beta = 0.05;
  uint64_t lrt_gamma = 0;
  // FOEDUS
  uint32_t page_size = 4096;
  int epoch_ms = 20;
  int gleaner_interval_ms = 1000;
  bool snapshot_cache = true;
  // NUMA (storage/device/numa.h): virtual nodes and a placement, threads bound `even`.
  int numa_nodes = 1;
  std::string numa_policy = "stripe";
};

// An engine-CC pair for typed tests: Engine is the engine instantiated for CC, EngineT the
// engine template itself (for TestDb).
template <template <class> class E, class C>
struct Pair {
  using CC = C;
  using Engine = E<C>;
  template <class X> using EngineT = E<X>;
};
// The pairs the insert/delete and TPC-C tests run: mmdb, zen and wbl, with a locking and an
// optimistic CC method, and FOEDUS (its ordered tree) with its own.
using EngineCcPairs = ::testing::Types<Pair<mmdb::Mmdb, cc::NoWait>, Pair<mmdb::Mmdb, cc::Silo>,
                                       Pair<zen::Zen, cc::NoWait>, Pair<zen::Zen, cc::Silo>,
                                       Pair<wbl::Wbl, cc::NoWait>, Pair<wbl::Wbl, cc::Silo>,
                                       Pair<foedus::Foedus, cc::Foedus>>;

// The engine of pair P over `tables` in an image of its own at `path` (reopened for recovery
// when `reopen`), sized by `o` (its rows aside); `layout` names the tables after the engine.
template <class P>
struct PairDb {
  using Engine = typename P::Engine;
  using CC = typename P::CC;
  using Mgr = TxnManager<Engine, CC>;

  PairDb(const std::string& path, std::vector<TableInfo> t, const std::string& layout, const DbOptions& o = {},
         bool reopen = false)
      : tables(std::move(t)) {
    eo.threads = o.threads;
    eo.log_bytes = o.log_bytes;
    eo.checkpoint_after_load = o.checkpoint_after_load;
    eo.zen_plus = o.zen_plus;
    eo.lrt_alpha = o.lrt_alpha;
    eo.lrt_beta = o.lrt_beta;
    eo.lrt_gamma = o.lrt_gamma;
    eo.page_size = o.page_size;
    eo.epoch_ms = o.epoch_ms;
    eo.gleaner_interval_ms = o.gleaner_interval_ms;
    eo.snapshot_cache = o.snapshot_cache;
    dev::DeviceOptions d = device_options(path, Engine::nvm_bytes(tables, eo) + (16ull << 20), o.profile,
                                          std::string("engine=") + Engine::name + " " + layout);
    d.reopen = reopen;
    d.writer_threads = o.threads;
    d.power_fail = o.power_fail;
    d.numa_nodes = o.numa_nodes;
    nvm = std::make_unique<dev::NvmImage>(d);
    dev::Placement pl = dev::parse_placement(o.numa_policy);
    dev::set_numa_layout(pl, o.numa_nodes, dev::bind_threads(pl, o.numa_nodes, o.threads, "even", 1));
    dram = std::make_unique<dev::DramBudget>(o.dram_bytes);
    env = std::make_unique<EngineEnv>(EngineEnv{*nvm, *dram, eo});
    eng = std::make_unique<Engine>(*env, tables);
    nvm->publish();  // a new image replaces the file at `path` only now (as rundb does)
  }
  ~PairDb() {
    if (eng) eng->stop();
    eng.reset();  // stops the checkpointer before the image goes
    env.reset();
    dram.reset();
    nvm.reset();
  }

  std::vector<TableInfo> tables;
  EngineOptions eo;
  std::unique_ptr<dev::NvmImage> nvm;
  std::unique_ptr<dev::DramBudget> dram;
  std::unique_ptr<EngineEnv> env;
  std::unique_ptr<Engine> eng;
};

template <class CC, template <class> class EngineT = mmdb::Mmdb>
class TestDb : public PairDb<Pair<EngineT, CC>> {
 public:
  using Base = PairDb<Pair<EngineT, CC>>;
  using Engine = EngineT<CC>;
  using Mgr = TxnManager<Engine, CC>;
  using Base::eng;
  using Base::tables;

  TestDb(const std::string& path, const DbOptions& o, bool reopen = false)
      : Base(path, account_tables(o.rows), layout_of(account_tables(o.rows)), o, reopen) {}

  // Load accounts 0..rows-1 with `balance` each (single loader thread) and run after_load().
  void load(int64_t balance) {
    char img[kTuple];
    auto& th = eng->thread(0);
    for (uint64_t k = 0; k < tables[0].capacity; k++) {
      initial_image(img, k, balance);
      eng->load(th, 0, k, img);
    }
    eng->after_load();
  }

  struct Snapshot {
    std::vector<std::string> images;
    std::vector<uint64_t> versions;
  };
  Snapshot snapshot() {
    Snapshot s;
    char img[kTuple];
    for (uint64_t k = 0; k < tables[0].capacity; k++) {
      uint64_t v = 0;
      if (!eng->read_current(0, k, img, v)) {
        s.images.emplace_back();
        s.versions.push_back(~0ull);
        continue;
      }
      s.images.emplace_back(img, kTuple);
      s.versions.push_back(v);
    }
    return s;
  }
  int64_t total() {
    int64_t t = 0;
    char img[kTuple];
    for (uint64_t k = 0; k < tables[0].capacity; k++) {
      uint64_t v;
      if (eng->read_current(0, k, img, v)) t += balance_of(img);
    }
    return t;
  }
};

// One bank transfer of `amount` from a to b. Returns true when it committed.
template <class Mgr>
bool transfer(Mgr& m, uint64_t a, uint64_t b, int64_t amount) {
  m.begin();
  char* x = m.write(0, a);
  if (!x) { m.abort(); return false; }
  char* y = m.write(0, b);
  if (!y) { m.abort(); return false; }
  set_balance(x, balance_of(x) - amount);
  set_balance(y, balance_of(y) + amount);
  return m.commit();
}

// Read every account in one transaction; returns false when it aborted, else the sum in *sum.
// read_only: begin with the read-only hint (Cicada's snapshot transactions).
template <class Mgr>
bool audit(Mgr& m, uint64_t rows, int64_t* sum, bool read_only = false) {
  m.begin(read_only);
  int64_t s = 0;
  for (uint64_t k = 0; k < rows; k++) {
    const char* p = m.read(0, k);
    if (!p) { m.abort(); return false; }
    s += balance_of(p);
  }
  if (!m.commit()) return false;
  *sum = s;
  return true;
}

// Starts and stops the CC's process-wide services (Silo's epoch ticker) around a scope.
template <class CC>
struct CCServices {
  explicit CCServices(int threads) { CC::start(threads); }
  ~CCServices() { CC::stop(); }
};

}  // namespace nvt::test
