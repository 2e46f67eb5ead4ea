// Zen's Met-Cache (papers/zen-vldb21.txt section 3.2): a tuple-grain DRAM cache per HTable,
// divided into one region per worker thread. An entry holds the tuple image, the NVM-tuple it
// came from (or was persisted to), the tuple ID, the dirty/active/clock/copy bits and the CC
// method's per-tuple metadata (CC-Meta), so concurrency control runs entirely in DRAM.
//
// "Active" is a pin count: every transaction that looked an entry up pins it until release(),
// whatever region the entry is in, so neither eviction nor the copy-on-write below can pull an
// entry from under a transaction. A thread replaces entries only in its own region (CLOCK,
// skipping pinned entries). Eviction never writes NVM: committed images are always in their
// NVM-tuple already, and aborted writes never reach an entry (they live in private images).
//
// The primary index value is either an entry's address or an NVM-tuple's address with the top
// bit set (user-space addresses never use it).
#pragma once
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "storage/device/device.h"
#include "storage/device/dram_budget.h"
#include "storage/device/numa.h"

namespace nvt::zen {

constexpr uint64_t kNvmTag = 1ull << 63;
inline uint64_t nvm_value(const char* nvm_tuple) { return reinterpret_cast<uint64_t>(nvm_tuple) | kNvmTag; }
inline bool is_nvm_value(uint64_t v) { return v & kNvmTag; }
inline char* nvm_of(uint64_t v) { return reinterpret_cast<char*>(v & ~kNvmTag); }

// Entry state word: pin count (the active bit generalized to several readers) and flags.
constexpr uint64_t kPinMask = 0xffffffffull;
constexpr uint64_t kClock = 1ull << 32;
constexpr uint64_t kCopy = 1ull << 33;   // copied into another region: this entry is dead
constexpr uint64_t kDirty = 1ull << 34;  // an image is being installed
constexpr uint64_t kFree = 1ull << 35;   // holds no tuple (or is being filled by its owner)
constexpr uint64_t kNew = 1ull << 36;    // an insert not yet committed: invisible to lookups

template <class Meta>
struct alignas(64) CacheEntry {
  std::atomic<uint64_t> state{kFree};
  char* nvm = nullptr;  // NVM-tuple holding this image
  uint64_t key = 0;     // tuple ID: (table, key)
  uint64_t cts = 0;     // Tx-CTS of the image
  uint32_t table = 0;
  Meta meta;            // CC-Meta
  char* data() { return reinterpret_cast<char*>(this + 1); }
};

template <class Meta>
class MetCache {
 public:
  using Entry = CacheEntry<Meta>;

  static uint64_t entry_bytes(uint32_t len) { return (sizeof(Entry) + len + 63) / 64 * 64; }

  MetCache(uint32_t len, uint64_t per_region, int regions, dev::DramBudget& dram, std::string what)
      : stride_(entry_bytes(len)), per_region_(per_region), regions_(regions), dram_(dram),
        what_(std::move(what)) {
    bytes_ = stride_ * per_region * uint64_t(regions);
    // Tuples: data, up to what the data cap has left; the rest of a cache held at its working-set
    // floor (plan_cache's `room`) is listed apart as overhead, `<what>.floor`.
    data_bytes_ = std::min(bytes_, dram.data_left());
    dram.charge(data_bytes_, what_, dev::DramUse::Data);
    if (bytes_ > data_bytes_) dram.charge(bytes_ - data_bytes_, what_ + ".floor");
    base_ = static_cast<char*>(std::aligned_alloc(64, bytes_ ? bytes_ : 64));
    if (!base_) throw dev::BudgetError("host out of memory allocating the Met-Cache " + what_);
    std::memset(base_, 0, bytes_);
    for (uint64_t i = 0; i < per_region * uint64_t(regions); i++)
      new (base_ + i * stride_) Entry();
    dead_ = std::make_unique<Dead[]>(size_t(regions));
    // Region r is worker r's: on its node's DRAM under a per-node NUMA placement (journal
    // 4.2.2, NUMA-local write: a thread writes only its own region, copying others' entries).
    dev::add_dram_pool(base_, stride_ * per_region, regions);
  }
  ~MetCache() {
    dev::remove_dram_pool(base_);
    std::free(base_);
    dram_.uncharge(data_bytes_, what_);
    if (bytes_ > data_bytes_) dram_.uncharge(bytes_ - data_bytes_, what_ + ".floor");
  }
  MetCache(const MetCache&) = delete;
  MetCache& operator=(const MetCache&) = delete;

  uint64_t per_region() const { return per_region_; }
  int regions() const { return regions_; }
  uint64_t bytes() const { return bytes_; }
  Entry* at(int region, uint64_t i) const {
    return reinterpret_cast<Entry*>(base_ + (uint64_t(region) * per_region_ + i) * stride_);
  }
  int region_of(const Entry* e) const {
    return int(uint64_t(reinterpret_cast<const char*>(e) - base_) / stride_ / per_region_);
  }

  // Pin for a transaction; fails on a free, dead or just-evicted entry (the caller re-reads the
  // index). Sets the clock bit: the entry was used.
  static bool pin(Entry* e) {
    uint64_t s = e->state.load(std::memory_order_acquire);
    do {
      if (s & (kFree | kCopy)) return false;
    } while (!e->state.compare_exchange_weak(s, (s + 1) | kClock, std::memory_order_acq_rel));
    return true;
  }
  static void unpin(Entry* e) { e->state.fetch_sub(1, std::memory_order_release); }

  // Takes a free entry (exactly kFree: no pins) for the caller, who fills it or stores kFree
  // back. The claim keeps kFree, so pin() still fails on it, and adds one pin, so that no other
  // thread walking the region takes it too: WBL evicts in other threads' regions, and an entry
  // two threads filled at once stayed indexed under the first key after eviction unlinked the
  // second, a lookup of that key spinning on it forever.
  static bool claim(Entry* e, uint64_t s) {
    return s == kFree && e->state.compare_exchange_strong(s, kFree | 1, std::memory_order_acq_rel);
  }

  // A lookup's cached case: `key`'s entry, pinned, found through `index` (an entry of any
  // region, re-read until a pin holds on the entry still indexed). nullptr with `v` the index
  // value otherwise: Index::kNoValue (no key, or an uncommitted insert) or an NVM-tuple (a miss).
  // An entry is unpinnable only while another thread evicts, fills or copies it: one that stays
  // so for seconds is a defect (an index left pointing at a reused entry), reported, not spun on.
  template <class Index>
  static Entry* pin_indexed(const Index& index, uint64_t key, uint64_t& v) {
    std::chrono::steady_clock::time_point since{};
    for (uint64_t spins = 1;; spins++) {
      v = index.lookup(key);
      if (v == Index::kNoValue || is_nvm_value(v)) return nullptr;
      Entry* e = reinterpret_cast<Entry*>(v);
      if (pin(e)) {
        if (e->state.load(std::memory_order_acquire) & kNew) {  // an uncommitted insert
          unpin(e);
          v = Index::kNoValue;
          return nullptr;
        }
        if (index.lookup(key) == v) return e;
        unpin(e);  // evicted or copied meanwhile
      }
      _mm_pause();
      if (spins % (1u << 20) == 0) stuck(key, since);
    }
  }
  static void stuck(uint64_t key, std::chrono::steady_clock::time_point& since) {
    auto now = std::chrono::steady_clock::now();
    if (since == std::chrono::steady_clock::time_point{}) since = now;
    if (now - since > stuck_after)
      throw std::logic_error("Met-Cache: key " + std::to_string(key) + " has stayed indexed at a free or dead entry for " +
                             std::to_string(stuck_after.count()) + " ms");
  }
  static inline std::chrono::milliseconds stuck_after{10000};

  // An insert's entry, before its first image: no NVM-tuple yet, no Tx-CTS.
  static void clear_for_insert(Entry* e, uint64_t key, uint32_t table, uint32_t len) {
    memset(e->data(), 0, len);
    e->nvm = nullptr;
    e->key = key;
    e->table = table;
    e->cts = 0;
  }

  // After an access the CC granted: false if the tuple was deleted meanwhile (an insert's own
  // entry is visible while it is still new).
  static bool visible(const Entry* e, bool insert) {
    uint64_t s = e->state.load(std::memory_order_acquire);
    return insert ? (s & kNew) != 0 : (s & (kNew | kCopy)) == 0;
  }

  // A committed image, persisted at `slot` with `cts`, into its entry; `clear`: flags that end
  // with it (kNew for an insert). Readers see kDirty while the image changes.
  static void install(Entry* e, const char* image, uint32_t len, char* slot, uint64_t cts, uint64_t clear = 0) {
    e->state.fetch_or(kDirty, std::memory_order_relaxed);
    memcpy(e->data(), image, len);
    dev::write(e->data(), len);
    e->nvm = slot;
    e->cts = cts;
    e->state.fetch_and(~(kDirty | clear), std::memory_order_release);
  }

  // A committed delete, its tombstone at `slot`: the entry dies (lookups re-read the index).
  static void kill(Entry* e, char* slot, uint64_t cts) {
    e->nvm = slot;
    e->cts = cts;
    e->state.fetch_or(kCopy, std::memory_order_acq_rel);
  }

  // An entry a copy into another region left dead (kCopy, unpinned by the copier): its owner
  // reuses it before evicting anything (victim(), spare()). Left to CLOCK alone, dead entries
  // waited for the owner's hand to pass them twice, on its misses only, while every copy
  // evicted a live entry in the copier's region: with the database in DRAM and two threads,
  // 19% of accesses missed (issue 18 item 7).
  void bury(Entry* e) {
    Dead& d = dead_[size_t(region_of(e))];
    std::lock_guard g(d.mu);
    d.list.push_back(e);
    d.n.store(d.list.size(), std::memory_order_release);
  }

  // A free entry of `region` without evicting a live one: a dead entry, or the never used one
  // at the hand. nullptr when there is none.
  Entry* spare(int region, uint64_t& hand) {
    if (Entry* e = exhume(region)) return e;
    Entry* e = at(region, hand);
    if (!claim(e, e->state.load(std::memory_order_acquire))) return nullptr;
    hand = hand + 1 == per_region_ ? 0 : hand + 1;
    return e;
  }

  // Entries dead from copies (or deletes) not yet reused, over all regions (a scan: for stats).
  uint64_t dead_entries() const {
    uint64_t n = 0;
    for (uint64_t i = 0; i < per_region_ * uint64_t(regions_); i++) {
      uint64_t s = reinterpret_cast<const Entry*>(base_ + i * stride_)->state.load(std::memory_order_relaxed);
      n += (s & kCopy) && !(s & kFree);
    }
    return n;
  }

  // CLOCK over `region` from `hand`: the first entry with neither pins nor the clock bit (clock
  // bits passed over are cleared), after the region's dead entries. Returns it claimed (see
  // claim()) by the caller, after `unlink(e)` repointed the index of a live victim at its
  // NVM-tuple; nullptr when every entry is pinned.
  // `borrow` (a Met-Cache that holds the whole table): before evicting a live entry, take a
  // dead one of another region; a thread that runs ahead of the others (its misses and copies
  // fill its own region while theirs fill with dead entries) then loses no cached tuple.
  // `keep(e)`: an unpinned entry that must stay cached for now (Zen+'s snapshot readers).
  template <class Unlink, class Keep = std::nullptr_t>
  Entry* victim(int region, uint64_t& hand, Unlink&& unlink, bool borrow = false, Keep&& keep = nullptr) {
    if (Entry* e = exhume(region)) return e;
    for (int r = 0; borrow && r < regions_; r++)
      if (r != region)
        if (Entry* e = exhume(r)) return e;
    for (uint64_t step = 0; step < 2 * per_region_ + 1; step++) {
      Entry* e = at(region, hand);
      hand = hand + 1 == per_region_ ? 0 : hand + 1;
      uint64_t s = e->state.load(std::memory_order_acquire);
      if (s & kFree) {
        if (claim(e, s)) return e;
        continue;
      }
      if (s & kPinMask) continue;
      if (s & kClock) {
        e->state.compare_exchange_strong(s, s & ~kClock, std::memory_order_relaxed);
        continue;
      }
      if constexpr (!std::is_same_v<std::decay_t<Keep>, std::nullptr_t>)
        if (!(s & kCopy) && keep(e)) continue;
      if (!e->state.compare_exchange_strong(s, kFree | 1, std::memory_order_acq_rel)) continue;
      if (!(s & kCopy)) unlink(e);  // a dead copy is no longer in the index
      evictions++;
      return e;
    }
    return nullptr;
  }

  std::atomic<uint64_t> evictions{0};
  std::atomic<uint64_t> reclaimed_dead{0};  // dead entries reused through bury()

 private:
  struct alignas(64) Dead {
    std::mutex mu;
    std::vector<Entry*> list;
    std::atomic<size_t> n{0};
  };
  // A buried entry, claimed by the caller as claim() does (kFree with one pin: the caller may
  // be another thread, under borrow). An entry may be listed twice (CLOCK reused it, it died
  // again) or be live again: only a dead, unpinned one is taken.
  Entry* exhume(int region) {
    Dead& d = dead_[size_t(region)];
    if (!d.n.load(std::memory_order_acquire)) return nullptr;
    std::lock_guard g(d.mu);
    while (!d.list.empty()) {
      Entry* e = d.list.back();
      d.list.pop_back();
      d.n.store(d.list.size(), std::memory_order_relaxed);
      uint64_t s = e->state.load(std::memory_order_acquire);
      if ((s & kCopy) && !(s & (kFree | kPinMask)) &&
          e->state.compare_exchange_strong(s, kFree | 1, std::memory_order_acq_rel)) {
        reclaimed_dead.fetch_add(1, std::memory_order_relaxed);
        return e;
      }
    }
    return nullptr;
  }

  uint64_t stride_, per_region_;
  int regions_;
  dev::DramBudget& dram_;
  std::string what_;
  uint64_t bytes_ = 0, data_bytes_ = 0;
  char* base_ = nullptr;
  std::unique_ptr<Dead[]> dead_;
};

// Met-Cache sizing (section 3.2): maximize the expected hits sum_i f_i * C_i / S_i under
// sum_i C_i <= M with C_i >= C_min, by the greedy knapsack: every HTable gets its minimum, then
// the rest goes to the HTables in descending f_i / S_i (S_i in bytes, so the ratio is the value
// per byte of cache), each up to what caches it whole.
struct CacheDemand {
  double f = 1;               // tuples of this table a transaction accesses on average
  uint64_t table_bytes = 0;   // S_i
  uint64_t entry_bytes = 0;   // DRAM per Met-Cache entry
  uint64_t min_entries = 0;   // C_min
  uint64_t max_entries = 0;   // enough to hold the whole table
  uint64_t spread_entries = 0;  // more, if the budget still allows after every table is whole
};

// Entries per HTable. M is the DRAM for data left (DramBudget::data_left()): the Met-Cache
// holds data, at most database / P. A database so small that M is below the minimums (a
// transaction's working set per region, without which the engine cannot run) gets exactly the
// minimums when `room` (the whole budget left) holds them: MetCache lists what exceeds the
// data cap as overhead (`.floor`), never more than that floor. Else dev::BudgetError.
inline std::vector<uint64_t> plan_cache(uint64_t M, const std::vector<CacheDemand>& d, uint64_t room = 0) {
  std::vector<uint64_t> c(d.size());
  uint64_t need = 0;
  for (size_t i = 0; i < d.size(); i++) {
    c[i] = d[i].min_entries;
    need += c[i] * d[i].entry_bytes;
  }
  if (need > M && need <= room) return c;
  if (need > M)
    throw dev::BudgetError("DRAM budget too small for Zen's minimum Met-Cache: needs " +
                           std::to_string(need) + " B, " + std::to_string(std::max(M, room)) +
                           " B left after indexes and private data (raise --dram-size)");
  uint64_t left = M - need;
  std::vector<size_t> order(d.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return d[a].f * double(d[b].table_bytes) > d[b].f * double(d[a].table_bytes);
  });
  // Second pass: room for what the first pass left (spread_entries), in the same order.
  for (bool spread : {false, true})
    for (size_t i : order) {
      uint64_t cap = spread ? std::max(d[i].spread_entries, d[i].max_entries) : d[i].max_entries;
      uint64_t room = cap > c[i] ? cap - c[i] : 0;
      uint64_t extra = std::min(room, left / d[i].entry_bytes);
      c[i] += extra;
      left -= extra * d[i].entry_bytes;
    }
  return c;
}

}  // namespace nvt::zen
