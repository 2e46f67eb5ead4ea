// rundb's run of a deterministic engine (ENGINE=nvcaracal): the device and engine set up as
// driver.h's run_pair does, then the load (or recovery and the crashed epoch's replay) and
// the epochs of system/epoch_driver.h, reported in the same JSON fields where they mean the
// same thing (results.committed, throughput_tps, latency_us, per_txn, memory_bytes) and in
// results.engine for what only epochs have.
#pragma once
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "system/driver.h"
#include "system/epoch_driver.h"

namespace nvt {

// A benchmark that can run deterministically declares its write sets (det_write_set).
template <class Bench>
concept DeterministicBench = requires(const Bench& b, const uint64_t* in) {
  b.det_input_words();
  b.det_txn_writes();
  b.det_value_bytes();
};

// --verify-ack after a deterministic engine's recovery: the recovered epoch is at least the
// last acknowledged one, and an acknowledged epoch's database is exactly the one acknowledged.
// (An epoch recovered beyond the acknowledged ones, replayed from its logged inputs, has no
// digest here; a crash test compares it with a run of that many epochs.)
inline nlohmann::json verify_epochs(const std::string& prefix, uint64_t recovered, uint64_t checksum, uint64_t epoch_txns,
                                    uint64_t rows) {
  std::ifstream f(prefix + ".epochs");
  uint64_t e, sum, last = 0;
  bool have = false, found = false;
  uint64_t want = 0;
  while (f >> e >> sum) {
    have = true;
    last = e;
    if (e == recovered) found = true, want = sum;
  }
  nlohmann::json ex = nlohmann::json::array();
  if (have && recovered < last) ex.push_back("recovered epoch " + std::to_string(recovered) + " < acknowledged epoch " + std::to_string(last));
  if (found && want != checksum) ex.push_back("epoch " + std::to_string(recovered) + " recovered another database than it acknowledged");
  return {{"violations", ex.size()}, {"examples", ex}, {"acked_txns", last * epoch_txns}, {"acked_epoch", last},
          {"acked_writes_checked", found ? rows : 0},  // every row, through the digest
          {"recovered_epoch", recovered}, {"checked_digest", found}};
}

// The default epoch size when --epoch-txns is not given: the largest whose transient pool takes
// at most half of what the DRAM budget has beside the index and row entries (the engine's own
// check takes all of it; the other half is for the cache pool, the per-core lists and the
// epoch's input buffers, which grow with the epoch too), at most kMaxDefaultEpoch; 1 where none
// fits (the engine then says what it needs).
inline constexpr uint64_t kMaxDefaultEpoch = 100000;
// With neither --dram-size nor --epoch-txns (or on --recover, whose epoch is the image's) the
// default budget also holds (twice, as the rule above reads it) the transient pool of an epoch
// of this many transactions: overhead in the ledger, beside the data cap of database / P,
// which it does not raise. Without it a small
// database's budget held its index and row entries but no epoch (SmallBank: not even one
// transaction), or epochs of a hundred transactions whose barriers dominate.
inline constexpr uint64_t kMinDefaultEpoch = 1000;
template <class Engine>
uint64_t largest_epoch(const std::vector<TableInfo>& tables, EngineOptions eo, uint64_t budget) {
  uint64_t fixed = 0;
  for (auto& t : tables) fixed += HashIndex::bytes_for(t.capacity) + Engine::metadata_bytes({t}, eo);
  auto fits = [&](uint64_t txns) {
    eo.nvc_epoch_txns = txns;
    return fixed <= budget && Engine::transient_bytes_per_core(eo) * uint64_t(eo.threads) <= (budget - fixed) / 2;
  };
  uint64_t lo = 1, hi = kMaxDefaultEpoch;
  if (fits(hi)) return hi;
  while (hi - lo > 1) {  // the answer is in [lo, hi): fits(lo) (or lo is 1), !fits(hi)
    uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

template <class Engine, class Bench>
nlohmann::json run_deterministic(const RunContext& ctx) {
  using clk = std::chrono::steady_clock;
  Options chosen = ctx.o;  // the options with the epoch size this run picks (below)
  const Options& o = chosen;
  Bench bench(o);
  auto tables = bench.tables();
  uint64_t db_bytes = bench.database_bytes();
  EngineOptions eo;
  eo.threads = o.threads;
  eo.nvc_epoch_txns = o.epoch_txns;
  eo.nvc_row_bytes = o.persistent_row_bytes;
  eo.nvc_minor_gc = o.minor_gc;
  eo.nvc_cached_versions = o.cached_versions;
  eo.nvc_input_log = o.input_log;
  eo.nvc_design = o.caracal_design;
  eo.nvc_cache_epochs = o.cache_epochs;
  eo.nvc_txn_writes = bench.det_txn_writes();
  eo.nvc_write_value_bytes = bench.det_value_bytes();
  eo.nvc_txn_input_words = bench.det_input_words();
  if constexpr (requires { bench.det_txn_value_bytes(); }) eo.nvc_txn_value_bytes = bench.det_txn_value_bytes();
  uint64_t dram_budget = dram_budget_of<Engine>(o, bench, tables, eo, db_bytes);
  if (!o.dram_size && (chosen.epoch_txns == 0 || o.recover)) {  // recovery: the epoch the image was written with
    EngineOptions floor = eo;
    floor.nvc_epoch_txns = kMinDefaultEpoch;
    dram_budget += 2 * Engine::transient_bytes_per_core(floor) * uint64_t(o.threads);
  }
  if (chosen.epoch_txns == 0) {  // no --epoch-txns: the largest epoch the budget holds
    chosen.epoch_txns = eo.nvc_epoch_txns = largest_epoch<Engine>(tables, eo, dram_budget);
    std::cerr << "rundb: --epoch-txns " << o.epoch_txns << " (the largest whose transient pool takes half of the DRAM "
              << "budget of " << (dram_budget >> 20) << " MiB beside the index, at most " << kMaxDefaultEpoch << ")\n";
  }
  const NumaPlan numa = plan_numa(o, host_numa_nodes());
  if (numa.placement == dev::Placement::SoftPartition)
    throw std::invalid_argument("--numa-policy soft-partition dispatches transactions to partitions' threads, which a "
                                "deterministic engine does not (transaction j runs on core (j - 1) mod threads)");
  dev::NvmImage nvm(device_options(o, Engine::name, std::string("engine=") + Engine::name + " threads=" + std::to_string(o.threads) + " " +
                                          bench.layout(), Engine::nvm_bytes(tables, eo), numa));
  apply_numa(numa, nvm);
  dev::DramBudget dram(dram_budget, data_cap_of(o, db_bytes));
  EngineEnv env{nvm, dram, eo};
  Engine eng(env, tables);
  nvm.publish();
  const double tsc_ghz = nvm.host().tsc_ghz;

  nlohmann::json out;
  put_run_header(out, o, ctx.engine, ctx.cc, nvm, dram_budget, db_bytes, numa);
  out["config"]["recoverable"] = eng.recoverable();
  EpochRunner<Engine, Bench> runner(eng, bench, o.threads, o.epoch_txns, o.seed);
  runner.set_tsc_per_ns(tsc_ghz);
  runner.set_numa(numa);

  if (o.recover) {
    // Pools back to the last committed epoch, rows scanned (index rebuilt), the crashed
    // epoch's versions reverted, then its logged inputs replayed (Figure 11's steps).
    dev::Counters c0 = dev::my_counters(), p0 = dev::published();
    RecoveryReport rep;
    auto st = eng.recover_state(o.recovery_threads, rep);
    // What the benchmark derives from the committed database (TPC-C's order-id counters), as
    // the replay needs it.
    if constexpr (requires { bench.det_sync(eng); }) {
      bench.det_sync(eng);
      rep.lap("benchmark_state");  // TPC-C: order-id counters, the last-name table
    }
    std::vector<std::vector<uint64_t>> logged(size_t(o.threads));
    bool replay = eng.input_logging() && st.logged == st.committed + 1;
    uint64_t replayed = 0;
    if (replay)
      for (int t = 0; t < o.threads; t++) {
        eng.read_log(t, st.logged, logged[size_t(t)]);
        for (size_t p = 0; p < logged[size_t(t)].size(); p += 2 + logged[size_t(t)][p + 1]) replayed++;
      }
    rep.lap("load_inputs");
    if (replay) {
      runner.replay_from([&](int t, uint64_t, std::vector<uint64_t>& v) {
        v = logged[size_t(t)];
        return true;
      });
      runner.set_execute_point("nvcaracal.replay");
      int calls = 0;
      runner.run(st.committed + 1, [&](uint64_t, uint64_t) {
        return calls++ == 0 ? EpochRunner<Engine, Bench>::Next::Warmup : EpochRunner<Engine, Bench>::Next::Stop;
      });
    }
    rep.lap("replay");
    rep.replayed = replayed;
    dev::pay_debt();
    dev::Counters rc = (dev::my_counters() - c0);
    rc += dev::published() - p0;
    nlohmann::json r = recovery_json(rep, rc, o.recovery_threads, tsc_ghz);
    r["committed_epoch"] = st.committed;
    r["replayed_epoch"] = replay ? st.logged : 0;
    r["reverted_rows"] = st.reverted;
    r["recoverable"] = eng.recoverable();
    uint64_t sum = eng.state_checksum();
    r["state_checksum"] = sum;
    r["recovered_epoch"] = replay ? st.logged : st.committed;
    out["recovery"] = r;
    if (!o.verify_ack.empty()) out["verification"] = verify_epochs(o.verify_ack, replay ? st.logged : st.committed, sum, o.epoch_txns, st.rows);
    out["invariants"] = eng.check();
    if constexpr (requires { bench.check(eng); }) out[Bench::kCheckName] = bench.check(eng);
    out["results"] = recovered_results(dram, nvm);
    return out;
  }

  auto l0 = clk::now();
  load_with_progress(bench, [&] {
    if constexpr (requires { bench.det_load(eng, o.threads); }) bench.det_load(eng, o.threads);
    else bench.load(eng, o.threads);
  });
  eng.after_load();
  if constexpr (requires { bench.det_sync(eng); }) bench.det_sync(eng);
  out["load_s"] = std::chrono::duration<double>(clk::now() - l0).count();

  // Warm-up epochs until --warmup passed, then measured epochs until --duration passed (or
  // --txns per thread committed); each decision taken at an epoch commit.
  using Next = typename EpochRunner<Engine, Bench>::Next;
  uint64_t start = __rdtsc(), m0 = 0, m1 = 0, measured_epochs = 0, first_measured = 0;
  bool measuring = false;
  auto t0 = eng.totals(), t1 = t0;
  set_interruptible(true);
  auto secs = [&](uint64_t a, uint64_t b) { return double(b - a) / (tsc_ghz * 1e9); };
  // --ack-file: each committed epoch is acknowledged with the database's digest after it, as
  // a line "epoch checksum" in PREFIX.epochs (a crash test checks recovery against it).
  std::unique_ptr<std::ofstream> acks;
  if (!o.ack_file.empty()) {
    acks = std::make_unique<std::ofstream>(o.ack_file + ".epochs", std::ios::trunc);
    *acks << 0 << " " << eng.state_checksum() << std::endl;
  }
  runner.run(1, [&](uint64_t e, uint64_t now) {
    if (acks && e > 0) *acks << e << " " << eng.state_checksum() << std::endl;
    if (measuring) {
      measured_epochs++;
      m1 = now;
      t1 = eng.totals();
      uint64_t done = 0;
      for (auto& c : runner.cores()) done += c.committed + c.aborted;
      bool enough = o.txns ? done >= o.txns * uint64_t(o.threads) : secs(m0, now) >= o.duration_s;
      return enough || interrupt_signal() ? Next::Stop : Next::Measure;
    }
    if (interrupt_signal()) return Next::Stop;
    if (secs(start, now) < o.warmup_s) return Next::Warmup;
    measuring = true;
    m0 = m1 = now;
    first_measured = e + 1;
    t0 = t1 = eng.totals();
    return Next::Measure;
  });
  MeasuredRun mr;
  mr.secs = secs(m0, m1);
  for (auto& c : runner.cores()) {
    mr.committed += c.committed;
    mr.aborted += c.aborted;
    mr.latency.merge(c.latency);
    if (c.measuring) mr.traffic += c.dev_end - c.dev_start;
  }
  mr.causes[size_t(AbortCause::User)] = mr.aborted;  // a deterministic engine aborts only by the transaction's logic
  // An epoch's commit is its durability (inputs logged before it runs, versions persisted at
  // its end): commit-to-durable latency is latency_us (docs/output.md).
  mr.durable_latency = mr.latency;
  mr.per_txn_of = mr.committed + mr.aborted;  // user aborts are completed transactions too
  auto d = t1 - t0;
  mr.hits = d.cache_hits;
  mr.accesses = d.accesses;
  double ep = measured_epochs ? 1.0 / double(measured_epochs) : 0.0;
  nlohmann::json engine = eng.stats();
  engine["design"] = o.caracal_design;
  engine["recoverable"] = eng.recoverable();
  engine["epoch_txns"] = o.epoch_txns;
  engine["epochs"] = measured_epochs;
  engine["first_measured_epoch"] = first_measured;
  engine["versions_written"] = d.versions_written;
  engine["final_writes"] = d.final_writes;
  // Updates that never reached NVM: every version but a row's final one of the epoch; none in
  // the designs that write every update to NVM (hybrid persists each, all-nvmm keeps each there).
  engine["transient_update_share"] =
      d.versions_written && !eng.updates_reach_nvm() ? 1.0 - double(d.final_writes) / double(d.versions_written) : 0.0;
  engine["nvm_writes_per_epoch"] = {{"rows", double(d.final_writes) * ep}, {"bytes", double(mr.traffic.nvm_write_bytes) * ep}};
  engine["gc"] = {{"minor", d.minor_gc}, {"major", d.major_gc}};
  engine["cache"] = {{"hits", d.cache_hits}, {"evicted", d.evicted}, {"full", d.cache_full}};
  engine["pending_waits"] = d.waits;
  engine["ignored_versions"] = d.ignored;
  nlohmann::json res = measured_results(mr, dram, nvm, std::move(engine), tsc_ghz);
  res["numa"] = numa_results(numa, mr.traffic, mr.committed);
  res["memory_bytes"]["nvm_breakdown"] = eng.nvm_breakdown();
  if constexpr (requires(const uint64_t* in) { Bench::kind_names(); bench.det_kind(in); }) {  // as driver.h: TPC-C's tpmC
    std::vector<std::array<uint64_t, 8>> per_core;
    for (auto& c : runner.cores()) per_core.push_back(c.by_kind);
    by_type_results(res, Bench::kind_names(), per_core, mr.secs, mr.committed);
  }
  res["engine"]["last_epoch"] = first_measured ? first_measured + measured_epochs - 1 : 0;
  res["engine"]["state_checksum"] = eng.state_checksum();
  out["results"] = res;
  out["interrupted"] = interrupt_signal() != 0;
  if constexpr (requires { bench.check(eng); }) out[Bench::kCheckName] = bench.check(eng);
  if constexpr (requires { bench.report(); }) out["workload"] = bench.report();
  return out;
}

}  // namespace nvt
