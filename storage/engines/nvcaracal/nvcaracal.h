// NVCaracal (papers/nvcaracal-eurosys23.txt sections 3-5): a deterministic engine on NVM.
// Transactions run in epochs (system/epoch_driver.h drives the phases of Algorithm 1); this
// class owns where rows live and what each phase does to them:
//  - DRAM: per table a hash index key -> row entry {persistent row, this epoch's version array,
//    cached version}; per core a transient pool (version arrays, intermediate values, reset
//    each epoch) and the cache pool of persistent-row values with epoch-based eviction.
//  - NVM: persistent rows (persistent_row.h) in per-core row pools, larger values in per-core
//    value pools (row_pools.h, offsets durable by epoch parity), per-core input logs
//    (input_log.h), the epoch commit word (epoch.h).
// Only a row's final write of an epoch reaches NVM; every earlier one stays in the transient
// pool. Supports CC_ALG=caracal only (the method is this protocol).
// What each phase does is in a header of its own, included at the end: input logging and the
// commit (epoch_commit.h), the initialization phase (initialization_phase.h), the execution
// phase (execution_phase.h), persisting final writes (final_write.h), evicting cached versions
// (cache_eviction.h), persistent row GC (garbage_collection.h), failure recovery
// (failure_recovery.h), checkers (check.h) and counters (stats.h).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "concurrency_control/caracal.h"
#include "storage/device/device.h"
#include "storage/device/power_fail.h"
#include "storage/engine.h"
#include "storage/engines/nvcaracal/cache_pool.h"
#include "storage/engines/nvcaracal/epoch.h"
#include "storage/engines/nvcaracal/input_log.h"
#include "storage/engines/nvcaracal/ledger_entry.h"
#include "storage/engines/nvcaracal/persistent_row.h"
#include "storage/engines/nvcaracal/row_pools.h"
#include "storage/engines/nvcaracal/transient_pool.h"
#include "storage/engines/nvcaracal/version_array.h"
#include "storage/hash_index.h"
#include "storage/parallel.h"

namespace nvt::nvc {

template <class CC>
class NvCaracal {
 public:
  static constexpr const char* name = "nvcaracal";
  template <class C>
  static constexpr bool supports = needs_caracal<C>;
  static constexpr bool kDeterministic = true;
  static constexpr uint64_t kRefCoreShift = 40;
  static constexpr uint64_t kRecoveryBlocks = 1 << 16;  // row blocks one recovery thread scans at a time

  // A row's DRAM entry: reached through the index.
  struct Row {
    char* prow = nullptr;                 // persistent row (NVM)
    VersionArray* va = nullptr;           // this epoch's version array, valid when va_epoch == epoch
    uint64_t va_epoch = 0;
    std::atomic<char*> cached{nullptr};   // cached version (cache pool)
    std::atomic<uint64_t> cache_epoch{0}; // last epoch it was read or written
    std::atomic<bool> listed{false};      // on an eviction list
    std::atomic_flag lock = ATOMIC_FLAG_INIT;  // the append step only
    uint32_t table = 0, len = 0;
    uint64_t key = 0;
    uint64_t born = 0;  // the epoch whose insert step created it (0: loaded or recovered)
  };

  // Per core: its pools and lists. Touched by its own thread only, except by the epoch driver
  // between barriers.
  struct Thread {
    int core = 0;
    std::unique_ptr<TransientPool> transient;
    std::vector<Row*> created;          // version arrays this core created in the append step
    std::vector<Row*> gc_now, gc_next;  // rows for major GC in this / the next epoch
    std::vector<std::vector<Row*>> evict_lists;  // by epoch % (K + 2)
    std::vector<char*> retired;         // cached versions replaced this epoch, freed at the next
    std::vector<Row*> unindex;          // rows inserted and deleted in one epoch: out of the index at the next
    char* heap = nullptr;               // all-nvmm, hybrid: this epoch's versions in NVM
    uint64_t heap_size = 0, heap_used = 0;
    // Counters (lifetime; the driver takes differences over the measured epochs).
    uint64_t versions_written = 0, final_writes = 0, ignored = 0, waits = 0;
    uint64_t minor_gc = 0, major_gc = 0, evicted = 0, cache_full = 0, cache_hits = 0, nvm_reads = 0;
    uint64_t accesses = 0;
  };

  NvCaracal(EngineEnv& env, std::vector<TableInfo> tables)
      : env_(env), tables_(std::move(tables)), threads_(env.opt.threads),
        geo_{env.opt.nvc_row_bytes}, design_(parse_design(env.opt.nvc_design)) {
    const EngineOptions& o = env.opt;
    if (o.nvc_epoch_txns == 0) throw std::invalid_argument("--epoch-txns must be at least 1");
    if (geo_.row_bytes < kMinRowBytes || geo_.row_bytes % 64)
      throw std::invalid_argument("--persistent-row-bytes " + std::to_string(geo_.row_bytes) +
                                  " cannot hold two versions: it needs the 64 B header of both versions and an inline heap "
                                  "of two halves, at least " + std::to_string(kMinRowBytes) + " B, a multiple of 64");
    minor_gc_ = o.nvc_minor_gc;
    cached_versions_ = o.nvc_cached_versions && design_ != Design::AllNvmm;
    // Figure 7's all-NVMM and hybrid and Figure 10's no-logging and all-DRAM log no inputs.
    input_log_ = o.nvc_input_log && design_ == Design::NvCaracal;
    persist_ = design_ != Design::AllDram;
    cache_epochs_ = o.nvc_cache_epochs;
    block_bytes_ = 64;
    uint64_t rows = 0, ext_rows = 0;
    for (auto& t : tables_) {
      block_bytes_ = std::max<uint64_t>(block_bytes_, (t.schema.tuple_size() + 63) / 64 * 64);
      rows += t.capacity;
      if (!geo_.fits_inline(t.schema.tuple_size())) ext_rows += t.capacity;
    }
    // Index, row entries, transient pools: the DRAM the design needs (overhead); the cache pool
    // holds data, within database / P. An epoch whose transient pool cannot fit is refused
    // before anything is taken.
    uint64_t per_core = transient_bytes_per_core(o), fixed = 0;
    for (auto& t : tables_) fixed += HashIndex::bytes_for(t.capacity) + t.capacity * sizeof(Row);
    if (fixed + per_core * uint64_t(threads_) > env.dram.left())
      throw std::invalid_argument("--epoch-txns " + std::to_string(o.nvc_epoch_txns) + " needs " +
                                  std::to_string(per_core * uint64_t(threads_) >> 20) + " MiB of transient pool beside " +
                                  std::to_string(fixed >> 20) + " MiB of index and row entries; the DRAM budget has " +
                                  std::to_string(env.dram.left() >> 20) + " MiB left (lower --epoch-txns or raise --dram-size)");
    try {
      init(env, per_core, rows, ext_rows);
    } catch (...) {
      free_rows();
      throw;
    }
  }
  ~NvCaracal() { free_rows(); }
  dev::DramBudget& dram() { return env_.dram; }

 private:
  void free_rows() {
    for (auto& [r, b] : rows_) env_.dram.free(r, b, "nvcaracal row entries");
    rows_.clear();
  }
  void init(EngineEnv& env, uint64_t per_core, uint64_t rows, uint64_t ext_rows) {
    const EngineOptions& o = env.opt;
    for (auto& t : tables_) {
      index_.push_back(std::make_unique<HashIndex>(t.capacity, env.dram, "nvcaracal index " + t.name));
      uint64_t bytes = t.capacity * sizeof(Row);
      Row* r = static_cast<Row*>(env.dram.alloc(bytes, "nvcaracal row entries"));
      for (uint64_t i = 0; i < t.capacity; i++) new (&r[i]) Row();
      rows_.push_back({r, bytes});
      slots_.push_back(std::make_unique<std::atomic<uint64_t>>(0));
    }
    th_.resize(size_t(threads_));
    for (int t = 0; t < threads_; t++) {
      th_[size_t(t)].core = t;
      th_[size_t(t)].transient = std::make_unique<TransientPool>(env.dram, per_core, "nvcaracal transient pool (version arrays, intermediate values)");
      th_[size_t(t)].evict_lists.resize(cache_epochs_ + 2);
    }
    // Cached versions are data: database / P at most (data_left()); a tenth of what the budget
    // has left stays for the lists and buffers that grow while epochs run.
    cache_ = std::make_unique<CachePool>(env.dram, block_bytes_,
                                         cached_versions_ ? std::min(env.dram.data_left(), env.dram.left() * 9 / 10) : 0, threads_);
    lists_ = std::make_unique<LedgerEntry>(env.dram, "nvcaracal per-core lists (GC, eviction, cache free lists)");
    update_ledger();
    // NVM.
    control_ = reinterpret_cast<Control*>(env.nvm.region("nvcaracal.control", sizeof(Control), dev::RegionKind::Persistent).base);
    uint64_t row_blocks = rows_per_core(rows), val_blocks = values_per_core(ext_rows);
    row_pool_.resize(size_t(threads_));
    val_pool_.resize(size_t(threads_));
    log_.resize(size_t(threads_));
    for (int t = 0; t < threads_; t++) {
      std::string s = std::to_string(t);
      auto rr = env.nvm.region("nvcaracal.rows." + s, BlockPool::bytes_for(row_blocks, geo_.row_bytes), dev::RegionKind::Persistent);
      row_pool_[size_t(t)].attach(rr.base, row_blocks, geo_.row_bytes, uint32_t(t), "persistent row pool of core " + s);
      if (val_blocks) {
        auto vr = env.nvm.region("nvcaracal.values." + s, BlockPool::bytes_for(val_blocks, block_bytes_), dev::RegionKind::Persistent);
        val_pool_[size_t(t)].attach(vr.base, val_blocks, block_bytes_, uint32_t(t), "persistent value pool of core " + s);
      }
      if (design_ == Design::AllNvmm || design_ == Design::Hybrid) {
        auto hr = env.nvm.region("nvcaracal.versions." + s, version_heap_bytes(o),
                                 design_ == Design::Hybrid ? dev::RegionKind::Persistent : dev::RegionKind::Volatile);
        th_[size_t(t)].heap = hr.base;
        th_[size_t(t)].heap_size = hr.size;
      }
      uint64_t words = log_words_per_core(o);
      auto lr = env.nvm.region("nvcaracal.log." + s, InputLog::bytes_for(words), dev::RegionKind::Persistent);
      log_[size_t(t)].attach(lr.base, words);
    }
  }

 public:

  // Sizes, for the driver's image size and tests.
  static uint64_t transient_bytes_per_core(const EngineOptions& o) {
    // all-nvmm keeps every version and version array in its NVM heap: no transient pool.
    if (parse_design(o.nvc_design) == Design::AllNvmm) return 64 << 10;
    uint64_t txns = (o.nvc_epoch_txns + uint64_t(o.threads) - 1) / uint64_t(o.threads);
    // Per transaction: its values and the initial versions' copies, and per declared write the
    // version entry twice over (arrays grow by doubling) and an array header; plus 1 MiB.
    uint64_t per_txn = 2 * txn_value_bytes(o) + o.nvc_txn_writes * (4 * sizeof(Version) + 64);
    return txns * per_txn + (1ull << 20);
  }
  static uint64_t txn_value_bytes(const EngineOptions& o) {
    return o.nvc_txn_value_bytes ? o.nvc_txn_value_bytes : o.nvc_txn_writes * ((o.nvc_write_value_bytes + 63) / 64 * 64);
  }
  // DRAM beside the P share (driver.h's side_dram_bytes): the row entries. The transient pool
  // is not: it is what the budget must hold for an epoch (--epoch-txns), refused if it cannot.
  static uint64_t metadata_bytes(const std::vector<TableInfo>& tables, const EngineOptions&) {
    uint64_t b = 0;
    for (auto& t : tables) b += t.capacity * sizeof(Row);
    return b;
  }
  static uint64_t rows_per_core(uint64_t rows, int threads) { return rows / uint64_t(threads) + rows / 8 / uint64_t(threads) + 1024; }
  uint64_t rows_per_core(uint64_t rows) const { return rows_per_core(rows, threads_); }
  static uint64_t values_per_core(uint64_t ext_rows, int threads) {
    return ext_rows ? (5 * ext_rows / 2) / uint64_t(threads) + 4096 : 0;
  }
  uint64_t values_per_core(uint64_t ext_rows) const { return values_per_core(ext_rows, threads_); }
  // The NVM version heap of the all-nvmm and hybrid designs: every version of a core's epoch;
  // all-nvmm's version arrays too (Figure 7: values and version arrays in NVMM).
  static uint64_t version_heap_bytes(const EngineOptions& o) {
    uint64_t txns = (o.nvc_epoch_txns + uint64_t(o.threads) - 1) / uint64_t(o.threads);
    uint64_t arrays = parse_design(o.nvc_design) == Design::AllNvmm ? o.nvc_txn_writes * (4 * sizeof(Version) + 64) : 0;
    return txns * (txn_value_bytes(o) + arrays) + (1ull << 20);
  }
  static uint64_t log_words_per_core(const EngineOptions& o) {
    return ((o.nvc_epoch_txns + uint64_t(o.threads) - 1) / uint64_t(o.threads)) * (2 + o.nvc_txn_input_words) + 8;
  }
  static uint64_t nvm_bytes(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    uint64_t rows = 0, ext = 0, block = 64;
    RowGeometry g{o.nvc_row_bytes};
    for (auto& t : tables) {
      rows += t.capacity;
      block = std::max<uint64_t>(block, (t.schema.tuple_size() + 63) / 64 * 64);
      if (!g.fits_inline(t.schema.tuple_size())) ext += t.capacity;
    }
    constexpr uint64_t kAlign = 2ull << 20;  // regions start at 2 MiB boundaries (nvm_image.cpp)
    auto up = [](uint64_t b) { return (b + kAlign - 1) / kAlign * kAlign; };
    uint64_t per = up(BlockPool::bytes_for(rows_per_core(rows, o.threads), o.nvc_row_bytes)) +
                   up(InputLog::bytes_for(log_words_per_core(o)));
    uint64_t v = values_per_core(ext, o.threads);
    if (v) per += up(BlockPool::bytes_for(v, block));
    Design d = parse_design(o.nvc_design);
    if (d == Design::AllNvmm || d == Design::Hybrid) per += up(version_heap_bytes(o));
    return per * uint64_t(o.threads) + kAlign;
  }

  Thread& thread(int t) { return th_[size_t(t)]; }
  BlockPool& row_pool(int core) { return row_pool_[size_t(core)]; }  // tests: a corrupted free list
  const TableInfo& table_info(uint32_t t) const { return tables_[t]; }
  int threads() const { return threads_; }
  bool input_logging() const { return input_log_; }
  bool recoverable() const { return input_log_ && persist_; }
  // Whether every update reaches NVM (hybrid persists each, all-nvmm writes each in NVM): no
  // update stays transient.
  bool updates_reach_nvm() const { return design_ == Design::Hybrid || design_ == Design::AllNvmm; }
  uint64_t epoch() const { return epoch_; }
  Design design() const { return design_; }

  // ---- Load: each row to its core's row pool, persisted, version = the load (epoch 0).
  void load(Thread& th, uint32_t table, uint64_t key, const char* img) {
    uint32_t len = tables_[table].schema.tuple_size();
    uint64_t ref = row_pool_[size_t(th.core)].alloc();
    char* prow = row_addr(ref);
    RowHeader h{};
    h.sid[0] = kLoadSid;
    h.ref[0] = place_value(th, len, 0, true);
    h.key = key;
    h.table = table;
    h.len = len;
    h.live = kLive;
    memcpy(value_addr(prow, h.ref[0]), img, len);
    memcpy(prow, &h, sizeof h);
    add_row(table, key, prow, len);
  }
  // Epoch 0 committed: the loaded rows and values flushed and fenced by this thread (the loader
  // threads have ended; a fence orders only its own thread's flushes), the pools' state after
  // the load in the even slot, then the epoch.
  void after_load() {
    for (int t = 0; t < threads_; t++) {
      row_pool_[size_t(t)].flush_used();
      if (val_pool_[size_t(t)].capacity()) val_pool_[size_t(t)].flush_used();
    }
    dev::fence();
    for (int t = 0; t < threads_; t++) {
      row_pool_[size_t(t)].checkpoint(0);
      if (val_pool_[size_t(t)].capacity()) val_pool_[size_t(t)].checkpoint(0);
    }
    dev::fence();
    store_control(control_->logged, 0);
    store_control(control_->committed, 0);
    dev::fence();
  }
  void start() {}
  void stop() {}

  // ---- Algorithm 1, per core (the driver puts barriers between the steps).
  void set_epoch(uint64_t e) { epoch_ = e; }

  void log_inputs(Thread& th, const std::vector<uint64_t>& entries, uint64_t count);
  void mark_logged();

  void init_step(Thread& th);

  Row* insert(Thread& th, Sid sid, uint32_t table, uint64_t key);
  bool inserted_now(const Row& r) const { return r.born == epoch_ && r.born; }

  Row* append(Thread& th, Sid sid, uint32_t table, uint64_t key);
  void sort_step(Thread& th);

  const char* read(Thread& th, Sid sid, uint32_t table, uint64_t key);
  const char* read_row(Thread& th, Sid sid, Row& r);

  // A declared write: the writer's entry in the version array.
  uint32_t entry_of(Row& r, Sid sid) const {
    if (r.va_epoch != epoch_ || !r.va) throw std::logic_error("write to a row whose write set was not declared");
    uint32_t i = r.va->index_of(sid);
    if (i >= r.va->n || r.va->v[i].sid != sid) throw std::logic_error("write to a row whose write set was not declared");
    return i;
  }
  char* new_value(Thread& th, uint32_t len);

  void publish(Thread& th, Row& r, uint32_t i, const char* value);
  void finalize(Thread& th, Row& r, uint32_t i, const char* value);
  void ignore(Thread& th, Row& r, uint32_t i);

  void commit_core(Thread& th);
  void commit_epoch();
  void update_ledger();

  // ---- Recovery in a fresh process (section 4.3): pools back to the last committed epoch,
  // rows scanned to rebuild the index, the crashed epoch's versions reverted. The driver then
  // replays the crashed epoch from the input logs (when it was logged).
  struct Recovered {
    uint64_t committed = 0, logged = 0;
    uint64_t rows = 0, reverted = 0;
  };
  Recovered recover_state(int threads, RecoveryReport& rep);
  // The logged inputs of `epoch`, per core's log (empty when not logged).
  bool read_log(int core, uint64_t epoch, std::vector<uint64_t>& out) const { return log_[size_t(core)].read(epoch, out); }

  // ---- Checkers and stats (check.h, stats.h).
  bool read_current(uint32_t table, uint64_t key, char* out, uint64_t& version);
  template <class F> void for_each_row(uint32_t table, F&& f);
  uint64_t state_checksum();
  nlohmann::json check();

  struct Totals {
    uint64_t versions_written = 0, final_writes = 0, ignored = 0, waits = 0, minor_gc = 0, major_gc = 0,
             evicted = 0, cache_full = 0, cache_hits = 0, nvm_reads = 0, accesses = 0;
    Totals operator-(const Totals& o) const {
      return {versions_written - o.versions_written, final_writes - o.final_writes, ignored - o.ignored, waits - o.waits,
              minor_gc - o.minor_gc, major_gc - o.major_gc, evicted - o.evicted, cache_full - o.cache_full,
              cache_hits - o.cache_hits, nvm_reads - o.nvm_reads, accesses - o.accesses};
    }
  };
  Totals totals() const;
  nlohmann::json pool_bytes() const;
  nlohmann::json stats() const { return {{"pool_bytes", pool_bytes()}}; }
  nlohmann::json nvm_breakdown() const;
  static std::pair<uint64_t, uint64_t> hit_counts(const Thread& t) { return {t.cache_hits, t.accesses}; }

  Row* find(uint32_t table, uint64_t key) const {
    uint64_t v = index_[table]->lookup(key);
    if (v == HashIndex::kNoValue || v == HashIndex::kRemoved) return nullptr;
    return &rows_[table].first[v - 1];
  }

 private:
  // The global reference of a persistent row (its core's pool id << 40 | index).
  uint64_t row_ref(const char* prow) const {
    for (size_t t = 0; t < row_pool_.size(); t++) {
      const BlockPool& p = row_pool_[t];
      if (prow >= p.block(0) && prow < p.block(p.capacity()))
        return uint64_t(t) << kRefCoreShift | uint64_t(prow - p.block(0)) / geo_.row_bytes;
    }
    throw std::logic_error("a persistent row outside every row pool");
  }
  char* row_addr(uint64_t ref) const { return row_pool_[ref >> kRefCoreShift].block(ref & ((1ull << kRefCoreShift) - 1)); }
  char* value_addr(char* prow, uint64_t ref) const {
    if (is_inline(ref)) return prow + (ref & ~kInline);
    uint64_t b = ref - 1;
    return val_pool_[b >> kRefCoreShift].block(b & ((1ull << kRefCoreShift) - 1));
  }
  uint64_t place_value(Thread& th, uint32_t len, uint64_t other, bool first);
  void write_value(char* prow, uint64_t ref, const char* img, uint32_t len);
  // The persistent rows' traffic: flushed NVM, except in all-dram, whose rows are DRAM (no
  // flush, no fence: its stores and reads count as DRAM traffic; the image only holds them).
  void row_flush(const void* p, size_t len) {
    if (persist_) dev::flush(p, len);
    else dram_touch(p, len, true);
  }
  void row_read(const void* p, size_t len) {
    if (persist_) dev::read(p, len);
    else dram_touch(p, len, false);
  }
  static void dram_touch([[maybe_unused]] const void* p, [[maybe_unused]] size_t len, [[maybe_unused]] bool is_write) {
#if DEVICE_MODEL
    dev::touch_dram(dev::my_counters(), p, len, is_write);
#endif
  }

  Row* add_row(uint32_t table, uint64_t key, char* prow, uint32_t len) {
    uint64_t slot = slots_[table]->fetch_add(1);
    if (slot >= tables_[table].capacity) throw std::runtime_error("table " + tables_[table].name + " is full (" + std::to_string(tables_[table].capacity) +
                               " rows; TPC-C: raise --tpcc-new-orders)");
    return place_row(table, key, prow, len, slot);
  }
  // The row in `slot` of its table's row table (taken by the caller), indexed.
  Row* place_row(uint32_t table, uint64_t key, char* prow, uint32_t len, uint64_t slot) {
    Row* r = &rows_[table].first[slot];
    r->prow = prow;
    r->table = table;
    r->key = key;
    r->len = len;
    if (!index_[table]->insert(key, slot + 1)) throw std::runtime_error("duplicate key " + std::to_string(key) + " in " + tables_[table].name);
    return r;
  }

  char* heap_alloc(Thread& th, uint32_t len);

  VersionArray* new_array(Thread& th, uint32_t cap);

  const char* initial_value(Thread& th, Row& r);
  const char* committed_value(Thread& th, Row& r);
  const char* read_committed(Thread& th, Row& r);
  void list_for_eviction(Thread& th, Row& r);

  void write_final(Thread& th, Row& r, Sid sid, const char* value);

  void drop_inserted(Thread& th, Row& r, bool unindex = true);

  void major_gc(Thread& th);

  void evict_cache(Thread& th);

  EngineEnv& env_;
  std::vector<TableInfo> tables_;
  int threads_;
  RowGeometry geo_;
  Design design_;
  bool minor_gc_ = true, cached_versions_ = true, input_log_ = true;
  bool persist_ = true;  // false: all-dram (no flush, no fence, rows counted as DRAM)
  uint64_t cache_epochs_ = 20;
  uint64_t block_bytes_ = 64;
  std::vector<std::unique_ptr<HashIndex>> index_;
  std::vector<std::pair<Row*, uint64_t>> rows_;
  std::vector<std::unique_ptr<std::atomic<uint64_t>>> slots_;
  std::vector<Thread> th_;
  std::unique_ptr<CachePool> cache_;
  std::unique_ptr<LedgerEntry> lists_;
  Control* control_ = nullptr;
  std::vector<BlockPool> row_pool_, val_pool_;
  std::vector<InputLog> log_;
  std::unordered_set<uint64_t> recovered_free_;
  uint64_t epoch_ = 0;
  uint64_t epochs_committed_ = 0;
};

}  // namespace nvt::nvc

// Each concept of the paper in its own header (listed in the order of an epoch): they define
// this class's member functions, because every phase reads and writes most of its state (the
// index, the row entries, the per-core pools, the cache pool, the epoch and the design's flags),
// which free functions would each have to be handed whole. Included here, after the class.
#include "storage/engines/nvcaracal/epoch_commit.h"
#include "storage/engines/nvcaracal/initialization_phase.h"
#include "storage/engines/nvcaracal/execution_phase.h"
#include "storage/engines/nvcaracal/final_write.h"
#include "storage/engines/nvcaracal/cache_eviction.h"
#include "storage/engines/nvcaracal/garbage_collection.h"
#include "storage/engines/nvcaracal/failure_recovery.h"
#include "storage/engines/nvcaracal/check.h"
#include "storage/engines/nvcaracal/stats.h"
