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

  // Input logging: this core's inputs, fenced; then (one core) the epoch marked logged.
  void log_inputs(Thread& th, const std::vector<uint64_t>& entries, uint64_t count) {
    if (!input_log_) return;
    log_[size_t(th.core)].write(epoch_, entries, count);
    dev::fence();
  }
  void mark_logged() {
    if (!input_log_) return;
    store_control(control_->logged, epoch_);
    dev::fence();
    dev::crash_point("nvcaracal.logged");
  }

  // Initialization: transient pool reset, replaced cached versions freed, major GC, eviction.
  void init_step(Thread& th) {
    th.transient->reset();
    th.heap_used = 0;
    th.created.clear();
    for (char* p : th.retired) cache_->free(th.core, p);
    th.retired.clear();
    for (Row* r : th.unindex) index_[r->table]->remove(r->key);
    th.unindex.clear();
    major_gc(th);
    evict_cache(th);
    // From here (the insert step on) the pools may hand out the blocks freed up to now: those
    // of committed epochs and this epoch's major GC, durable already.
    if (val_pool_[size_t(th.core)].capacity()) val_pool_[size_t(th.core)].begin_execution();
    row_pool_[size_t(th.core)].begin_execution();
  }

  // Insert step (section 3.1.2): a new row for serial id `sid`, in this core's row pool, with a
  // version array {absent, PENDING}. Nothing reaches NVM until the row's final write (section
  // 4: no transient data or cached version for it): a crash before the epoch commits leaves
  // its block past the restored bump offset, or on the restored free list.
  Row* insert(Thread& th, Sid sid, uint32_t table, uint64_t key) {
    if (find(table, key)) throw std::runtime_error("insert of key " + std::to_string(key) + " already in " + tables_[table].name);
    uint64_t ref = row_pool_[size_t(th.core)].alloc();
    Row* r = add_row(table, key, row_addr(ref), tables_[table].schema.tuple_size());
    r->born = epoch_;
    VersionArray* va = new_array(th, 4);
    va->n = 2;
    va->v[0].sid = 0;
    va->v[0].value = nullptr;  // no version before the inserter's
    va->v[1].sid = sid;
    va->v[1].value = kPending;
    r->va = va;
    r->va_epoch = epoch_;
    th.created.push_back(r);
    return r;
  }
  bool inserted_now(const Row& r) const { return r.born == epoch_ && r.born; }

  // Append step: a PENDING version for serial id `sid` in the row's version array.
  Row* append(Thread& th, Sid sid, uint32_t table, uint64_t key) {
    Row* r = find(table, key);
    if (!r) throw std::runtime_error("write set names a missing key " + std::to_string(key) + " of table " + tables_[table].name);
    while (r->lock.test_and_set(std::memory_order_acquire)) _mm_pause();
    VersionArray* va = r->va;
    if (r->va_epoch != epoch_ || !va) {
      va = new_array(th, 8);
      va->n = 1;
      va->v[0].sid = 0;
      va->v[0].value = initial_value(th, *r);
      dev::write(va, VersionArray::bytes_for(1));
      r->va = va;
      r->va_epoch = epoch_;
      th.created.push_back(r);
    } else if (va->n == va->cap) {
      VersionArray* bigger = new_array(th, va->cap * 2);
      bigger->n = va->n;
      for (uint32_t i = 0; i < va->n; i++) {
        bigger->v[i] = va->v[i];
      }
      dev::read(va, VersionArray::bytes_for(va->n));
      dev::write(bigger, VersionArray::bytes_for(va->n));
      r->va = va = bigger;
    }
    va->v[va->n].sid = sid;
    va->v[va->n].value = kPending;
    dev::update(&va->v[va->n], sizeof(Version));
    va->n++;
    r->lock.clear(std::memory_order_release);
    return r;
  }
  // After every core appended: each sorts the arrays it created, by serial id.
  void sort_step(Thread& th) {
    for (Row* r : th.created) {
      r->va->sort();
      dev::update(r->va, VersionArray::bytes_for(r->va->n));
    }
  }

  // Execution: what a transaction of serial id `sid` reads of a row.
  const char* read(Thread& th, Sid sid, uint32_t table, uint64_t key) {
    Row* r = find(table, key);
    if (!r) return nullptr;
    return read_row(th, sid, *r);
  }
  const char* read_row(Thread& th, Sid sid, Row& r) {
    th.accesses++;
    if (r.va_epoch == epoch_ && r.va) {
      const char* v = r.va->read_below(sid, &th.waits);
      dev::read(r.va->v, sizeof(Version));  // the entry read (DRAM; all-nvmm: NVM)
      if (v == kDeleted) return nullptr;  // deleted by an earlier transaction of the epoch
      if (v) dev::read(v, r.len);  // the version: transient pool, cache pool, or NVM
      return v;
    }
    return read_committed(th, r);
  }

  // A declared write: the writer's entry in the version array.
  uint32_t entry_of(Row& r, Sid sid) const {
    if (r.va_epoch != epoch_ || !r.va) throw std::logic_error("write to a row whose write set was not declared");
    uint32_t i = r.va->index_of(sid);
    if (i >= r.va->n || r.va->v[i].sid != sid) throw std::logic_error("write to a row whose write set was not declared");
    return i;
  }
  // A version's value: the transient pool (DRAM); all-nvmm keeps every version in NVM.
  char* new_value(Thread& th, uint32_t len) {
    if (design_ == Design::AllNvmm) return heap_alloc(th, len);
    return th.transient->alloc(len);
  }

  // The transaction wrote `value` (in the transient pool) as its version: visible at once
  // (Caracal makes writes visible before commit; no abort can follow a write). The final
  // write of the epoch also goes to the cache pool and the persistent row.
  void publish(Thread& th, Row& r, uint32_t i, const char* value) {
    th.versions_written++;
    dev::write(&r.va->v[i], sizeof(Version));
    if (value == kDeleted) {  // a delete has no value: only its final write reaches NVM
      r.va->v[i].store(kDeleted);
      return;
    }
    // The version's value: the transient pool (DRAM), or all-nvmm's heap in NVM (not flushed:
    // nothing recovers it).
    dev::write(value, r.len);
    if (design_ == Design::Hybrid && !r.va->is_final(i)) {
      char* copy = heap_alloc(th, r.len);  // hybrid: every update also persisted to NVM
      memcpy(copy, value, r.len);
      dev::flush(copy, r.len);
    }
    r.va->v[i].store(value);
  }
  void finalize(Thread& th, Row& r, uint32_t i, const char* value) {
    if (r.va->is_final(i)) write_final(th, r, r.va->v[i].sid, value);
  }
  // An aborted (or unwritten) declared write: IGNORE; when it was the row's final one, the
  // last version not ignored is the final write instead (none when that is the initial one).
  void ignore(Thread& th, Row& r, uint32_t i) {
    th.ignored++;
    r.va->v[i].store(kIgnore);
    if (!r.va->is_final(i)) return;
    for (uint32_t k = i; k-- > 1;) {
      const char* v = r.va->wait_written(k);
      if (v == kIgnore) continue;
      write_final(th, r, r.va->v[k].sid, v);
      return;
    }
    if (r.born == epoch_) drop_inserted(th, r);
  }

  // Epoch commit, per core: the pools' offsets into the slot of this epoch's parity, fenced
  // with every NVM write this core made in the epoch (Algorithm 1's first fence).
  void commit_core(Thread& th) {
    if (persist_) {
      row_pool_[size_t(th.core)].checkpoint(epoch_);
      if (val_pool_[size_t(th.core)].capacity()) val_pool_[size_t(th.core)].checkpoint(epoch_);
    }
    std::swap(th.gc_now, th.gc_next);
    th.gc_next.clear();
    if (persist_ && !dev::fault_is(dev::Fault::SkipEpochFence)) dev::fence();
    if (th.core == 0) dev::crash_point("nvcaracal.before_epoch_commit");
  }
  // The commit point (one core, after every core's commit_core): persist the epoch number,
  // fence. A crash between the two fences leaves the epoch either committed or replayed.
  void commit_epoch() {
    if (persist_) {
      store_control(control_->committed, epoch_);
      dev::crash_point("nvcaracal.epoch_commit");
      dev::fence();
    } else {  // all-dram: the epoch number, as the checker reads it, nothing persisted
      control_->committed.magic = Control::kMagic;
      control_->committed.value = epoch_;
    }
    epochs_committed_++;
    // The blocks recovery found on the free lists matter to the first epoch's major GC only (a
    // block freed again later was reused in between).
    recovered_free_.clear();
    update_ledger();
  }
  // The lists' DRAM into the ledger (no core touches them between epochs).
  void update_ledger() {
    uint64_t b = heap_bytes_of(th_) + cache_->list_bytes() +
                 recovered_free_.bucket_count() * sizeof(void*) + recovered_free_.size() * 32;  // node: next, hash, value
    for (auto& t : th_) {
      b += heap_bytes_of(t.created) + heap_bytes_of(t.gc_now) + heap_bytes_of(t.gc_next) + heap_bytes_of(t.evict_lists) +
           heap_bytes_of(t.retired) + heap_bytes_of(t.unindex);
      for (auto& l : t.evict_lists) b += heap_bytes_of(l);
    }
    lists_->set(b);
  }

  // ---- Recovery in a fresh process (section 4.3): pools back to the last committed epoch,
  // rows scanned to rebuild the index, the crashed epoch's versions reverted. The driver then
  // replays the crashed epoch from the input logs (when it was logged).
  struct Recovered {
    uint64_t committed = 0, logged = 0;
    uint64_t rows = 0, reverted = 0;
  };
  Recovered recover_state(int threads, RecoveryReport& rep) {
    Recovered out;
    dev::read(control_, sizeof(Control));
    if (control_->committed.magic != Control::kMagic)
      throw std::runtime_error("no complete load in the image: it holds no committed epoch (power failed while loading?)");
    out.committed = control_->committed.value;
    out.logged = control_->logged.magic == Control::kMagic ? control_->logged.value : 0;
    epoch_ = out.committed;
    for (int t = 0; t < threads_; t++) {
      row_pool_[size_t(t)].restore(out.committed);
      if (val_pool_[size_t(t)].capacity()) val_pool_[size_t(t)].restore(out.committed);
    }
    // Blocks already on a free list (a GC of the crashed epoch made durable): not freed twice.
    for (auto& p : val_pool_)
      if (p.capacity())
        for (uint64_t b : p.free_set()) recovered_free_.insert(b);
    rep.lap("restore_pools");
    std::atomic<uint64_t> nrows{0};
    std::atomic<uint32_t> bad_table{0};
    // The blocks on any core's free list (a dropped insert goes to the list of the core that
    // dropped it, which may not own the block).
    std::unordered_set<uint64_t> freed;
    for (auto& p : row_pool_)
      for (uint64_t b : p.free_set()) freed.insert(b);
    // Every core's pool in runs of kRecoveryBlocks blocks, taken in turn by every recovery thread;
    // each run keeps the rows it found, what to revert and what to collect, handed to its core
    // below. Rows then take their slots in run order (each run a range per table from a prefix
    // sum, no shared counter) and enter the index, again a run at a time on every thread.
    struct Found {
      uint32_t table, len;
      uint64_t key;
      char* prow;
      bool gc;
    };
    struct Run {
      int core;
      uint64_t lo, hi;
      std::vector<Found> found;
      std::vector<uint64_t> base;  // per table: the run's first slot
      std::vector<std::pair<char*, RowHeader>> revert;
      std::vector<Row*> gc_now;
    };
    std::vector<Run> runs;
    for (int t = 0; t < threads_; t++)
      for (uint64_t lo = 0; lo < row_pool_[size_t(t)].bump(); lo += kRecoveryBlocks)
        runs.push_back({t, lo, std::min(row_pool_[size_t(t)].bump(), lo + kRecoveryBlocks), {}, {}, {}, {}});
    auto each_run = [&](auto&& f) {
      std::atomic<size_t> next{0};
      parallel(std::max(1, threads), [&](int) {
        for (size_t k; (k = next.fetch_add(1)) < runs.size();) f(runs[k]);
      });
    };
    each_run([&](Run& run) {
      const int t = run.core;
      BlockPool& p = row_pool_[size_t(t)];
      run.base.assign(tables_.size(), 0);
      for (uint64_t i = run.lo; i < run.hi; i++) {
        char* prow = p.block(i);
        if (freed.count((uint64_t(t) << kRefCoreShift) | i)) continue;
        RowHeader hd;
        dev::read(prow, sizeof hd);
        memcpy(&hd, prow, sizeof hd);
        if (hd.live != kLive || (!hd.sid[0] && !hd.sid[1])) continue;
        // A row whose oldest version is the crashed epoch's was inserted by it: not a row.
        if (hd.sid[0] && epoch_of(hd.sid[0]) > out.committed) continue;
        bool fix = repair(hd);  // a crash inside a header change (eADR: store by store)
        if (hd.sid[1] && epoch_of(hd.sid[1]) > out.committed) {  // the crashed epoch's version
          hd.sid[1] = 0;
          hd.ref[1] = 0;
          fix = true;
        }
        if (fix) run.revert.push_back({prow, hd});
        if (hd.table >= tables_.size()) {  // not a row of this layout: reported after the scan
          bad_table = hd.table;
          continue;
        }
        bool two = hd.sid[1] && epoch_of(hd.sid[1]) <= out.committed;
        // A committed tombstone: the row reads as absent until the first major GC frees it.
        bool gc = two && (is_tombstone(hd.ref[1]) || !minor_gc_ || !is_inline(hd.ref[0]));
        run.found.push_back({hd.table, hd.len, hd.key, prow, gc});
        run.base[hd.table]++;
      }
    });
    if (bad_table) throw std::runtime_error("NVCaracal: a row block names table " + std::to_string(bad_table.load()) + " of " + std::to_string(tables_.size()));
    for (uint32_t tb = 0; tb < tables_.size(); tb++) {  // counts -> first slots, in run order
      uint64_t next = slots_[tb]->load();
      for (Run& run : runs) next += std::exchange(run.base[tb], next);
      if (next > tables_[tb].capacity) throw std::runtime_error("table " + tables_[tb].name + " is full (" + std::to_string(tables_[tb].capacity) +
                                 " rows; TPC-C: raise --tpcc-new-orders)");
      slots_[tb]->store(next);
    }
    each_run([&](Run& run) {
      for (const Found& f : run.found) {
        Row* r = place_row(f.table, f.key, f.prow, f.len, run.base[f.table]++);
        if (f.gc) run.gc_now.push_back(r);
        nrows++;
      }
    });
    for (Run& run : runs) {  // in each core's block order, as one thread per core found them
      auto& gc = th_[size_t(run.core)].gc_now;
      gc.insert(gc.end(), run.gc_now.begin(), run.gc_now.end());
    }
    out.rows = nrows.load();
    rep.rows = out.rows;
    rep.lap("scan_rows_rebuild_index");
    for (Run& run : runs)
      for (auto& [prow, hd] : run.revert) {  // the crashed epoch's version goes; the checkpointed one stays
        store_header(reinterpret_cast<RowHeader*>(prow), hd);
        dev::flush(prow, sizeof hd);
        out.reverted++;
      }
    dev::fence();
    rep.lap("revert");
    return out;
  }
  // The logged inputs of `epoch`, per core's log (empty when not logged).
  bool read_log(int core, uint64_t epoch, std::vector<uint64_t>& out) const { return log_[size_t(core)].read(epoch, out); }

  // ---- Checkers and stats.
  // The row's value as of the last committed epoch (after a run or recovery: the current one).
  bool read_current(uint32_t table, uint64_t key, char* out, uint64_t& version) {
    Row* r = find(table, key);
    if (!r) return false;
    RowHeader h;
    memcpy(&h, r->prow, sizeof h);
    int i = version_at_most(h, ~0ull >> 32);
    if (i < 0 || is_tombstone(h.ref[i])) return false;
    dev::read(r->prow, sizeof h);
    const char* v = value_addr(r->prow, h.ref[i]);
    dev::read(v, h.len);
    memcpy(out, v, h.len);
    version = h.sid[i];
    return true;
  }
  template <class F>
  void for_each_row(uint32_t table, F&& f) {
    uint64_t n = slots_[table]->load();
    std::vector<char> buf(tables_[table].schema.tuple_size());
    for (uint64_t i = 0; i < n; i++) {
      uint64_t ver;
      if (read_current(table, rows_[table].first[i].key, buf.data(), ver)) f(rows_[table].first[i].key, buf.data());
    }
  }
  // An order-independent digest of every row's committed value (key, bytes): equal digests
  // after the same epochs, whatever the thread count or the crashes in between.
  uint64_t state_checksum() {
    uint64_t sum = 0;
    for (uint32_t t = 0; t < tables_.size(); t++)
      for_each_row(t, [&](uint64_t key, const char* v) {
        uint64_t h = 0xcbf29ce484222325ull ^ (key * 0x9E3779B97F4A7C15ull) ^ t;
        for (uint32_t i = 0; i < tables_[t].schema.tuple_size(); i++) h = (h ^ uint8_t(v[i])) * 0x100000001b3ull;
        sum += h;
      });
    return sum;
  }
  // Invariants between epochs (after a run, after recovery): every indexed row's persistent
  // header names its table, key and length, is live, has a version of a committed epoch and
  // none after it, and its current version lies in its row or a value block in use; no row or
  // current value block is on a free list or shared by two rows; free lists hold no block
  // twice; this epoch's version arrays are sorted, within their size, nothing left PENDING.
  nlohmann::json check() {
    nlohmann::json ex = nlohmann::json::array();
    uint64_t violations = 0;
    auto bad = [&](const std::string& what) {
      if (ex.size() < 10) ex.push_back(what);
      violations++;
    };
    const uint64_t committed = control_->committed.magic == Control::kMagic ? control_->committed.value : 0;
    std::unordered_set<uint64_t> free_rows, free_values, used_rows, used_values;
    auto gather = [&](const std::vector<BlockPool>& pools, std::unordered_set<uint64_t>& into, const char* what) {
      for (auto& p : pools)
        if (p.capacity())
          for (uint64_t b : p.free_list())
            if (!into.insert(b).second) bad(std::string(what) + " free list holds block " + std::to_string(b) + " twice");
    };
    gather(row_pool_, free_rows, "row pool");
    gather(val_pool_, free_values, "value pool");
    std::unordered_set<const Row*> dropped;  // inserted and deleted in the last epoch: leave the index next epoch
    for (auto& th : th_) dropped.insert(th.unindex.begin(), th.unindex.end());
    for (uint32_t t = 0; t < tables_.size(); t++) {
      uint64_t n = slots_[t]->load();
      for (uint64_t i = 0; i < n; i++) {
        Row& r = rows_[t].first[i];
        if (find(t, r.key) != &r || dropped.count(&r)) continue;  // not (or no longer) indexed
        const std::string name = tables_[t].name + " key " + std::to_string(r.key);
        if (r.va_epoch == epoch_ && r.va) {
          const VersionArray& va = *r.va;
          if (va.n > va.cap || va.n == 0) bad(name + ": version array of " + std::to_string(va.n) + " entries, room for " + std::to_string(va.cap));
          for (uint32_t k = 1; k < va.n && k < va.cap; k++) {
            if (va.v[k].load() == kPending) bad(name + ": a version left PENDING after the epoch");
            if (k > 1 && !(va.v[k - 1].sid < va.v[k].sid)) bad(name + ": version array out of serial order");
          }
        } else if (r.va_epoch > epoch_) {
          bad(name + ": version array of a later epoch");
        }
        RowHeader h;
        dev::read(r.prow, sizeof h);
        memcpy(&h, r.prow, sizeof h);
        const uint64_t ref = row_ref(r.prow);
        if (!used_rows.insert(ref).second) bad(name + ": its persistent row is another row's too");
        if (free_rows.count(ref)) bad(name + ": its persistent row is on a free list");
        if (h.live != kLive || h.table != t || h.key != r.key || h.len != r.len) {
          bad(name + ": persistent header not live or names another row");
          continue;
        }
        for (int k = 0; k < 2; k++)
          if (h.sid[k] && epoch_of(h.sid[k]) > committed) bad(name + ": a version of epoch " + std::to_string(epoch_of(h.sid[k])) + " after the committed " + std::to_string(committed));
        int cur = version_at_most(h, committed);
        if (cur < 0) {
          bad(name + ": no committed version");
          continue;
        }
        uint64_t v = h.ref[cur];
        if (is_tombstone(v)) continue;  // deleted: major GC frees it
        if (is_inline(v)) {
          if (v != geo_.inline_slot(0) && v != geo_.inline_slot(1)) bad(name + ": inline version outside the row's two slots");
        } else if (v == 0 || ((v - 1) >> kRefCoreShift) >= val_pool_.size() ||
                   ((v - 1) & ((1ull << kRefCoreShift) - 1)) >= val_pool_[(v - 1) >> kRefCoreShift].bump()) {
          bad(name + ": its value names no block in use");
        } else {
          if (free_values.count(v - 1)) bad(name + ": its value block is on a free list");
          if (!used_values.insert(v - 1).second) bad(name + ": its value block is another row's too");
        }
      }
    }
    return {{"violations", violations}, {"examples", ex}, {"rows_checked", used_rows.size()}};
  }

  struct Totals {
    uint64_t versions_written = 0, final_writes = 0, ignored = 0, waits = 0, minor_gc = 0, major_gc = 0,
             evicted = 0, cache_full = 0, cache_hits = 0, nvm_reads = 0, accesses = 0;
    Totals operator-(const Totals& o) const {
      return {versions_written - o.versions_written, final_writes - o.final_writes, ignored - o.ignored, waits - o.waits,
              minor_gc - o.minor_gc, major_gc - o.major_gc, evicted - o.evicted, cache_full - o.cache_full,
              cache_hits - o.cache_hits, nvm_reads - o.nvm_reads, accesses - o.accesses};
    }
  };
  Totals totals() const {
    Totals s;
    for (auto& t : th_) {
      s.versions_written += t.versions_written;
      s.final_writes += t.final_writes;
      s.ignored += t.ignored;
      s.waits += t.waits;
      s.minor_gc += t.minor_gc;
      s.major_gc += t.major_gc;
      s.evicted += t.evicted;
      s.cache_full += t.cache_full;
      s.cache_hits += t.cache_hits;
      s.nvm_reads += t.nvm_reads;
      s.accesses += t.accesses;
    }
    return s;
  }
  // Pool sizes (Figure 8): transient (peak of an epoch), cache, persistent rows and values.
  nlohmann::json pool_bytes() const {
    uint64_t transient = 0, rows = 0, values = 0, reserved = 0;
    for (auto& t : th_) transient += t.transient->peak();
    for (auto& p : row_pool_) rows += p.in_use() * geo_.row_bytes, reserved += p.bump() * geo_.row_bytes;
    for (auto& p : val_pool_) values += p.in_use() * block_bytes_;
    // persistent_rows: rows in use; _reserved: the row pools' bump offsets (what free lists
    // may hand out again included).
    return {{"transient", transient}, {"cache", cache_->bytes_in_use()}, {"persistent_rows", rows},
            {"persistent_rows_reserved", reserved}, {"persistent_values", values}};
  }
  nlohmann::json stats() const { return {{"pool_bytes", pool_bytes()}}; }
  // NVM in use by structure (Figure 8's NVMM side; the DRAM side is the budget's breakdown):
  // persistent rows and values in use, the input logs and version heaps as sized.
  nlohmann::json nvm_breakdown() const {
    uint64_t rows = 0, values = 0, logs = 0, heaps = 0;
    for (auto& p : row_pool_) rows += p.in_use() * geo_.row_bytes;
    for (auto& p : val_pool_) values += p.in_use() * block_bytes_;
    for (auto& l : log_) logs += l.bytes();
    for (auto& t : th_) heaps += t.heap_size;
    nlohmann::json j = {{"nvcaracal persistent rows", rows}, {"nvcaracal persistent values", values}};
    if (input_log_) j["nvcaracal input logs"] = logs;
    if (heaps) j["nvcaracal version heaps"] = heaps;
    return j;
  }
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
  // Where a new version of len bytes goes: an inline slot (the one `other` does not use) or a
  // new block of this core's value pool.
  uint64_t place_value(Thread& th, uint32_t len, uint64_t other, bool first) {
    if (geo_.fits_inline(len)) return first ? geo_.inline_slot(0) : geo_.other_inline(other);
    return val_pool_[size_t(th.core)].alloc() + 1;
  }
  void write_value(char* prow, uint64_t ref, const char* img, uint32_t len) {
    char* dst = value_addr(prow, ref);
    memcpy(dst, img, len);
    row_flush(dst, len);
  }
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

  char* heap_alloc(Thread& th, uint32_t len) {
    uint64_t need = (len + 63) / 64 * 64;
    if (th.heap_used + need > th.heap_size) throw std::runtime_error("NVM version heap of core " + std::to_string(th.core) + " is full");
    char* p = th.heap + th.heap_used;
    th.heap_used += need;
    return p;
  }

  // In the transient pool (DRAM); all-nvmm's in its NVM heap.
  VersionArray* new_array(Thread& th, uint32_t cap) {
    uint64_t bytes = VersionArray::bytes_for(cap);
    auto* va = reinterpret_cast<VersionArray*>(design_ == Design::AllNvmm ? heap_alloc(th, uint32_t(bytes)) : th.transient->alloc(bytes));
    va->cap = cap;
    va->n = 0;
    return va;
  }

  // The row's value before this epoch: its cached version, else a copy of the persistent row's
  // checkpointed version in the transient pool (the final write may reuse that slot later).
  const char* initial_value(Thread& th, Row& r) {
    // all-nvmm: the persistent row's checkpointed version itself (a final write goes to the
    // other slot or a new block, so it stays intact through the epoch).
    if (design_ == Design::AllNvmm) return committed_value(th, r);
    if (char* c = r.cached.load(std::memory_order_acquire)) {
      th.cache_hits++;
      dev::read(c, r.len);
      return c;
    }
    const char* v = committed_value(th, r);
    if (!v) return nullptr;  // deleted (recovery's rows before the first major GC)
    char* copy = th.transient->alloc(r.len);
    memcpy(copy, v, r.len);
    dev::write(copy, r.len);
    return copy;
  }
  const char* committed_value(Thread& th, Row& r) {
    RowHeader h;
    row_read(r.prow, sizeof h);
    memcpy(&h, r.prow, sizeof h);
    int i = version_at_most(h, epoch_ - 1);
    if (i < 0) throw std::logic_error("row without a committed version");
    if (is_tombstone(h.ref[i])) return nullptr;
    const char* v = value_addr(r.prow, h.ref[i]);
    row_read(v, r.len);
    th.nvm_reads += persist_;
    return v;
  }
  // A read of a row nobody writes this epoch: the cached version, else the persistent row
  // (cached from then on, when the cache pool has room).
  const char* read_committed(Thread& th, Row& r) {
    if (char* c = r.cached.load(std::memory_order_acquire)) {
      th.cache_hits++;
      r.cache_epoch.store(epoch_, std::memory_order_relaxed);
      dev::read(c, r.len);
      return c;
    }
    const char* v = committed_value(th, r);
    if (!v || !cached_versions_) return v;
    char* c = cache_->alloc(th.core);
    if (!c) {
      th.cache_full++;
      return v;
    }
    memcpy(c, v, r.len);
    dev::write(c, r.len);
    char* expected = nullptr;
    if (!r.cached.compare_exchange_strong(expected, c, std::memory_order_acq_rel)) {
      cache_->free(th.core, c);
      return expected;
    }
    r.cache_epoch.store(epoch_, std::memory_order_relaxed);
    list_for_eviction(th, r);
    return c;
  }
  void list_for_eviction(Thread& th, Row& r) {
    if (!r.listed.exchange(true)) th.evict_lists[epoch_ % (cache_epochs_ + 2)].push_back(&r);
  }

  // The row's final write of the epoch: a cached version first (readers in later epochs find
  // it in DRAM), then the persistent row: the value into the slot the stale version held (or a
  // free one), then the header in one flushed line. Fenced at the epoch commit.
  // A delete's final write is a tombstone version (no value), the cached version dropped; the
  // next epoch's major GC frees the row. A row inserted and deleted in one epoch never reaches
  // NVM: its block goes back at once, its key out of the index at the next epoch (readers of
  // this epoch still reach its version array).
  void write_final(Thread& th, Row& r, Sid sid, const char* value) {
    th.final_writes++;
    const bool deleted = value == kDeleted;
    if (r.born == epoch_ && deleted) {
      drop_inserted(th, r, false);
      th.unindex.push_back(&r);
      return;
    }
    if (r.born == epoch_) {  // a row inserted this epoch: its first version, the whole header
      RowHeader nh{};
      nh.sid[0] = sid;
      nh.ref[0] = place_value(th, r.len, 0, true);
      nh.key = r.key;
      nh.table = r.table;
      nh.len = r.len;
      nh.live = kLive;
      write_value(r.prow, nh.ref[0], value, r.len);
      memcpy(r.prow, &nh, sizeof nh);  // nobody reads it before the epoch commits
      row_flush(r.prow, sizeof nh);
      return;
    }
    // The cached version becomes the new value, or goes: one left behind when the cache pool
    // has no block (its free blocks may sit on another core's list) would be the next epoch's
    // initial version, a lost update.
    char* c = nullptr;
    if (!deleted && cached_versions_ && !(c = cache_->alloc(th.core))) th.cache_full++;
    if (c) {
      memcpy(c, value, r.len);
      dev::write(c, r.len);
      r.cache_epoch.store(epoch_, std::memory_order_relaxed);
    }
    if (char* old = r.cached.exchange(c, std::memory_order_acq_rel)) th.retired.push_back(old);
    if (c) list_for_eviction(th, r);
    RowHeader h;
    row_read(r.prow, sizeof h);
    memcpy(&h, r.prow, sizeof h);
    if (h.sid[1] && epoch_of(h.sid[1]) >= epoch_) h.sid[1] = 0, h.ref[1] = 0;  // a replay's own earlier try
    RowHeader nh = h;
    if (!h.sid[1]) {
      nh.sid[1] = sid;
      nh.ref[1] = deleted ? kTombstone : place_value(th, r.len, h.ref[0], false);
    } else if (minor_gc_ && is_inline(h.ref[0])) {  // minor GC: the stale version's slot is reused
      nh.sid[0] = h.sid[1];
      nh.ref[0] = h.ref[1];
      nh.sid[1] = sid;
      nh.ref[1] = deleted ? kTombstone : h.ref[0];
      th.minor_gc++;
    } else {
      throw std::logic_error("persistent row with two versions left by major GC");
    }
    if (!deleted) write_value(r.prow, nh.ref[1], value, r.len);
    store_header(reinterpret_cast<RowHeader*>(r.prow), nh);
    row_flush(r.prow, sizeof nh);
    if (deleted || !minor_gc_ || !is_inline(nh.ref[0])) th.gc_next.push_back(&r);
  }

  // An inserted row left without a version (its inserter aborted, or a later transaction of
  // the epoch deleted it): its header marked dead, its block back to the free list (reused
  // after the epoch commits), its key out of the index (now, or by the caller later).
  void drop_inserted(Thread& th, Row& r, bool unindex = true) {
    RowHeader nh{};
    memcpy(r.prow, &nh, sizeof nh);
    row_flush(r.prow, sizeof nh);
    row_pool_[size_t(th.core)].free(row_ref(r.prow));
    if (unindex) index_[r.table]->remove(r.key);
  }

  // Major GC (section 4.4): rows given a second version last epoch lose the stale one; a row
  // whose second version is a tombstone (deleted last epoch) goes whole: its row block too.
  // The freed blocks are made durable on the free lists before any header changes (a crash
  // after that sees the block free and still named by a stale version: recovery does not free
  // it twice, and skips a freed row); the headers are fenced before execution.
  void major_gc(Thread& th) {
    if (th.gc_now.empty()) return;
    BlockPool& vp = val_pool_[size_t(th.core)];
    BlockPool& rp = row_pool_[size_t(th.core)];
    std::vector<std::pair<Row*, RowHeader>> todo;
    std::vector<Row*> retire;
    todo.reserve(th.gc_now.size());
    for (Row* r : th.gc_now) {
      RowHeader h;
      row_read(r->prow, sizeof h);
      memcpy(&h, r->prow, sizeof h);
      if (!h.sid[1]) continue;
      if (!is_inline(h.ref[0]) && !recovered_free_.count(h.ref[0] - 1)) vp.free(h.ref[0] - 1);
      if (is_tombstone(h.ref[1])) {
        rp.free(row_ref(r->prow));
        retire.push_back(r);
      } else {
        todo.push_back({r, h});
      }
    }
    if (persist_) {
      if (vp.capacity()) vp.persist_gc(epoch_);
      if (!retire.empty()) rp.persist_gc(epoch_);
      dev::fence();
    }
    for (Row* r : retire) {
      RowHeader dead{};
      memcpy(r->prow, &dead, sizeof dead);
      row_flush(r->prow, sizeof dead);
      index_[r->table]->remove(r->key);
      th.major_gc++;
    }
    for (auto& [r, h] : todo) {
      RowHeader nh = h;
      nh.sid[0] = h.sid[1];
      nh.ref[0] = h.ref[1];
      nh.sid[1] = 0;
      nh.ref[1] = 0;
      store_header(reinterpret_cast<RowHeader*>(r->prow), nh);
      row_flush(r->prow, sizeof nh);
      th.major_gc++;
    }
    // Fenced before execution: another core's final write may change the same header this
    // epoch, and a line this core flushed may land until this core fences (it would then
    // roll that write back).
    if (persist_) dev::fence();
    th.gc_now.clear();
  }

  // Epoch-based eviction (section 5.2): the list of epoch - K - 1; a row used since moves to
  // the list of its last epoch.
  void evict_cache(Thread& th) {
    if (epoch_ < cache_epochs_ + 1) return;
    uint64_t old = epoch_ - cache_epochs_ - 1;
    auto& list = th.evict_lists[old % (cache_epochs_ + 2)];
    std::vector<Row*> keep;
    for (Row* r : list) {
      uint64_t used = r->cache_epoch.load(std::memory_order_relaxed);
      char* c = r->cached.load(std::memory_order_relaxed);
      if (!c) { r->listed = false; continue; }
      if (used <= old) {
        r->cached.store(nullptr, std::memory_order_relaxed);
        cache_->free(th.core, c);
        r->listed = false;
        th.evicted++;
      } else if (used % (cache_epochs_ + 2) == old % (cache_epochs_ + 2)) {
        keep.push_back(r);
      } else {
        th.evict_lists[used % (cache_epochs_ + 2)].push_back(r);
      }
    }
    list.swap(keep);
  }

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
