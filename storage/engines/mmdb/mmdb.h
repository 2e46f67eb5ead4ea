// MMDB with NVM capacity (papers/zen-vldb21.txt section 2.3, Figure 1a): tuples, their CC
// metadata and indexes live in volatile memory, DRAM up to the budget and the rest in NVM used
// as slow volatile memory; durability comes from a per-thread redo log in NVM (one record per
// committed transaction, one fence) and fuzzy checkpoints in NVM. Recovery in a fresh process
// loads the newest complete checkpoint, rebuilds the indexes and redoes the logs. "Ideal MMDB"
// is this engine with a DRAM budget that holds the whole database.
// Supports every single-version CC method (not MCSI/PGSI, which need nvmvcc): the CC's Meta sits in each row's header, next to the tuple.
// Inserts and deletes: a row is never freed while the process runs. A delete marks its row
// deleted (it stays indexed, as a tombstone, so a later insert of the key revives the row and
// continues its version sequence); an insert claims a deleted row of the key or a fresh row, in
// state pending (invisible to lookups) until it commits. The redo log records deletes (a flag
// in the entry's table field); checkpoints record deleted rows with an odd version.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/engine.h"
#include "storage/engines/mmdb/checkpoint.h"
#include "storage/engines/mmdb/redo_log.h"
#include "storage/engines/mmdb/redo_replay.h"
#include "storage/hash_index.h"
#include "storage/parallel.h"
#include "storage/prefetch.h"
#include "storage/table_indexes.h"
#include "storage/violations.h"

namespace nvt::mmdb {

template <class CC>
class Mmdb {
 public:
  static constexpr const char* name = "mmdb";
  template <class C>
  static constexpr bool supports = !needs_nvmvcc<C> && !needs_foedus<C> && !needs_caracal<C>;

  // Row states: visible; inserted but not committed; deleted (or insert rolled back); a fresh
  // row that lost the race for its key (never indexed).
  enum : uint32_t { kLive = 0, kPending = 1, kDeleted = 2, kUnused = 3 };
  static constexpr uint32_t kDeleteFlag = 1u << 31;  // LogEntry::table of a delete

  struct Row {
    typename CC::Meta meta;
    std::atomic<uint64_t> version{0};  // even when stable; odd while an image is installed
    uint64_t key = 0;
    std::atomic<uint32_t> state{kLive};
    char* data() { return reinterpret_cast<char*>(this + 1); }
  };

  struct Table : TableIndexes {
    uint64_t slot = 0;  // bytes per row: header + tuple, 8 B aligned
    char* dram = nullptr;
    uint64_t dram_rows = 0;
    char* nvm = nullptr;
    uint64_t nvm_rows = 0;
    std::atomic<uint64_t> next{0};
    Row* row(uint64_t i) {
      return reinterpret_cast<Row*>(i < dram_rows ? dram + i * slot : nvm + (i - dram_rows) * slot);
    }
  };

  struct Thread {
    RedoLog* log = nullptr;
    uint64_t dram_hits = 0;
    uint64_t nvm_hits = 0;
  };

  // NVM the image needs: the rows that may spill out of DRAM, two checkpoint slots, the logs.
  static uint64_t nvm_bytes(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    uint64_t b = 0;
    for (auto& t : tables) {
      uint64_t len = (t.schema.tuple_size() + 7) / 8 * 8;
      b += t.capacity * (sizeof(Row) + len) + 2 * t.capacity * (sizeof(CkptRecord) + len);
      b += 3 * (2ull << 20);  // alignment of each region
    }
    return b + uint64_t(o.threads) * (o.log_bytes + (2ull << 20)) + (8ull << 20);
  }

  // (tuple accesses served from DRAM, all tuple accesses) of one thread.
  static std::pair<uint64_t, uint64_t> hit_counts(const Thread& th) {
    return {th.dram_hits, th.dram_hits + th.nvm_hits};
  }

  Mmdb(EngineEnv& env, const std::vector<TableInfo>& tables)
      : env_(env), threads_(env.opt.threads) {
    if (tables.size() > kMaxTables) throw std::invalid_argument("too many tables");
    // Indexes and private data first; the rows get the DRAM that is left.
    uint64_t all_bytes = 0;
    for (auto& ti : tables) {
      auto t = std::make_unique<Table>();
      t->slot = (sizeof(Row) + ti.schema.tuple_size() + 7) / 8 * 8;
      t->make_indexes(ti, env.dram);
      all_bytes += t->slot * ti.capacity;
      tables_.push_back(std::move(t));
    }
    env.dram.charge(kPrivateBytesPerThread * threads_, "private");
    // Each worker's redo record is built in DRAM (RedoLog::reserve) before it is appended.
    env.dram.charge(uint64_t(threads_) * RedoLog::kRecordReserve, "mmdb.redo_buffers");
    // DRAM rows hold data: at most the data cap (database / P), whatever the allowances left.
    uint64_t left = env.dram.data_left();
    for (auto& t : tables_) {
      uint64_t cap = t->info.capacity;
      uint64_t share = all_bytes ? uint64_t(double(left) * double(t->slot * cap) / double(all_bytes)) : 0;
      t->dram_rows = std::min<uint64_t>(cap, share / t->slot);
      t->nvm_rows = cap - t->dram_rows;
      if (t->dram_rows)
        t->dram = static_cast<char*>(env.dram.alloc(t->dram_rows * t->slot, "rows." + t->info.name,
                                                     dev::DramUse::Data));
      if (t->nvm_rows)
        t->nvm = env.nvm.region("mmdb.heap." + t->info.name, t->nvm_rows * t->slot,
                                dev::RegionKind::Volatile).base;
    }
    // Durable state: logs (one per thread of any run of this image) and two checkpoint slots.
    dev::Region meta = env.nvm.region("mmdb.meta", 4096, dev::RegionKind::Persistent);
    meta_ = reinterpret_cast<MetaArea*>(meta.base);
    if (!meta.existed || meta_->nlogs == 0) {
      meta_->nlogs = uint32_t(threads_);
      dev::persist(meta_, sizeof *meta_);
    }
    nlogs_ = std::max<uint32_t>(meta_->nlogs, uint32_t(threads_));
    if (nlogs_ > kMaxLogs) throw std::invalid_argument("too many threads for MMDB's logs");
    if (nlogs_ != meta_->nlogs) {
      meta_->nlogs = nlogs_;
      dev::persist(meta_, sizeof *meta_);
    }
    for (uint32_t i = 0; i < nlogs_; i++)
      logs_.push_back(std::make_unique<RedoLog>(env.nvm.region(
          "mmdb.log." + std::to_string(i), env.opt.log_bytes, dev::RegionKind::Persistent)));
    std::vector<CheckpointTable> ct;
    for (auto& t : tables_) ct.push_back({t->info.schema.tuple_size(), t->info.capacity});
    ckpt_ = std::make_unique<Checkpoint>(env.nvm, ct);
    threads_ctx_.resize(threads_);
    for (int i = 0; i < threads_; i++) {
      threads_ctx_[i].log = logs_[i].get();
      logs_[i]->reserve();
    }
  }

  ~Mmdb() {
    stop();
    for (auto& t : tables_)
      if (t->dram) env_.dram.free(t->dram, t->dram_rows * t->slot, "rows." + t->info.name);
  }

  Thread& thread(int tid) { return threads_ctx_.at(tid); }
  size_t tables() const { return tables_.size(); }
  const TableInfo& table_info(uint32_t t) const { return tables_[t]->info; }

  void load(Thread& th, uint32_t table, uint64_t key, const char* image) {
    load_row(th, table, key, image);
    tables_[table]->order_key(key);
  }
  // load() without the ordered index, which recovery rebuilds after on all its threads; recovery
  // names the row's slot (its checkpoint record's), so its threads share no slot counter.
  void load_row(Thread&, uint32_t table, uint64_t key, const char* image, uint64_t slot = kNoSlot) {
    Table& t = *tables_[table];
    Row* r = slot == kNoSlot ? new_row(t, key, kLive) : row_at(t, slot, key, kLive);
    memcpy(r->data(), image, t.info.schema.tuple_size());
    dev::write(r, t.slot);
    t.index_loaded(key, reinterpret_cast<uint64_t>(r));
  }

  // The rows `keys` name, header and tuple, on their way into the cache (storage/prefetch.h).
  void prefetch(uint32_t table, const uint64_t* keys, size_t n) const {
    const Table& t = *tables_[table];
    prefetch_batch(*t.index, keys, n, [&](uint64_t v) {
      return std::pair<const void*, size_t>(reinterpret_cast<const void*>(v), t.slot);
    });
  }

  bool lookup(Thread& th, uint32_t table, uint64_t key, RowRef& ref) {
    Table& t = *tables_[table];
    uint64_t v = t.index->lookup(key);
    if (v == HashIndex::kNoValue) return false;
    Row* r = reinterpret_cast<Row*>(v);
    if (r->state.load(std::memory_order_acquire) != kLive) return false;
    if (dev::is_nvm(r)) th.nvm_hits++; else th.dram_hits++;
    ref = RowRef{r->data(), &r->meta, r};
    return true;
  }

  // Claim `key` for an insert: a deleted row of the key or a fresh row, pending (invisible)
  // until install(). False when the key is present or another transaction is inserting it.
  bool insert(Thread& th, uint32_t table, uint64_t key, RowRef& ref) {
    Table& t = *tables_[table];
    for (;;) {
      uint64_t v = t.index->lookup(key);
      Row* r = reinterpret_cast<Row*>(v);
      if (v == HashIndex::kNoValue) {
        r = new_row(t, key, kPending);
        memset(r->data(), 0, t.info.schema.tuple_size());
        dev::write(r, t.slot);
        if (!t.index->insert(key, reinterpret_cast<uint64_t>(r))) {
          r->state.store(kUnused, std::memory_order_release);  // lost the race: use the winner
          continue;
        }
      } else {
        uint32_t s = kDeleted;
        if (!r->state.compare_exchange_strong(s, kPending, std::memory_order_acq_rel)) return false;
      }
      if (dev::is_nvm(r)) th.nvm_hits++; else th.dram_hits++;
      ref = RowRef{r->data(), &r->meta, r};
      return true;
    }
  }
  // An insert's transaction aborted: the row goes back to deleted.
  void undo_insert(Thread&, Access& a) {
    static_cast<Row*>(a.row.handle)->state.store(kDeleted, std::memory_order_release);
  }
  // After the CC granted an access: false if the tuple was deleted meanwhile.
  bool visible(const Access& a) const {
    uint32_t s = static_cast<Row*>(a.row.handle)->state.load(std::memory_order_acquire);
    return a.type == AccessType::Insert ? s == kPending : s == kLive;
  }
  // Committed keys of `table` in [lo, hi] from its ordered index.
  void scan_keys(uint32_t table, uint64_t lo, uint64_t hi, size_t limit, std::vector<uint64_t>& out,
                 bool reverse) const {
    tables_.at(table)->scan(lo, hi, limit, out, reverse);
  }

  // Write-ahead: one redo record with every after-image, one flush pass, one fence.
  void persist(Thread& th, Access* acc, size_t n) {
    RedoLog& log = *th.log;
    log.begin();
    for (size_t i = 0; i < n; i++) {
      Access& a = acc[i];
      if (a.type == AccessType::Read) continue;
      Row* r = static_cast<Row*>(a.row.handle);
      a.version = r->version.load(std::memory_order_relaxed) + 2;
      if (a.type == AccessType::Delete) log.add(a.table | kDeleteFlag, a.key, a.version, 0);
      else memcpy(log.add(a.table, a.key, a.version, a.len), a.local, a.len);
    }
    if (log.empty_record()) return;  // read-only: nothing to persist, no fence
    while (!log.append()) wait_for_log_space(log);
    if (log.fill() > env_.opt.checkpoint_log_fill) request_checkpoint();
  }

  void install(Thread&, Access& a) {
    Row* r = static_cast<Row*>(a.row.handle);
    Table& t = *tables_[a.table];
    r->version.store(a.version - 1, std::memory_order_relaxed);  // odd: fuzzy readers retry
    std::atomic_thread_fence(std::memory_order_release);
    if (a.type == AccessType::Delete) {
      r->state.store(kDeleted, std::memory_order_release);
      t.unorder_key(a.key);
    } else {
      memcpy(r->data(), a.local, a.len);
      if (a.type == AccessType::Insert) {
        r->state.store(kLive, std::memory_order_release);
        t.order_key(a.key);
      }
    }
    r->version.store(a.version, std::memory_order_release);
    dev::write(r->data(), a.len);
    dev::write(&r->version, sizeof r->version);
  }

  void committed(Thread& th) { th.log->installed(); }
  void release(Thread&, Access*, size_t) {}  // rows never move: nothing to unpin

  void after_load() {
    if (env_.opt.checkpoint_after_load) checkpoint();
  }

  // Background checkpointer: keeps the logs truncated while workers run. Its device traffic is
  // published (dev::publish) as it goes, so the harness counts it in the measured phase.
  void start() {
    running_ = true;
    checkpointer_ = std::thread([this] {
      dev::set_thread_node(0);
      dev::publish();
      std::unique_lock lk(mu_);
      while (running_) {
        cv_.wait_for(lk, std::chrono::milliseconds(50), [&] { return !running_ || wanted_; });
        if (!running_) break;
        if (!wanted_) continue;
        lk.unlock();
        checkpoint(true);
        background_checkpoints_++;
        lk.lock();
        wanted_ = false;
        cv_.notify_all();
      }
      dev::pay_debt();
      dev::publish();
      bg_counters_ = dev::my_counters();
    });
  }

  void stop() {
    {
      std::lock_guard g(mu_);
      running_ = false;
    }
    cv_.notify_all();
    if (checkpointer_.joinable()) checkpointer_.join();
  }

  // A fuzzy checkpoint: start LSNs first (records from there on are replayed), then every row
  // copied consistently while transactions run, then the header made valid. The background
  // checkpointer publishes its counters every kPublishRows rows, so that a phase boundary
  // falling within a checkpoint splits its traffic there.
  static constexpr uint64_t kPublishRows = 4096;
  void checkpoint(bool background = false) {
    std::lock_guard g(ckpt_mu_);
    auto t0 = std::chrono::steady_clock::now();
    std::vector<uint64_t> start(nlogs_);
    for (uint32_t i = 0; i < nlogs_; i++) start[i] = logs_[i]->safe_lsn();
    CheckpointWriter w = ckpt_->begin();
    for (uint32_t ti = 0; ti < tables_.size(); ti++) {
      Table& t = *tables_[ti];
      uint64_t n = std::min<uint64_t>(t.next.load(), t.info.capacity);
      uint32_t len = t.info.schema.tuple_size();
      for (uint64_t i = 0; i < n; i++) {
        Row* r = t.row(i);
        if (r->state.load(std::memory_order_acquire) == kUnused) continue;
        char* dst = w.row(ti, r->key, len);
        for (;;) {
          uint64_t v1 = r->version.load(std::memory_order_acquire);
          if (v1 & 1) { _mm_pause(); continue; }
          memcpy(dst, r->data(), len);
          bool absent = r->state.load(std::memory_order_acquire) != kLive;
          std::atomic_thread_fence(std::memory_order_acquire);
          // An absent row (deleted, or an insert not committed) is recorded with an odd version.
          if (r->version.load(std::memory_order_relaxed) == v1) { w.set_version(v1 | absent); break; }
        }
        dev::read(r->data(), len);
        if (background && i % kPublishRows == 0) dev::publish();
      }
    }
    ckpt_->commit(w, start);
    for (uint32_t i = 0; i < nlogs_; i++) logs_[i]->truncate_to(start[i]);
    if (background) dev::publish();
    checkpoints_++;
    last_ckpt_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  RecoveryReport recover(int nthreads) {
    RecoveryReport rep;
    const CheckpointReader rd = ckpt_->newest();
    if (!rd.valid)
      throw std::runtime_error("NVM image holds no complete MMDB checkpoint to recover from "
                               "(was the crashed run started with --checkpoint none?)");
    rep.lap("find_checkpoint");
    // Load rows and rebuild indexes in parallel over the checkpoint's row records, each record
    // back into its row slot.
    for (uint32_t ti = 0; ti < tables_.size(); ti++) tables_[ti]->next.store(rd.rows(ti));
    parallel(nthreads, [&](int tid) {
      Thread th;
      rd.for_each(tid, nthreads, [&](uint32_t table, uint64_t slot, uint64_t key, uint64_t version, const char* img) {
        load_row(th, table, key, img, slot);
        Table& t = *tables_[table];
        Row* r = reinterpret_cast<Row*>(t.index->lookup(key));
        r->version.store(version & ~1ull, std::memory_order_relaxed);
        if (version & 1) r->state.store(kDeleted, std::memory_order_relaxed);
      });
    });
    for (auto& t : tables_)  // the live rows' keys, each thread a slice of the hash index
      t->rebuild_ordered(nthreads, [](uint64_t v) {
        return reinterpret_cast<Row*>(v)->state.load(std::memory_order_relaxed) == kLive;
      });
    for (auto& t : tables_) rep.rows += t->next.load();
    rep.lap("load_checkpoint_and_index");
    std::atomic<uint64_t> replayed{0};
    std::vector<const RedoLog*> logs;
    std::vector<uint64_t> from;
    for (uint32_t li = 0; li < nlogs_; li++) {
      logs.push_back(logs_[li].get());
      from.push_back(rd.start_lsn(li));
    }
    const ReplayResult rr = replay_logs(logs, from, nthreads, [&](const LogEntry& e, const char* img) {
      apply(e, img);
      replayed.fetch_add(1, std::memory_order_relaxed);
    });
    for (uint32_t li = 0; li < nlogs_; li++) logs_[li]->reset(from[li], rr.end[li]);
    rep.counts = {{"redo_pieces", rr.pieces}, {"redo_pieces_parsed_again", rr.parsed_again}};
    rep.replayed = replayed.load();
    rep.lap("replay_redo_log");
    return rep;
  }

  bool read_current(uint32_t table, uint64_t key, char* out, uint64_t& version) {
    Table& t = *tables_.at(table);
    uint64_t v = t.index->lookup(key);
    if (v == HashIndex::kNoValue) return false;
    Row* r = reinterpret_cast<Row*>(v);
    if (r->state.load() != kLive) return false;
    memcpy(out, r->data(), t.info.schema.tuple_size());
    version = r->version.load();
    return true;
  }

  // The engine's own invariants after recovery: every row reachable through the index under
  // its key, the index holding nothing else, no row left mid-install.
  nlohmann::json check() const {
    Violations fail;
    for (auto& tp : tables_) {
      Table& t = *tp;
      uint64_t n = std::min<uint64_t>(t.next.load(), t.info.capacity), indexed = 0, unused = 0;
      uint64_t live = 0;
      for (uint64_t i = 0; i < n; i++) {
        Row* r = t.row(i);
        uint32_t st = r->state.load();
        if (st == kUnused) { unused++; continue; }
        if (st == kPending) fail(t.info.name + ": row " + std::to_string(i) + " left pending");
        live += st == kLive;
        if (t.ordered && (st == kLive) != t.ordered->contains(r->key))
          fail(t.info.name + ": row " + std::to_string(i) + " disagrees with the ordered index");
        if (t.index->lookup(r->key) != reinterpret_cast<uint64_t>(r))
          fail(t.info.name + ": row " + std::to_string(i) + " not indexed under its key");
        if (r->version.load() & 1) fail(t.info.name + ": row " + std::to_string(i) + " mid-install");
      }
      t.index->for_each([&](uint64_t, uint64_t) { indexed++; });
      if (indexed != n - unused)
        fail(t.info.name + ": index holds " + std::to_string(indexed) + " keys for " +
             std::to_string(n - unused) + " rows");
      if (t.ordered && t.ordered->size() != live)
        fail(t.info.name + ": ordered index holds " + std::to_string(t.ordered->size()) +
             " keys for " + std::to_string(live) + " live rows");
    }
    return fail.json();
  }

  nlohmann::json stats() const {
    uint64_t dh = 0, nh = 0;
    for (auto& th : threads_ctx_) { dh += th.dram_hits; nh += th.nvm_hits; }
    nlohmann::json rows = nlohmann::json::object();
    for (auto& t : tables_) rows[t->info.name] = {{"dram", t->dram_rows}, {"nvm", t->nvm_rows}};
    return {{"dram_row_accesses", dh},
            {"nvm_row_accesses", nh},
            {"checkpoints", checkpoints_.load()},  // the one after load included
            {"background_checkpoints", background_checkpoints_.load()},  // while workers ran
            {"last_checkpoint_s", last_ckpt_s_},
            {"row_capacity", rows},
            {"checkpointer_nvm_write_bytes", bg_counters_.nvm_write_bytes}};
  }

 private:
  struct MetaArea {
    uint32_t nlogs;
    uint32_t pad;
  };


  static constexpr uint64_t kNoSlot = ~0ull;
  Row* new_row(Table& t, uint64_t key, uint32_t state) { return row_at(t, t.next.fetch_add(1), key, state); }
  Row* row_at(Table& t, uint64_t i, uint64_t key, uint32_t state) {
    if (i >= t.info.capacity) throw std::runtime_error("table " + t.info.name + " is full");
    Row* r = t.row(i);
    new (r) Row();
    r->key = key;
    r->state.store(state, std::memory_order_relaxed);
    return r;
  }

  // Redo one logged image (or delete) if it is newer than the row's; rows are latched through
  // their version word (odd = busy) because several logs replay at once. A key the checkpoint
  // does not hold was inserted after it: its row is created, deleted at version 0.
  void apply(const LogEntry& e, const char* img) {
    const uint32_t table = e.table & ~kDeleteFlag;
    const bool del = e.table & kDeleteFlag;
    if (table >= tables_.size()) throw std::runtime_error("redo log names an unknown table");
    Table& t = *tables_[table];
    uint64_t v = t.index->lookup(e.key);
    while (v == HashIndex::kNoValue) {
      Row* fresh = new_row(t, e.key, kDeleted);
      if (t.index->insert(e.key, reinterpret_cast<uint64_t>(fresh))) v = reinterpret_cast<uint64_t>(fresh);
      else { fresh->state.store(kUnused); v = t.index->lookup(e.key); }
    }
    Row* r = reinterpret_cast<Row*>(v);
    uint64_t cur = r->version.load();
    for (;;) {
      if (cur & 1) { _mm_pause(); cur = r->version.load(); continue; }
      if (r->version.compare_exchange_weak(cur, cur | 1)) break;
    }
    if (e.version > cur) {
      uint32_t was = r->state.load();
      if (del) {
        r->state.store(kDeleted);
        if (was == kLive) t.unorder_key(e.key);
      } else {
        memcpy(r->data(), img, e.len);
        r->state.store(kLive);
        if (was != kLive) t.order_key(e.key);
      }
      r->version.store(e.version, std::memory_order_release);
    } else {
      r->version.store(cur, std::memory_order_release);
    }
  }

  void request_checkpoint() {
    std::lock_guard g(mu_);
    if (!wanted_) { wanted_ = true; cv_.notify_all(); }
  }

  void wait_for_log_space(RedoLog& log) {
    dev::pay_debt();
    if (!running_)
      throw std::runtime_error("MMDB redo log full and no checkpointer running: raise --log-size");
    request_checkpoint();
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, std::chrono::milliseconds(1), [&] { return !wanted_; });
    (void)log;
  }

  EngineEnv& env_;
  int threads_;
  std::vector<std::unique_ptr<Table>> tables_;
  std::vector<std::unique_ptr<RedoLog>> logs_;
  std::vector<Thread> threads_ctx_;
  std::unique_ptr<Checkpoint> ckpt_;
  MetaArea* meta_ = nullptr;
  uint32_t nlogs_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  bool running_ = false;
  bool wanted_ = false;
  std::thread checkpointer_;
  std::mutex ckpt_mu_;
  std::atomic<uint64_t> checkpoints_{0};
  std::atomic<uint64_t> background_checkpoints_{0};
  double last_ckpt_s_ = 0;
  dev::Counters bg_counters_;
};

}  // namespace nvt::mmdb
