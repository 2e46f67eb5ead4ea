// The run driver: opens the device, builds the engine, loads or recovers, runs the phases
// (warm-up, measure) with one worker per thread and reports. Templated on the pair config.h
// names, so tests can drive any pair the same way rundb does.
#pragma once
#include <x86intrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <string>
#include <chrono>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/tpcc.h"
#include "benchmarks/ycsb.h"
#include "storage/device/device.h"
#include "storage/device/dram_budget.h"
#include "storage/device/nvm_image.h"
#include "storage/engine.h"
#include "storage/hash_index.h"
#include "storage/ordered_index.h"
#include "system/dispatcher.h"
#include "system/host.h"
#include "system/load_progress.h"
#include "system/numa_host.h"
#include "system/options.h"
#include "system/run_report.h"
#include "system/stats.h"
#include "system/txn_manager.h"

namespace nvt {

struct RunContext {
  const Options& o;
  std::string engine, cc;
};

enum Phase : int { kWarmup = 0, kMeasure = 1, kDone = 2 };

// Device settings from the options: profile, overrides, persistence domain.
dev::CostProfile make_profile(const Options& o);
// The summary printed to stderr.
void print_summary(const nlohmann::json& out);

// Ctrl-C and SIGTERM (rundb installs the handlers; without them nothing here changes). While
// the workers run (warm-up and measured phase, through to the printed results) the first
// signal only sets a flag: the driver ends the phase, workers stop at their next transaction
// boundary and the results so far are printed marked "interrupted" (exit 128 + signal). At any
// other time (setup, load, recovery), and on a second signal, the process exits at once with
// 128 + signal, as after a crash: what was acknowledged is durable, the image recovers.
void install_interrupt_handlers();
int interrupt_signal();  // 0, or the signal that asked the run to stop
void set_interruptible(bool workers_running);

// DRAM beside the P share for a benchmark of small tuples (SmallBank, TPC-C): there the indexes
// and per-slot structures outweigh the tuples, so P divides the tuple bytes alone (what an
// engine may keep in DRAM or NVM) and these come on top. YCSB D/E: what their insert room adds
// beyond the loaded table's (whose share is in database / P, as in A-C). Per table its hash index and ordered
// index, the engine's per-slot metadata (Zen's allocator), per-thread private buffers.
template <class Engine>
uint64_t side_dram_bytes(const std::vector<TableInfo>& tables, const EngineOptions& eo) {
  uint64_t b = uint64_t(eo.threads) * kPrivateBytesPerThread + (1ull << 20);
  for (auto& t : tables)
    b += HashIndex::bytes_for(t.capacity) + (t.ordered ? t.capacity * OrderedIndex::kNodeBytes : 0);
  if constexpr (requires { Engine::metadata_bytes(tables, eo); }) b += Engine::metadata_bytes(tables, eo);
  return b;
}

// The run's DRAM budget: --dram-size, else the database / P plus, for small-tuple benchmarks
// and YCSB D/E's insert room, the side DRAM above.
template <class Engine, class Bench>
uint64_t dram_budget_of(const Options& o, const Bench& bench, const std::vector<TableInfo>& tables,
                        const EngineOptions& eo, uint64_t db_bytes) {
  if (o.dram_size) return o.dram_size;
  uint64_t b = uint64_t(double(db_bytes) / o.p_ratio);
  if constexpr (requires { Bench::kSmallTuples; })
    b += side_dram_bytes<Engine>(tables, eo);
  else if constexpr (requires { bench.p_share_tables(); })  // only part of it is in the P share
    b += side_dram_bytes<Engine>(tables, eo) - side_dram_bytes<Engine>(bench.p_share_tables(), eo);
  return b;
}

// The DRAM that may hold data (DESIGN.md's one rule, storage/device/dram_budget.h): the database
// / P for every engine, whatever --dram-size makes the whole budget.
inline uint64_t data_cap_of(const Options& o, uint64_t db_bytes) {
  return uint64_t(double(db_bytes) / o.p_ratio);
}

// The device settings of a run: the image (created, or reopened with --recover; one file, or
// one per NUMA node), its layout line, the profile, power-failure and crash settings; sets the
// injected fault. `engine_bytes` is what the engine needs, used unless --nvm-size is given.
dev::DeviceOptions device_options(const Options& o, const std::string& engine, const std::string& layout,
                                  uint64_t engine_bytes, const NumaPlan& numa);
// The engine's options from the run's (the log sized from the database unless --log-size).
EngineOptions engine_options(const Options& o, uint64_t db_bytes);
// Zen's multi-table persist order as table ids: --persist-order's names (`flag`, comma-separated),
// else the benchmark's `names`, then the tables not named in id order; empty when neither names
// any.
std::vector<uint32_t> persist_order_ids(const std::string& flag, std::vector<std::string> names,
                                        const std::vector<TableInfo>& tables);

template <class Engine, class CC, class Bench>
nlohmann::json run_pair(const RunContext& ctx) {
  using clk = std::chrono::steady_clock;
  const Options& o = ctx.o;
  Bench bench(o);
  auto tables = bench.tables();
  uint64_t db_bytes = bench.database_bytes();

  EngineOptions eo = engine_options(o, db_bytes);

  const uint64_t dram_budget = dram_budget_of<Engine>(o, bench, tables, eo, db_bytes);
  const NumaPlan numa = plan_numa(o, host_numa_nodes());
  dev::NvmImage nvm(device_options(o, Engine::name, std::string("engine=") + Engine::name + " " + bench.layout(),
                                   Engine::nvm_bytes(tables, eo), numa));
  apply_numa(numa, nvm);  // before the engine: its pools ask for nodes
  dev::DramBudget dram(dram_budget, data_cap_of(o, db_bytes));
  EngineEnv env{nvm, dram, eo};
  Engine eng(env, tables);
  nvm.publish();
  // Zen's multi-table persist order: --persist-order, else the benchmark's, else the default.
  if constexpr (requires { eng.set_persist_order(std::vector<uint32_t>{}); }) {
    std::vector<std::string> names;
    if constexpr (requires { Bench::persist_order(); }) names = Bench::persist_order();
    std::vector<uint32_t> order = persist_order_ids(o.persist_order, names, tables);
    if (!order.empty()) eng.set_persist_order(order);
  }

  nlohmann::json out;
  put_run_header(out, o, ctx.engine, ctx.cc, nvm, dram_budget, db_bytes, numa);
  out["config"]["log_size"] = eo.log_bytes;

  if (o.recover) {
    // Recovery's own device traffic: this thread's and its helpers' (storage/parallel.h).
    dev::Counters c0 = dev::my_counters(), p0 = dev::published();
    RecoveryReport rep = eng.recover(o.recovery_threads);
    dev::pay_debt();
    dev::Counters rc = (dev::my_counters() - c0);
    rc += dev::published() - p0;
    out["recovery"] = recovery_json(rep, rc, o.recovery_threads, nvm.host().tsc_ghz);
    out["invariants"] = eng.check();
    if constexpr (requires { bench.check(eng); }) out[Bench::kCheckName] = bench.check(eng);
    if constexpr (requires { Bench::stamp_of(nullptr); })
    if (!o.verify_ack.empty()) {
      uint32_t len = bench.tuple_size();
      out["verification"] = verify_acks(
          o.verify_ack, len,
          [&](uint64_t key, char* img, uint64_t& ver) { return eng.read_current(0, key, img, ver); },
          [](const char* img) { return Bench::stamp_of(img); });
    }
    out["results"] = recovered_results(dram, nvm);
    return out;
  }

  auto l0 = clk::now();
  load_with_progress(bench, [&] { bench.load(eng, o.threads); });
  eng.after_load();
  out["load_s"] = std::chrono::duration<double>(clk::now() - l0).count();

  // Phases. Workers see the phase at transaction boundaries and snapshot their counters there.
  std::atomic<int> phase{kWarmup};
  std::atomic<int> finished{0};
  std::vector<ThreadStats> stats(size_t(o.threads));
  // Commits per transaction type, for benchmarks with several (TPC-C: tpmC counts NewOrders).
  std::vector<std::array<uint64_t, 8>> kinds(size_t(o.threads));
  std::vector<clk::time_point> end_at(size_t(o.threads));
  std::vector<uint64_t> rolled_back(size_t(o.threads));  // TPC-C's specified rollbacks, measured
  const double tsc_ghz = nvm.host().tsc_ghz;
  // --time-breakdown: per worker, TSC cycles in the measured phase and of its timed parts.
  constexpr bool kBreakdown = requires { CC::breakdown_now(); };
  std::vector<std::array<uint64_t, 4>> cycles(size_t(o.threads));  // total, snapshot, status, access
  if constexpr (kBreakdown) CC::enable_breakdown(o.time_breakdown);
  // An engine whose commits become durable after commit() returns tells the driver when
  // (WBL: the group-commit record; FOEDUS: the epoch; Zen: the writers' next fences): a token
  // per commit and a durable point, {every token up to it is durable, TSC when it was seen}.
  // Any other engine's commit is durable when commit() returns (docs/output.md).
  constexpr bool kLagging = requires(Engine& e, typename Engine::Thread& th) {
    e.commit_token(th);
    e.durable_point();
    e.sync(th);
  };
  // Soft partition (journal 4.2.2): Algorithm 3 assigns the drawn transactions to workers,
  // Algorithm 4 remaps partitions every --numa-remap-ms from the access counts.
  constexpr bool kDispatchable = requires { typename Bench::Worker::Drawn; };
  const bool soft = numa.placement == dev::Placement::SoftPartition;
  std::unique_ptr<SoftPartition> sp;
  struct NoTxn {};
  using Drawn = decltype([] {
    if constexpr (kDispatchable) return typename Bench::Worker::Drawn{};
    else return NoTxn{};
  }());
  std::unique_ptr<Dispatcher<Drawn>> dispatcher;
  if (soft) {
    if constexpr (!kDispatchable) throw std::invalid_argument("--numa-policy soft-partition: this workload has no partition keys");
    sp = std::make_unique<SoftPartition>(o.numa_partitions, numa.nodes, numa.thread_node, o.numa_eta);
    dispatcher = std::make_unique<Dispatcher<Drawn>>(*sp, o.numa_delta, o.seed);
  }
  std::vector<std::array<uint64_t, 3>> affine(size_t(o.threads));  // measured: ran, on affinity node, no affinity
  std::atomic<bool> remapping{soft && o.numa_remap_ms > 0};
  std::thread remapper;
  if (remapping)
    remapper = std::thread([&] {
      while (remapping.load()) {
        for (int ms = 0; ms < o.numa_remap_ms && remapping.load(); ms += 5)
          std::this_thread::sleep_for(std::chrono::milliseconds(std::min(5, o.numa_remap_ms - ms)));
        if (remapping.load()) sp->remap();
      }
    });
  auto stop_remapper = [&] {
    remapping.store(false);
    if (remapper.joinable()) remapper.join();
  };
  struct OnExit {
    std::function<void()> f;
    ~OnExit() { f(); }
  } remapper_guard{stop_remapper};  // joined on every way out, a throw included

  CC::start(o.threads);
  eng.start();
  std::vector<std::thread> workers;
  std::mutex error_mu;
  std::string error;
  for (int t = 0; t < o.threads; t++)
    workers.emplace_back([&, t] { try {
      const int my_node = numa.thread_node[size_t(t)];
      pin_thread(t, numa.real[size_t(my_node)]);
      dev::set_thread_node(my_node);
      ThreadStats& st = stats[size_t(t)];
      TxnManager<Engine, CC> m(eng, t);
      typename Bench::Worker w(bench, t);
      Rng backoff(uint64_t(t) + 77);
      const uint64_t kBackoffCycles0 = std::max<uint64_t>(1, uint64_t(0.4e3 * tsc_ghz));
      int seen = kWarmup;
      uint64_t measured = 0;
      auto& eth = eng.thread(t);
      std::pair<uint64_t, uint64_t> hits0{};
      // Commits not yet durable (engines whose durability lags commit), as {commit token,
      // start TSC}; resolved against the engine's durable point.
      std::deque<std::pair<uint64_t, uint64_t>> undurable;
      auto resolve_durable = [&] {
        if constexpr (kLagging) {
          if (undurable.empty()) return;
          auto [point, at] = eng.durable_point();
          for (; !undurable.empty() && undurable.front().first <= point; undurable.pop_front())
            st.durable_latency.add(uint64_t(double(std::max(at, undurable.front().second) -
                                                   undurable.front().second) / tsc_ghz));
        }
      };
      for (;;) {
        int p = phase.load(std::memory_order_acquire);
        if (p != seen) {
          dev::pay_debt();
          if (p >= kMeasure && seen == kWarmup) {
            st.dev_start = dev::my_counters();
            hits0 = Engine::hit_counts(eth);
            if constexpr (kBreakdown) {
              auto b = CC::breakdown_now();
              cycles[size_t(t)] = {__rdtsc(), b.snapshot, b.status, b.access};
            }
          }
          seen = p;
        }
        if (p == kDone || (o.txns && measured >= o.txns)) break;
        int affinity = -1;
        if constexpr (kDispatchable) {
          if (soft) {
            w.adopt(dispatcher->next(
                t, [&] { w.next(); return w.take_drawn(); },
                [](const Drawn& x, std::vector<uint64_t>& keys) { Bench::Worker::partition_keys(x, keys); }, affinity));
          } else {
            w.next();
          }
        } else {
          w.next();
        }
        uint64_t t0 = __rdtsc();
        bool done = false;
        int attempt = 0;
        for (;; attempt++) {
          // A benchmark that knows a transaction only reads says so (Cicada's snapshot reads).
          if constexpr (requires { w.read_only(); }) m.begin(w.read_only());
          else m.begin();
          if (w.execute(m)) {
            if ((done = m.commit())) break;  // commit() aborts by itself on failure
          } else if (!m.user_aborted()) {
            m.abort();
          }
          // A transaction that rolled back as its specification says (TPC-C's 1% NewOrder,
          // through user_abort) is done and counted, not retried and not an abort.
          if constexpr (requires { w.rolled_back(); })
            if (m.user_aborted() && w.rolled_back()) {
              done = true;
              if (seen == kMeasure) rolled_back[size_t(t)]++;
              break;
            }
          if (seen == kMeasure) st.aborts[size_t(m.cause())]++;
          if (m.user_aborted()) break;  // the transaction's own decision: not retried
          dev::pay_debt();
          // Randomized exponential backoff before retrying the same transaction, in time (TSC
          // cycles), not pause instructions, whose cost differs 10x between CPUs: up to 0.4 us
          // at the first retry, doubling to 100 us.
          uint64_t until = __rdtsc() + backoff.below(kBackoffCycles0 << std::min(attempt, 8));
          while (__rdtsc() < until) _mm_pause();
          if (phase.load(std::memory_order_relaxed) == kDone) break;
        }
        dev::pay_debt();
        if (!done) continue;  // stopped while retrying: neither committed nor counted again
        // An engine whose commit becomes durable only at the next fence (Zen: Algorithm 1 has
        // no fence after the LP flush) makes it durable before anything is acknowledged.
        if constexpr (requires { eng.sync(eth); })
          if (!o.ack_file.empty()) eng.sync(eth);
        w.acknowledged(m);
        if (seen == kMeasure) {
          if constexpr (requires { w.kind(); }) kinds[size_t(t)][w.kind() & 7]++;
          st.committed.fetch_add(1, std::memory_order_relaxed);
          if (attempt > 0) st.retried++;
          if (soft) {
            auto& a = affine[size_t(t)];
            a[0]++;
            a[1] += affinity == my_node;
            a[2] += affinity < 0;
          }
          uint64_t t1 = __rdtsc();
          st.latency.add(uint64_t(double(t1 - t0) / tsc_ghz));
          if constexpr (kLagging) {
            if (eng.commit_token(eth) > eng.durable_point().first)
              undurable.emplace_back(eng.commit_token(eth), t0);
            else
              st.durable_latency.add(uint64_t(double(t1 - t0) / tsc_ghz));
          } else {
            st.durable_latency.add(uint64_t(double(t1 - t0) / tsc_ghz));  // durable at commit()
          }
          measured++;
        }
        resolve_durable();
      }
      dev::pay_debt();
      auto loop_end = clk::now();  // a --txns run's window ends here, not after the wait below
      if constexpr (kBreakdown)
        if (seen != kWarmup) {  // the measured phase began here: its end is now
          auto b = CC::breakdown_now();
          auto& c = cycles[size_t(t)];
          c = {__rdtsc() - c[0], b.snapshot - c[1], b.status - c[2], b.access - c[3]};
        }
      st.dev_end = dev::my_counters();
      auto hits1 = Engine::hit_counts(eth);
      st.engine_hits = hits1.first - hits0.first;
      st.engine_accesses = hits1.second - hits0.second;
      end_at[size_t(t)] = loop_end;
      // The measured commits still waiting: make this thread's last commit durable (others'
      // commits may wait for it: Zen's read-only ones) and wait for the rest, after the window
      // (and after the counters: its fence is not the workload's).
      // A worker that failed never syncs: give up on what waits for it after a second.
      if constexpr (kLagging) {
        eng.sync(eth);
        resolve_durable();
        for (auto until = clk::now() + std::chrono::seconds(1); !undurable.empty() && clk::now() < until;) {
          std::this_thread::yield();
          resolve_durable();
        }
      }
      finished.fetch_add(1);
    } catch (const std::exception& e) {
      // A worker that fails (NVM full mid-run, ...) stops the run with a clear error instead
      // of terminating the process; what is durable in the image stays recoverable.
      std::lock_guard g(error_mu);
      if (error.empty()) error = "worker " + std::to_string(t) + ": " + e.what();
      phase.store(kDone, std::memory_order_release);
      end_at[size_t(t)] = clk::now();
      finished.fetch_add(1);
    } });

  // Sleeps that end early when a failing worker has already stopped the run.
  set_interruptible(true);  // from now on a first Ctrl-C ends the run with its results
  auto stopping = [&] { return phase.load() == kDone || interrupt_signal() != 0; };
  auto run_for = [&](double s) {
    auto until = clk::now() + std::chrono::duration<double>(s);
    while (clk::now() < until && !stopping())
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  };
  run_for(o.warmup_s);
  int expect = kWarmup;  // never overwrite a worker's kDone
  phase.compare_exchange_strong(expect, kMeasure, std::memory_order_acq_rel);
  // An engine with counters of its own that are not per worker (Zen+'s lrt) starts them here.
  if constexpr (requires { eng.begin_measure(); }) eng.begin_measure();
  const uint64_t remapped0 = sp ? sp->remapped() : 0;
  auto m0 = clk::now();
  // Background threads' traffic (checkpointer, group commit, ...) as published in the window.
  dev::Counters bg0 = dev::published(), bg1;
  std::vector<uint64_t> timeline;  // committed at each --timeline-ms sample
  auto committed_now = [&] {
    uint64_t c = 0;
    for (auto& s : stats) c += s.committed.load(std::memory_order_relaxed);
    return c;
  };
  // Zen+: per sample, the exclusive stage's entries so far and whether it is on (an interval is
  // marked when the stage was on at either end or was entered within it).
  constexpr bool kStages = requires { eng.exclusive_sample(); };
  std::vector<std::pair<uint64_t, bool>> stages;
  auto sample = [&] {
    timeline.push_back(committed_now());
    if constexpr (kStages) stages.push_back(eng.exclusive_sample());
  };
  if constexpr (kStages) stages.push_back(eng.exclusive_sample());
  if (o.txns) {
    while (finished.load() < o.threads && !stopping()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(o.timeline_ms ? o.timeline_ms : 5));
      if (o.timeline_ms) sample();
    }
  } else if (o.timeline_ms) {
    auto until = m0 + std::chrono::duration<double>(o.duration_s);
    while (clk::now() < until && !stopping()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(o.timeline_ms));
      sample();
    }
  } else {
    run_for(o.duration_s);
  }
  auto m1 = clk::now();
  // ... and stop them at the window's end (a privileged transaction may run on until the join).
  if constexpr (requires { eng.end_measure(); }) eng.end_measure();
  phase.store(kDone, std::memory_order_release);
  bg1 = dev::published();
  const uint64_t remapped1 = sp ? sp->remapped() : 0;
  for (auto& w : workers) w.join();
  stop_remapper();
  if (!error.empty()) {
    eng.stop();
    CC::stop();
    throw std::runtime_error(error);
  }
  if (o.txns) {  // (stopped early: the workers ended at the stop, so this is still honest)
    m1 = m0;
    for (auto& e : end_at) m1 = std::max(m1, e);
  }
  eng.stop();
  CC::stop();

  MeasuredRun mr = sum_workers(stats, std::chrono::duration<double>(m1 - m0).count(), bg1 - bg0);
  mr.rolled_back = 0;
  for (auto r : rolled_back) *mr.rolled_back += r;
  nlohmann::json res = measured_results(mr, dram, nvm, eng.stats(), tsc_ghz);
  if constexpr (kBreakdown)
    if (o.time_breakdown) res["time_breakdown_s"] = time_breakdown_json(cycles, tsc_ghz);
  if constexpr (requires { Bench::kind_names(); }) by_type_results(res, Bench::kind_names(), kinds, mr.secs, mr.committed);
  res["numa"] = numa_results(numa, mr.traffic, mr.committed);
  if (soft) affinity_results(res["numa"], affine, o.numa_partitions, remapped1 - remapped0, dispatcher->overflow());
  out["results"] = res;
  // Stopped by a signal: measured_s is the time until the stop, the counts what ran until then.
  out["interrupted"] = interrupt_signal() != 0;
  // The benchmark's own counts and its consistency check of the database after the run.
  if constexpr (requires { bench.report(); }) out["workload"] = bench.report();
  if constexpr (requires { bench.check(eng); }) out[Bench::kCheckName] = bench.check(eng);
  if (o.timeline_ms) out["timeline"] = timeline_json(timeline, o.timeline_ms, stages);
  return out;
}

}  // namespace nvt
