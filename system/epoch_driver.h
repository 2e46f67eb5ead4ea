// The epoch-batched run path of a deterministic engine (ENGINE=nvcaracal; papers/
// nvcaracal-eurosys23.txt Algorithm 1), beside driver.h's per-transaction workers, which the
// other engines keep. Each epoch's --epoch-txns transaction inputs are drawn up front
// (transaction j of epoch e from its own seed, so the inputs do not depend on the thread
// count), transaction j runs on core (j - 1) mod threads in serial-id order, and every core
// goes through the phases together (a barrier between each):
//   log inputs | mark logged, major GC, eviction | insert | append | sort | execute |
//   per-core commit (pool offsets, fence) | epoch commit (persist the epoch number, fence)
// The insert step (and its barrier) runs for benchmarks that insert (det_insert_set): first
// each core walks the whole epoch's inputs in serial-id order to fill in what depends on that
// order (det_sequence: TPC-C's order ids), writing only its own transactions' inputs, then
// creates the rows its transactions insert, so the append step may name them.
// A transaction is acknowledged when its epoch commits: latency runs from its input's
// submission (when its epoch's inputs were drawn) to that commit, and throughput counts the
// transactions of the epochs that completed inside the measured window.
#pragma once
#include <x86intrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/zipf.h"
#include "storage/device/device.h"
#include "storage/device/power_fail.h"
#include "storage/engines/nvcaracal/epoch.h"
#include "storage/engines/nvcaracal/ledger_entry.h"
#include "system/host.h"
#include "system/numa_host.h"
#include "system/stats.h"

namespace nvt {
using nvc::heap_bytes_of;

// The seed of transaction j of epoch e: independent of the thread count and of the others.
inline uint64_t det_txn_seed(uint64_t seed, uint64_t epoch, uint64_t j) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull ^ (epoch << 32 | j) * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;
  return x * 0x94D049BB133111EBull + 1;
}

// One transaction as the benchmark sees it: read and write by key. A write returns a private
// image holding the version before this transaction (a read-modify-write edits it in place);
// a user abort (the benchmark returns false) must come before the first write.
template <class Engine>
class DetTxn {
 public:
  using Row = typename Engine::Row;
  // Its keys are declared before it runs: no scans (benchmarks/tpcc_txn.h asks).
  static constexpr bool kNoScans = true;
  DetTxn(Engine& e, typename Engine::Thread& th, nvc::Sid sid, Row* const* decl, size_t n)
      : e_(e), th_(th), sid_(sid), decl_(decl), n_(n) {
    bufs_.assign(n, nullptr);
  }
  const char* read(uint32_t table, uint64_t key) {
    if (size_t i = slot(table, key); i < n_ && bufs_[i]) {
      if (bufs_[i] == nvc::kDeleted) throw std::logic_error("read of a key this transaction deleted");
      return bufs_[i];
    }
    const char* v = e_.read(th_, sid_, table, key);
    if (!v) throw std::runtime_error("read of a missing key " + std::to_string(key) + " of table " + e_.table_info(table).name);
    return v;
  }
  char* write(uint32_t table, uint64_t key) {
    size_t i = slot(table, key);
    if (i == n_) throw std::logic_error("write of key " + std::to_string(key) + " outside the declared write set");
    if (bufs_[i] == nvc::kDeleted) throw std::logic_error("write of a key this transaction deleted");
    if (!bufs_[i]) {
      Row& r = *decl_[i];
      (void)e_.entry_of(r, sid_);
      const char* prior = e_.read_row(th_, sid_, r);
      bufs_[i] = e_.new_value(th_, r.len);
      if (prior) memcpy(bufs_[i], prior, r.len);
      else memset(bufs_[i], 0, r.len);  // a row this transaction inserts: no version before it
    }
    return bufs_[i];
  }
  // A row this transaction inserts (declared by det_insert_set, created in the insert step):
  // a zeroed image to fill.
  char* insert(uint32_t table, uint64_t key) {
    size_t i = slot(table, key);
    if (i == n_ || !e_.inserted_now(*decl_[i]))
      throw std::logic_error("insert of key " + std::to_string(key) + " outside the declared insert set");
    return write(table, key);
  }
  // A declared write that deletes the row (TPC-C's Delivery): transactions after this one in
  // serial order find no row. False when there is none to delete.
  bool remove(uint32_t table, uint64_t key) {
    size_t i = slot(table, key);
    if (i == n_) throw std::logic_error("delete of key " + std::to_string(key) + " outside the declared write set");
    (void)e_.entry_of(*decl_[i], sid_);
    if (!bufs_[i] && !e_.read_row(th_, sid_, *decl_[i])) return false;
    bufs_[i] = const_cast<char*>(nvc::kDeleted);
    return true;
  }
  void sink(uint64_t s) { sink_ += s; }
  void user_abort() {}  // the benchmark then returns false
  // After the transaction ran: its versions published, or IGNORE when it aborted or left a
  // declared write unwritten, then the rows' final writes. Writes become visible here, all at
  // once, so a user abort may follow write() calls: nothing of them was visible (Caracal's
  // rule, no abort after the first write, holds for visible writes).
  void finish(bool committed) {
    std::vector<uint32_t> idx(n_);
    for (size_t i = 0; i < n_; i++) {
      idx[i] = e_.entry_of(*decl_[i], sid_);
      if (!committed) bufs_[i] = nullptr;
      if (bufs_[i]) e_.publish(th_, *decl_[i], idx[i], bufs_[i]);
    }
    for (size_t i = 0; i < n_; i++) {
      if (bufs_[i]) e_.finalize(th_, *decl_[i], idx[i], bufs_[i]);
      else e_.ignore(th_, *decl_[i], idx[i]);
    }
  }

 private:
  // Searched from after the last one found: transactions mostly touch their declared rows in
  // declaration order (a Delivery declares up to 180), so a search is usually one step.
  size_t slot(uint32_t table, uint64_t key) const {
    for (size_t k = 0; k < n_; k++) {
      size_t i = (hint_ + k) % n_;
      if (decl_[i]->key == key && decl_[i]->table == table) {
        hint_ = i + 1;
        return i;
      }
    }
    return n_;
  }
  Engine& e_;
  typename Engine::Thread& th_;
  nvc::Sid sid_;
  Row* const* decl_;
  size_t n_;
  std::vector<char*> bufs_;
  mutable size_t hint_ = 0;
  uint64_t sink_ = 0;
};

// The state of a benchmark's serial pass over an epoch's inputs (det_sequence_begin), if any.
template <class B>
struct DetSequenceOf {
  struct type {};
};
template <class B>
  requires requires(const B& b) { b.det_sequence_begin(); }
struct DetSequenceOf<B> {
  using type = decltype(std::declval<const B&>().det_sequence_begin());
};

// Runs epochs on persistent per-core threads.
template <class Engine, class Bench>
class EpochRunner {
 public:
  using Row = typename Engine::Row;
  struct Core {
    std::vector<uint64_t> log;             // {j, words, word...} per transaction, the input log's form
    std::vector<size_t> at;                // where each transaction's entry starts in `log`
    std::vector<Row*> decl;                // declared write rows, per transaction in turn
    std::vector<size_t> decl_at;           // where each transaction's rows start in `decl`
    std::vector<Row*> ins;                 // rows inserted in the insert step, per transaction
    std::vector<size_t> ins_at;            // where each transaction's rows start in `ins`
    std::vector<uint64_t> submitted;       // TSC when each input was drawn
    uint64_t committed = 0, aborted = 0;   // over the measured epochs
    std::array<uint64_t, 8> by_kind{};     // committed per transaction type (det_kind), measured
    LatencyHistogram latency;
    dev::Counters dev_start, dev_end;
    bool measuring = false;
  };
  // What the coordinator (core 0) decides after each epoch commit.
  enum class Next { Warmup, Measure, Stop };

  static constexpr bool kInserts = requires(const Bench& b, const uint64_t* in) {
    b.det_insert_set(in, [](uint32_t, uint64_t) {});
  };
  static constexpr bool kSequenced = requires(const Bench& b, uint64_t* in) {
    b.det_sequence_begin();
  };

  EpochRunner(Engine& e, const Bench& b, int threads, uint64_t epoch_txns, uint64_t seed)
      : e_(e), b_(b), threads_(threads), epoch_txns_(epoch_txns), seed_(seed), cores_(size_t(threads)),
        buffers_(e.dram(), "nvcaracal epoch input buffers (inputs, declared rows)"),
        tables_(e.dram(), "benchmark serial-pass tables") {
    update_ledger();
  }
  // Each core thread on its NUMA node (the plan rundb applied to the device model).
  void set_numa(const NumaPlan& p) { numa_ = &p; }

  // Inputs of epoch e for core t from the logs (recovery's replay) instead of drawing them.
  void replay_from(std::function<bool(int, uint64_t, std::vector<uint64_t>&)> f) { replay_ = std::move(f); }

  // Run epochs first, first + 1, ... until decide(epoch just committed, its commit TSC)
  // returns Stop. Epochs decided as Measure (the decision is taken for the next epoch) count.
  void run(uint64_t first, std::function<Next(uint64_t, uint64_t)> decide) {
    std::barrier sync(threads_);
    std::atomic<int> next{int(decide(first - 1, __rdtsc()))};
    std::vector<std::thread> ts;
    for (int t = 0; t < threads_; t++)
      ts.emplace_back([&, t] {
        try {
          if (numa_) {
            const int node = numa_->thread_node[size_t(t)];
            pin_thread(t, numa_->real[size_t(node)]);
            dev::set_thread_node(node);
          }
          auto& th = e_.thread(t);
          Core& c = cores_[size_t(t)];
          for (uint64_t e = first;; e++) {
            if (next.load() == int(Next::Stop)) break;
            bool measure = next.load() == int(Next::Measure);
            if (measure && !c.measuring) {
              dev::pay_debt();
              c.dev_start = dev::my_counters();
              c.measuring = true;
            }
            if (t == 0) e_.set_epoch(e);
            sync.arrive_and_wait();
            draw(t, e);
            e_.log_inputs(th, c.log, c.at.size());
            sync.arrive_and_wait();
            if (t == 0) e_.mark_logged();
            e_.init_step(th);
            sync.arrive_and_wait();
            if constexpr (kInserts) {
              insert(t, th, e);
              sync.arrive_and_wait();
            }
            append(t, th, e);
            sync.arrive_and_wait();
            e_.sort_step(th);
            sync.arrive_and_wait();
            execute(t, th, e, measure);
            sync.arrive_and_wait();
            e_.commit_core(th);
            sync.arrive_and_wait();
            if (t == 0) {
              if constexpr (kSequenced) b_.det_sequence_end(seq0_);
              e_.commit_epoch();
              update_ledger();
              commit_tsc_ = __rdtsc();
              next.store(int(decide(e, commit_tsc_)));
            }
            sync.arrive_and_wait();
            if (measure) {  // acknowledged at the commit: latency from submission to it
              for (uint64_t s : c.submitted) c.latency.add(uint64_t(double(commit_tsc_ - s) / tsc_per_ns_));
              dev::pay_debt();
              c.dev_end = dev::my_counters();
            }
          }
          dev::pay_debt();
          dev::publish();
        } catch (const std::exception& ex) {
          // A failing core cannot leave the others at a barrier: the process ends with the
          // error (nothing of the running epoch is committed, the image recovers).
          std::string msg = "core " + std::to_string(t) + ": " + ex.what();
          fprintf(stderr, "rundb: error: %s\n", msg.c_str());
          std::_Exit(1);
        }
      });
    for (auto& t : ts) t.join();
  }

  void set_tsc_per_ns(double g) { tsc_per_ns_ = g; }
  // This runner's per-core buffers (the input log's DRAM form, declared and inserted rows,
  // submission times, core 0's serial pass) and the benchmark's serial-pass tables (TPC-C:
  // customers by name, last orders, undelivered orders) into the engine's DRAM ledger; at each
  // epoch commit, when no core touches them.
  void update_ledger() {
    uint64_t b = heap_bytes_of(cores_);
    for (auto& c : cores_)
      b += heap_bytes_of(c.log) + heap_bytes_of(c.at) + heap_bytes_of(c.decl) + heap_bytes_of(c.decl_at) +
           heap_bytes_of(c.ins) + heap_bytes_of(c.ins_at) + heap_bytes_of(c.submitted);
    if constexpr (kSequenced) b += b_.det_sequence_bytes(seq0_);
    buffers_.set(b);
    if constexpr (requires { b_.det_dram_bytes(); }) tables_.set(b_.det_dram_bytes());
  }
  // The crash point halfway through core 0's execution (recovery's replay names its own).
  void set_execute_point(const char* name) { exec_point_ = name; }
  std::vector<Core>& cores() { return cores_; }

 private:
  // This core's transactions of epoch e: j = t + 1, t + 1 + threads, ...
  void draw(int t, uint64_t e) {
    Core& c = cores_[size_t(t)];
    c.log.clear();
    c.at.clear();
    c.submitted.clear();
    if (replay_) {
      std::vector<uint64_t> logged;
      if (replay_(t, e, logged)) {  // the log as written: {j, words, word...}
        for (size_t p = 0; p < logged.size(); p += 2 + logged[p + 1]) {
          c.at.push_back(c.log.size());
          c.log.insert(c.log.end(), logged.begin() + long(p), logged.begin() + long(p + 2 + logged[p + 1]));
          c.submitted.push_back(__rdtsc());
        }
      }
      return;
    }
    for (uint64_t j = uint64_t(t) + 1; j <= epoch_txns_; j += uint64_t(threads_)) {
      c.at.push_back(c.log.size());
      c.log.push_back(j);
      c.log.push_back(0);
      size_t words = c.log.size();
      Rng r(det_txn_seed(seed_, e, j));
      b_.det_draw(r, e, j, c.log);
      c.log[words - 1] = c.log.size() - words;
      c.submitted.push_back(__rdtsc());
    }
  }
  // The insert step: the serial pass (every core walks transaction 1, 2, ... of the epoch:
  // transaction j is entry (j - 1) / threads of core (j - 1) mod threads), then this core's
  // inserted rows, each with its inserter's PENDING version.
  void insert(int t, typename Engine::Thread& th, uint64_t e) {
    Core& c = cores_[size_t(t)];
    if constexpr (kSequenced) {
      auto seq = b_.det_sequence_begin();
      uint64_t total = 0;
      for (auto& k : cores_) total += k.at.size();
      for (uint64_t j = 1; j <= total; j++) {
        Core& o = cores_[size_t((j - 1) % uint64_t(threads_))];
        size_t i = size_t((j - 1) / uint64_t(threads_));
        if (i >= o.at.size() || o.log[o.at[i]] != j)
          throw std::logic_error("epoch inputs out of serial order at transaction " + std::to_string(j));
        b_.det_sequence(seq, &o.log[o.at[i] + 2], &o == &c);
      }
      if (t == 0) seq0_ = std::move(seq);
    }
    c.ins.clear();
    c.ins_at.clear();
    for (size_t at : c.at) {
      c.ins_at.push_back(c.ins.size());
      nvc::Sid sid = nvc::sid_of(e, c.log[at]);
      b_.det_insert_set(&c.log[at + 2], [&](uint32_t table, uint64_t key) { c.ins.push_back(e_.insert(th, sid, table, key)); });
    }
    c.ins_at.push_back(c.ins.size());
  }
  void append(int t, typename Engine::Thread& th, uint64_t e) {
    Core& c = cores_[size_t(t)];
    c.decl.clear();
    c.decl_at.clear();
    for (size_t i = 0; i < c.at.size(); i++) {
      size_t at = c.at[i];
      c.decl_at.push_back(c.decl.size());
      if constexpr (kInserts)
        for (size_t k = c.ins_at[i]; k < c.ins_at[i + 1]; k++) c.decl.push_back(c.ins[k]);
      nvc::Sid sid = nvc::sid_of(e, c.log[at]);
      b_.det_write_set(&c.log[at + 2], [&](uint32_t table, uint64_t key) {
        for (size_t k = c.decl_at.back(); k < c.decl.size(); k++)  // a key declared twice: once
          if (c.decl[k]->key == key && c.decl[k]->table == table) return;
        c.decl.push_back(e_.append(th, sid, table, key));
      });
    }
    c.decl_at.push_back(c.decl.size());
  }
  void execute(int t, typename Engine::Thread& th, uint64_t e, bool measure) {
    Core& c = cores_[size_t(t)];
    size_t half = c.at.size() / 2;
    for (size_t i = 0; i < c.at.size(); i++) {
      if (t == 0 && i == half) dev::crash_point(exec_point_);
      size_t at = c.at[i];
      DetTxn<Engine> tx(e_, th, nvc::sid_of(e, c.log[at]), c.decl.data() + c.decl_at[i], c.decl_at[i + 1] - c.decl_at[i]);
      bool ok = b_.det_run(&c.log[at + 2], tx);
      tx.finish(ok);
      if (measure) (ok ? c.committed : c.aborted)++;
      if constexpr (requires { b_.det_kind(&c.log[at + 2]); })
        if (measure && ok) c.by_kind[std::min<size_t>(b_.det_kind(&c.log[at + 2]), 7)]++;
    }
  }

  Engine& e_;
  const Bench& b_;
  int threads_;
  uint64_t epoch_txns_, seed_;
  std::vector<Core> cores_;
  std::function<bool(int, uint64_t, std::vector<uint64_t>&)> replay_;
  uint64_t commit_tsc_ = 0;
  double tsc_per_ns_ = 1.0;
  const char* exec_point_ = "nvcaracal.execute";
  const NumaPlan* numa_ = nullptr;
  typename DetSequenceOf<Bench>::type seq0_{};  // core 0's serial pass of the running epoch
  nvc::LedgerEntry buffers_, tables_;
};

}  // namespace nvt
