// The FOEDUS-style engine (papers/foedus-sigmod15.txt sections 4-7 and Appendix D; what differs
// from the paper is in docs/engines/foedus.md), its entry point. All data live in fixed-size pages
// (page.h) reached through dual pointers (dual_pointer.h): a volatile page in DRAM where one was
// installed, else the immutable snapshot page in NVM, read through the snapshot cache
// (snapshot_cache.h; dual_pages.h reads and installs them). Storages are array storages
// (array_storage.h, array_access.h) for tables of dense keys (TableInfo::dense) and ordered
// trees (tree_storage.h, tree_access.h, tree_snapshot.h) for every other table: inserts,
// deletes, scans. A commit (CC `foedus`: Silo's OCC with a pointer set; commit.h) appends redo
// records to its worker's (worker.h) log buffer; the log writer (log_writer.h) makes epochs
// durable; a transaction is acknowledged once its epoch is. The log gleaner (gleaner.h) turns
// durable logs into a new snapshot, by interval and under DRAM pressure, and then installs
// snapshot pointers and drops the volatile pages nobody modified meanwhile, with transactions
// paused (install_drop.h, 7.5). A restart (--recover) reads the last snapshot back
// (crash_recovery.h), runs the gleaner over the logs since and starts with no volatile pages but
// the roots (7.7). check.h and stats.h: the invariants at quiescence and the counters.
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/device/power_fail.h"
#include "storage/engine.h"
#include "storage/parallel.h"
#include "storage/engines/foedus/array_access.h"
#include "storage/engines/foedus/check.h"
#include "storage/engines/foedus/combine_roots.h"
#include "storage/engines/foedus/commit.h"
#include "storage/engines/foedus/crash_recovery.h"
#include "storage/engines/foedus/dual_pages.h"
#include "storage/engines/foedus/epoch.h"
#include "storage/engines/foedus/gleaner.h"
#include "storage/engines/foedus/gleaner_thread.h"
#include "storage/engines/foedus/initial_snapshot.h"
#include "storage/engines/foedus/install_drop.h"
#include "storage/engines/foedus/log_writer.h"
#include "storage/engines/foedus/metadata.h"
#include "storage/engines/foedus/sizing.h"
#include "storage/engines/foedus/snapshot_area.h"
#include "storage/engines/foedus/snapshot_cache.h"
#include "storage/engines/foedus/stats.h"
#include "storage/engines/foedus/tree_access.h"
#include "storage/engines/foedus/tree_snapshot.h"
#include "storage/engines/foedus/tree_storage.h"
#include "storage/engines/foedus/volatile_pool.h"
#include "storage/engines/foedus/worker.h"

namespace nvt::foedus {

template <class CC>
class Foedus {
 public:
  static constexpr const char* name = "foedus";
  template <class C>
  static constexpr bool supports = needs_foedus<C>;
  // An aborting transaction releases its locks before it undoes its inserts (TxnManager::abort):
  // a split holding a leaf's lock may be waiting for one of them.
  static constexpr bool kReleaseBeforeUndoInsert = true;
  static constexpr uint64_t kLogBufferBytes = 256ull << 10;  // per worker, DRAM
  static constexpr double kPressure = DualPages::kPressure;  // the gleaner runs at this pool fill

  using Thread = Worker;

  // NVM the image needs, and its snapshot area's pages (sizing.h).
  static uint64_t snapshot_pages(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    return foedus::snapshot_pages(tables, o);
  }
  static uint64_t nvm_bytes(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    return foedus::nvm_bytes(tables, o);
  }
  // (snapshot cache hits, snapshot page reads) of one thread: the cache hit rate.
  static std::pair<uint64_t, uint64_t> hit_counts(const Thread& th) {
    return {th.cache_hits, th.cache_hits + th.cache_misses};
  }

  Foedus(EngineEnv& env, const std::vector<TableInfo>& tables) : env_(env), nthreads_(env.opt.threads) {
    const EngineOptions& o = env.opt;
    if (tables.size() > kMaxStorages) throw std::invalid_argument("FOEDUS: too many tables");
    for (auto& ti : tables) {
      if (ti.id >= kMaxStorages) throw std::invalid_argument("FOEDUS: table id " + std::to_string(ti.id) + " too large");
      if (where_.size() <= ti.id) where_.resize(ti.id + 1, {false, ~0u}), infos_.resize(ti.id + 1);
      infos_[ti.id] = ti;
      if (!ti.dense) {
        where_[ti.id] = {true, uint32_t(ordered_.size())};
        ordered_.push_back(std::make_unique<TreeStorage>(ti, o.page_size));
        tsnap_.push_back(TreeSnapshot{ti.id, ordered_.back()->g, {}, {}, 0, {}});
        loads_.push_back(std::make_unique<LoadBuffer>());
        continue;
      }
      where_[ti.id] = {false, uint32_t(storages_.size())};
      auto s = std::make_unique<ArrayStorage>(ti, ArrayShape(Geometry(o.page_size, ti.schema.tuple_size(), ti.name), ti.capacity));
      trees_.push_back({ti.id, s->shape, {}});
      for (uint64_t n : s->shape.pages) trees_.back().ptrs.emplace_back(n, 0);
      storages_.push_back(std::move(s));
    }
    ps_ = o.page_size;
    // NVM: metadata, snapshot area, logs (as many as the image was made with).
    dev::Region meta = env.nvm.region("foedus.meta", (sizeof(MetaArea) + 4095) / 4096 * 4096, dev::RegionKind::Persistent);
    meta_ = reinterpret_cast<MetaArea*>(meta.base);
    nlogs_ = open_meta(*meta_, meta.existed, nthreads_, o.page_size);
    area_ = std::make_unique<SnapshotArea>(
        env.nvm.region("foedus.snapshot", snapshot_pages(tables, o) * ps_, dev::RegionKind::Persistent), ps_);
    std::vector<dev::Region> files;
    for (uint32_t i = 0; i < nlogs_; i++)
      files.push_back(env.nvm.region("foedus.log." + std::to_string(i), o.log_bytes, dev::RegionKind::Persistent));
    // DRAM: log buffers and private data, then volatile pages and snapshot cache (split_dram()).
    log_mem_ = static_cast<char*>(env.dram.alloc(kLogBufferBytes * nlogs_, "foedus.log_buffers"));
    env.dram.charge(kPrivateBytesPerThread * uint64_t(nthreads_), "private");
    env.dram.charge(uint64_t(nthreads_) * (Thread::kChunk + ps_), Thread::kCopies);  // allocated below
    const DramSplit split = split_dram(env.dram, trees_, ordered_, nthreads_, ps_, o.snapshot_cache);
    pool_ = std::make_unique<VolatilePool>(env.dram, split.index_pages, split.pool_pages, ps_);
    if (o.snapshot_cache) cache_ = std::make_unique<SnapshotCache>(env.dram, split.frames, ps_);
    for (uint32_t i = 0; i < nlogs_; i++)
      logs_.push_back(std::make_unique<WorkerLog>(log_mem_ + i * kLogBufferBytes, kLogBufferBytes));
    std::vector<WorkerLog*> wl;
    for (auto& l : logs_) wl.push_back(l.get());
    writer_ = std::make_unique<LogWriter>(meta_, std::move(files), wl, o.epoch_ms);
    threads_.resize(size_t(nthreads_));
    for (int i = 0; i < nthreads_; i++) {
      Thread& th = threads_[size_t(i)];
      th.log = logs_[size_t(i)].get();
      th.dram = &env.dram;
      th.charged = Thread::kChunk + ps_;  // charged above
      th.page.resize(ps_);
      th.grow(Thread::kChunk, false);
    }
    if (!meta.existed) {  // a fresh image: load() writes the initial snapshot (initial_snapshot.h)
      lay_out_leaves(trees_, *area_);
      g_epoch.store(1);
    }
    pages_ = DualPages{area_.get(), pool_.get(), cache_.get(), ps_, [this] { wake_gleaner(); }, &drop_passes_};
  }

  ~Foedus() {
    stop();
    for (auto& s : storages_)
      if (s->root) pool_->give(s->root);
    for (auto& t : ordered_) t->free_all(*pool_);
    env_.dram.free(log_mem_, kLogBufferBytes * nlogs_, "foedus.log_buffers");
    for (Thread& th : threads_) env_.dram.uncharge(th.charged, Thread::kCopies);
  }

  Thread& thread(int tid) { return threads_.at(size_t(tid)); }
  const TableInfo& table_info(uint32_t t) const { return infos_.at(t); }

  void load(Thread&, uint32_t table, uint64_t key, const char* image) {
    if (where_.at(table).tree)  // gathered, written sorted by after_load()
      return loads_[where_[table].index]->add(key, image, infos_[table].schema.tuple_size());
    load_array_record(trees_[where_[table].index], *area_, infos_[table].name, key, image);
  }

  // The initial snapshot: leaf headers, interior pages, metadata; then the volatile roots.
  void after_load() {
    write_loaded_snapshot(trees_, tsnap_, ordered_, loads_, *area_, ps_);
    write_snapshot_meta(1, 0, std::vector<uint64_t>(nlogs_, 0));
    make_roots();
  }

  void start() {
    writer_->start();
    gleaner_.start(std::chrono::milliseconds(env_.opt.gleaner_interval_ms), [this](bool due) {
      bool pressure = pool_->fill() > kPressure;
      if (!due && !pressure && !writer_->wants_gleaning()) return false;
      if (pressure) await_epoch_turn();
      run_gleaner(false);
      return true;
    });
  }
  void stop() {
    stop_gleaner();
    writer_->stop();
  }
  // Tests: the background threads die as with the power (no last log pass).
  void halt() {
    stop_gleaner();
    writer_->halt();
  }
  void stop_gleaner() { gleaner_.stop(); }

  // A transaction starts (or retries): wait while the gleaner installs pointers, then publish
  // the epoch it runs in (the log writer never declares it durable while it runs).
  void begin(Thread& th, bool) {
    // Refused a volatile page last time: wait (outside any transaction) for the gleaner's next
    // drop pass rather than abort again and again (bounded: the gleaner may have nothing to drop).
    if (th.refusal == AbortCause::DramSpace && gleaner_.running()) {
      auto t0 = std::chrono::steady_clock::now();
      auto until = t0 + std::chrono::milliseconds(2 * env_.opt.epoch_ms + 10);
      while (drop_passes_.load(std::memory_order_acquire) == th.drop_pass_seen && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      th.dram_waits++;
      th.dram_wait_ns += uint64_t(std::chrono::nanoseconds(std::chrono::steady_clock::now() - t0).count());
    }
    for (;;) {
      th.log->active_epoch.store(g_epoch.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
      if (!paused_.load(std::memory_order_seq_cst)) break;
      th.log->active_epoch.store(0, std::memory_order_seq_cst);
      while (paused_.load(std::memory_order_acquire)) std::this_thread::yield();
    }
    th.refusal = AbortCause::None;
    th.node_set.clear();
    th.scan_ptrs.clear();
    th.inserted.clear();
  }

  // Follow the dual pointers from the root: volatile pages while there are; a read that meets
  // a pointer with no volatile page continues in the snapshot world (and the CC watches that
  // pointer); a write installs volatile pages down to the leaf instead.
  bool lookup(Thread& th, uint32_t table, uint64_t key, RowRef& ref, bool for_write) {
    if (where_.at(table).tree) return tree_lookup(th, pages_, *ordered_[where_[table].index], key, ref, for_write);
    return array_lookup(th, pages_, *storages_[where_[table].index], key, ref, for_write);
  }

  // A read of a snapshot record becomes a write: install the volatile pages it needs and abort
  // this attempt (it installed under its own pointer set; the retry reads the volatile page).
  AbortCause upgrade(Thread& th, Access& a) {
    if (a.row.meta) return AbortCause::None;
    RowRef ref;
    return lookup(th, a.table, a.key, ref, true) ? AbortCause::Validation : th.refusal;
  }

  // An insert into an ordered tree (TxnManager::insert): the key's record, being inserted
  // (invisible: kTidAbsent | kTidInserting) until the commit. False: the key is present or being
  // inserted (or no DRAM page: th.refusal says so).
  bool insert(Thread& th, uint32_t table, uint64_t key, RowRef& ref) {
    return tree_insert(th, pages_, tree(table, "inserts"), key, ref, snapshot_epoch_.load(std::memory_order_acquire));
  }
  // The insert's transaction aborted: its record becomes a tombstone (wherever splits moved it).
  void undo_insert(Thread&, Access& a) { tree_undo_insert(tree(a.table, "moved records"), a); }
  // Before validation: an access to an ordered tree's record that a split moved follows it to
  // its new copy (same TID and image, so validation there is as good: an insert keeps its
  // record, a read still fails if the record changed since).
  void relocate(Thread&, Access* acc, size_t n) {
    for (size_t i = 0; i < n; i++)
      if (acc[i].row.meta && (static_cast<std::atomic<uint64_t>*>(acc[i].row.meta)->load(std::memory_order_acquire) & kTidMoved))
        tree_relocate(tree(acc[i].table, "moved records"), acc[i]);
  }
  // A record the CC observed absent (deleted, or being inserted by another transaction) since
  // the lookup found it: the access aborts.
  bool visible(const Access& a) const { return !(a.row.meta && (a.tid & kTidAbsent)); }

  // Keys of committed records of an ordered tree in [lo, hi], ascending (or descending), at
  // most `limit`; the leaves it covered go into the node set (a volatile leaf's version, which
  // an insert bumps; a snapshot leaf's parent version and dual pointer), and so do the words of
  // the absent records it passed over (an insert not yet committed, a tombstone), so an insert
  // committed in the range before the scan's commit aborts the scan's transaction.
  void scan_keys(Thread& th, uint32_t table, uint64_t lo, uint64_t hi, size_t limit, std::vector<uint64_t>& out,
                 bool reverse) {
    scan(&th, table, lo, hi, limit, out, reverse);
  }
  // The same without a transaction (checkers at quiescence).
  void scan_keys(uint32_t table, uint64_t lo, uint64_t hi, size_t limit, std::vector<uint64_t>& out, bool reverse) {
    scan(nullptr, table, lo, hi, limit, out, reverse);
  }

  // Pre-commit, after the CC's validation with the write set locked: the node set and the
  // scans' pointer set still hold (else a phantom may have appeared).
  bool validate(Thread& th) const { return validate_node_set(th); }

  // Before the CC validates, holding no lock: room in the worker's log buffer for the commit's
  // redo records (reserve_log() says why there).
  bool reserve(Thread& th, Access* acc, size_t n) { return reserve_log(th, *writer_, env_.opt.epoch_ms, acc, n); }
  // The commit's persistence: its redo records go to the worker's log buffer, with the commit
  // TID, while the write set is still locked. Durability comes with the epoch.
  uint64_t persist(Thread& th, Access* acc, size_t n) { return append_redo(th, acc, n); }
  void install(Thread&, Access& a) {
    if (a.type == AccessType::Delete) return;  // the CC's finish() marks the record absent
    dev::write(a.row.data, a.len);
    memcpy(a.row.data, a.local, a.len);
  }
  void committed(Thread&) {}
  void release(Thread& th, Access*, size_t) {
    th.log->active_epoch.store(0, std::memory_order_seq_cst);
    th.chunk = 0;
    th.used = 0;
  }

  // Acknowledgement: a commit is durable once its epoch is.
  uint64_t commit_token(const Thread& th) const { return th.commit_epoch; }
  std::pair<uint64_t, uint64_t> durable_point() const { return {writer_->durable_epoch(), writer_->durable_tsc()}; }
  void sync(Thread& th) { await_durable(th, *writer_); }

  // One gleaning (7.1-7.5), also for tests. False when no new epoch was durable.
  bool glean_now() { return run_gleaner(false); }

  RecoveryReport recover(int nthreads) {
    RecoveryReport rep;
    dev::read(meta_, sizeof *meta_);
    const SnapshotMeta* snap = MetaArea::newest(meta_->snapshot);
    const EpochMarker* mark = MetaArea::newest(meta_->marker, uint64_t(nlogs_));
    if (!snap) throw std::runtime_error("FOEDUS: the image holds no complete snapshot (power failed during the load?)");
    SnapshotMeta sm = *snap;
    uint64_t durable = mark ? mark->epoch : 0;
    std::vector<uint64_t> lsn(nlogs_);
    for (uint32_t i = 0; i < nlogs_; i++) lsn[i] = mark ? mark->lsn[i] : sm.gleaned[i];
    rep.lap("read_metadata");
    // The snapshot's page tables, the ordered trees' leaves, the free snapshot pages.
    const size_t nw = size_t(std::max(1, nthreads));
    read_snapshot(trees_, tsnap_, *area_, sm, ps_, nw, nthreads);
    snapshot_id_ = sm.id;
    snapshot_epoch_ = sm.epoch;
    rep.lap("read_snapshot_tree");
    // Truncate each log at the durable epoch: records past the marker's LSN, or of a later
    // epoch, never committed; the gleaner stops at them and the next snapshot skips them.
    std::vector<LogRange> ranges;
    for (uint32_t i = 0; i < nlogs_; i++)
      ranges.push_back({writer_->file(i), writer_->file_bytes(i), sm.gleaned[i], std::max(sm.gleaned[i], lsn[i]), true});
    rep.lap("truncate_logs");
    GleanResult r = glean(trees_, tsnap_, *area_, ranges, durable, snapshot_id_ + 1,
                          std::min(nthreads, env_.opt.gleaner_mappers > 1 ? env_.opt.gleaner_mappers : nthreads),
                          std::max(1, env_.opt.gleaner_reducers > 1 ? env_.opt.gleaner_reducers : nthreads), &env_.dram);
    rep.part("glean_map_logs", r.map_s, r.map_cpu_s);  // the gleaner's stages (gleaner.h), each on every thread
    rep.part("glean_reduce_leaves", r.reduce_s, r.reduce_cpu_s);
    rep.part("glean_write_interiors", r.interior_s, r.interior_cpu_s);
    rep.replayed = r.records;
    rep.counts = {{"log_pieces", r.pieces}, {"log_pieces_parsed_again", r.pieces_parsed_again}};
    note_torn(r, ranges);
    dev::crash_point("foedus.restart");
    std::vector<uint64_t> upto(nlogs_);
    for (uint32_t i = 0; i < nlogs_; i++) upto[i] = ranges[i].to;
    uint64_t epoch = std::max(durable, sm.epoch);
    write_snapshot_meta(snapshot_id_ + 1, epoch, upto);
    area_->release_retired(int(nw));
    writer_->reset(epoch, upto);
    g_epoch.store(epoch + 2);
    record(r, 0);
    rep.lap("write_snapshot");
    make_roots(int(nw));  // no volatile pages but the roots
    for (auto& s : storages_) rep.rows += s->shape.capacity;
    rep.rows += tree_rows(tsnap_, *area_, nw);
    rep.lap("install_roots");
    return rep;
  }

  // The current image of a tuple (checkers, at quiescence): volatile if installed, else the
  // snapshot page read directly in NVM. version = its TID.
  bool read_current(uint32_t table, uint64_t key, char* out, uint64_t& version) {
    if (where_.at(table).tree) return tree_read_current(pages_, *ordered_[where_[table].index], key, out, version);
    return array_read_current(pages_, *storages_[where_[table].index], key, out, version);
  }

  // Invariants at quiescence (check.h).
  nlohmann::json check() const {
    std::vector<std::string> torn;
    {
      std::lock_guard g(stats_mu_);
      torn = torn_;
    }
    return check_snapshots(trees_, tsnap_, ordered_, *area_, snapshot_epoch_.load(), unmatched_.load(), torn);
  }

  // For tests and stats: volatile pages in use, snapshot pages in use.
  uint64_t volatile_pages() const { return pool_->in_use(); }
  uint64_t snapshot_pages_in_use() const { return area_->in_use(); }
  uint64_t snapshot_epoch() const { return snapshot_epoch_; }
  uint64_t durable_epoch() const { return writer_->durable_epoch(); }

  // Counters of the measured phase start here (the driver calls it as the phase starts).
  void begin_measure() {
    std::array<uint64_t, 8> c = counts();
    std::lock_guard g(stats_mu_);
    measured_ = Totals{};
    counts0_ = c;
  }
  // Workers' counters summed (worker_counts()).
  std::array<uint64_t, 8> counts() const { return worker_counts(threads_); }

  // Counts since begin_measure() (the measured phase; since the start when it was not called),
  // but `gleaner` and `log_writer`, which are lifetime totals (`gleaner_measured`: the phase's).
  nlohmann::json stats() const {
    std::array<uint64_t, 8> c = counts();
    LogWriter::Stats ls = writer_->stats();
    std::lock_guard g(stats_mu_);
    for (size_t i = 0; i < c.size(); i++) c[i] -= counts0_[i];
    uint64_t vr = c[0], sr = c[1], hits = c[2], misses = c[3], inst = c[4], miss_bytes = c[5];
    return {{"page_size", ps_},
            {"snapshot_cache", snapshot_cache_stats(cache_.get(), hits, misses, miss_bytes)},
            // waits: transactions refused a volatile page that waited for the gleaner's next
            // drop pass; wait_s: the workers' time in those waits (the measured phase's).
            {"volatile_pages",
             {{"in_use", pool_->in_use()},
              {"capacity", pool_->capacity()},
              {"installed", inst},
              {"waits", c[6]},
              {"wait_s", double(c[7]) * 1e-9}}},
            {"snapshot_pages", {{"in_use", area_->in_use()}, {"capacity", area_->pages()}}},
            {"reads", {{"volatile", vr}, {"snapshot", sr}}},
            // advanced: epoch advances over the run's life; asked: those the gleaner asked for
            // under DRAM pressure rather than waiting for the --epoch-ms tick.
            {"epochs",
             {{"current", g_epoch.load()},
              {"durable", writer_->durable_epoch()},
              {"snapshot", snapshot_epoch_.load()},
              {"advanced", ls.advances},
              {"asked", ls.asked_advances}}},
            {"log_writer", log_writer_stats(ls)},
            {"gleaner", lifetime_.json()},
            {"gleaner_measured", measured_.json()},
            {"ordered_trees", tree_stats(ordered_, tree_sizes_)},
            {"gleaner_mappers", env_.opt.gleaner_mappers},
            {"gleaner_reducers", env_.opt.gleaner_reducers}};
  }

 private:
  struct Where {
    bool tree;       // an ordered tree, else an array storage
    uint32_t index;  // in ordered_ / tsnap_, or in storages_ / trees_
  };
  using Totals = GleanerTotals;

  void note_torn(const GleanResult& r, const std::vector<LogRange>& ranges) {
    std::vector<std::string> torn = torn_logs(r, ranges);
    std::lock_guard g(stats_mu_);
    torn_.insert(torn_.end(), torn.begin(), torn.end());
  }

  TreeStorage& tree(uint32_t table, const char* what) {
    if (!where_.at(table).tree)
      throw std::logic_error("FOEDUS: table " + infos_[table].name + " is an array storage (dense keys): no " + what);
    return *ordered_[where_[table].index];
  }

  void scan(Thread* th, uint32_t table, uint64_t lo, uint64_t hi, size_t limit, std::vector<uint64_t>& out, bool reverse) {
    out.clear();
    if (lo > hi || limit == 0) return;
    tree_scan(th, pages_, tree(table, "ordered scans"), lo, hi, limit, out, reverse);
  }

  void make_roots(int nthreads = 1) {
    for (size_t i = 0; i < storages_.size(); i++) {
      ArrayStorage& s = *storages_[i];
      if (s.root) pool_->give(s.root);  // (a restart after tests that ran)
      s.root = pool_->take();
      const Page* src = area_->page(snapshot_index(trees_[i].ptrs.back()[0]));
      dev::read(src, ps_);
      memcpy(static_cast<void*>(s.root), src, ps_);
    }
    for (size_t i = 0; i < ordered_.size(); i++) {  // the interior, volatile, over snapshot leaves
      ordered_[i]->build(tsnap_[i].leaves, *pool_, nthreads);
    }
  }

  void write_snapshot_meta(uint64_t id, uint64_t epoch, const std::vector<uint64_t>& gleaned) {
    foedus::write_snapshot_meta(*meta_, id, epoch, gleaned, trees_, tsnap_, area_->high_water());
    snapshot_id_ = id;
    snapshot_epoch_ = epoch;
  }

  void wake_gleaner() { gleaner_.wake(); }

  // DRAM pressure: the pages written in the running epoch can be dropped only once a snapshot
  // covers it, so ask the log writer to advance the epoch now and wait until the running one is
  // durable (bounded: a transaction still running in it holds it back), rather than for the
  // --epoch-ms tick (with 20 ms epochs, two ticks per drop pass throttled every worker).
  void await_epoch_turn() {
    const uint64_t e = g_epoch.load(std::memory_order_seq_cst);
    if (writer_->durable_epoch() >= e || !writer_->running()) return;
    writer_->advance_soon();
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2 * env_.opt.epoch_ms + 10);
    while (writer_->durable_epoch() < e && gleaner_.running() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }

  bool run_gleaner(bool) {
    std::lock_guard g(glean_mu_);
    auto t0 = std::chrono::steady_clock::now();
    uint64_t epoch = writer_->durable_epoch();  // first: the marker's LSNs below cover it
    if (epoch <= snapshot_epoch_) return false;
    std::vector<LogRange> ranges;
    for (uint32_t i = 0; i < nlogs_; i++)
      ranges.push_back({writer_->file(i), writer_->file_bytes(i), writer_->gleaned(i), writer_->marker_lsn(i)});
    for (size_t i = 0; i < ordered_.size(); i++) tsnap_[i].bounds = ordered_[i]->leaf_bounds();
    GleanResult r = glean(trees_, tsnap_, *area_, ranges, epoch, snapshot_id_ + 1, env_.opt.gleaner_mappers,
                          env_.opt.gleaner_reducers, &env_.dram);
    // glean() counted its own traffic (this thread's interior pages included): from here on,
    // the metadata and the install pass only.
    dev::Counters c0 = dev::my_counters();
    note_torn(r, ranges);
    dev::crash_point("foedus.gleaner_before_metadata");
    write_snapshot_meta(snapshot_id_ + 1, epoch, r.stop);
    dev::crash_point("foedus.gleaner_after_metadata");
    for (uint32_t i = 0; i < nlogs_; i++) writer_->set_gleaned(i, r.stop[i]);
    // 7.5: install the new snapshot pointers and drop volatile pages not modified since the
    // snapshot's epoch, with transactions paused (an in-memory pass of milliseconds).
    auto t1 = std::chrono::steady_clock::now();
    paused_.store(true, std::memory_order_seq_cst);
    for (auto& l : logs_)
      while (l->active_epoch.load(std::memory_order_seq_cst)) std::this_thread::yield();
    auto t2 = std::chrono::steady_clock::now();
    uint64_t dropped = 0;
    for (size_t i = 0; i < storages_.size(); i++)
      install_walk(trees_[i], *pool_, storages_[i]->root, trees_[i].shape.root_level(), 0, epoch, dropped);
    for (size_t i = 0; i < ordered_.size(); i++) tree_install_walk(*ordered_[i], tsnap_[i], *pool_, epoch, dropped, unmatched_);
    paused_.store(false, std::memory_order_seq_cst);
    drop_passes_.fetch_add(1, std::memory_order_release);
    area_->release_retired(std::max(1, env_.opt.gleaner_reducers));
    auto t3 = std::chrono::steady_clock::now();
    r.device += dev::my_counters() - c0;
    Totals add;
    add.dropped = dropped;
    add.install_s = std::chrono::duration<double>(t3 - t1).count();
    add.pause_s = std::chrono::duration<double>(t3 - t2).count();
    add.time_s = std::chrono::duration<double>(t3 - t0).count();
    record(r, dropped, &add);
    return true;
  }

  void record(const GleanResult& r, uint64_t, const Totals* extra = nullptr) {
    std::lock_guard g(stats_mu_);
    tree_sizes_.clear();
    for (auto& t : tsnap_) tree_sizes_.push_back({t.leaves.size(), t.interior.size()});
    for (Totals* t : {&lifetime_, &measured_}) t->add(r, extra);
  }

  EngineEnv& env_;
  int nthreads_;
  uint32_t ps_ = 4096;
  uint32_t nlogs_ = 0;
  MetaArea* meta_ = nullptr;
  std::vector<std::unique_ptr<ArrayStorage>> storages_;
  std::vector<SnapshotTree> trees_;  // the current snapshot's page tables (gleaner's)
  std::vector<Where> where_;         // by table id
  std::vector<TableInfo> infos_;     // by table id
  std::vector<std::unique_ptr<TreeStorage>> ordered_;  // the ordered trees' volatile side
  std::vector<TreeSnapshot> tsnap_;  // and their snapshots (gleaner's)
  std::vector<std::unique_ptr<LoadBuffer>> loads_;
  std::atomic<uint64_t> unmatched_{0};  // snapshot-only leaf pointers no new snapshot leaf matched
  std::unique_ptr<SnapshotArea> area_;
  std::unique_ptr<VolatilePool> pool_;
  std::unique_ptr<SnapshotCache> cache_;
  DualPages pages_;  // reads and installs through the above
  char* log_mem_ = nullptr;
  std::vector<std::unique_ptr<WorkerLog>> logs_;
  std::unique_ptr<LogWriter> writer_;
  std::deque<Thread> threads_;  // (atomics inside: never relocated)
  std::atomic<uint64_t> snapshot_id_{1}, snapshot_epoch_{0};  // the gleaner writes, stats() reads
  std::atomic<bool> paused_{false};
  std::atomic<uint64_t> drop_passes_{0};
  GleanerThread gleaner_;
  std::mutex glean_mu_;
  mutable std::mutex stats_mu_;
  Totals lifetime_, measured_;
  std::vector<std::pair<uint64_t, uint64_t>> tree_sizes_;
  std::vector<std::string> torn_;  // torn logs found by gleanings (stats_mu_)  // per ordered tree: snapshot leaves, interior pages
  std::array<uint64_t, 8> counts0_{};
};

}  // namespace nvt::foedus