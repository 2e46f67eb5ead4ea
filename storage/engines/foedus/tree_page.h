// The pages of FOEDUS's ordered tree (tree_storage.h), volatile (DRAM) and snapshot (NVM) alike
// (page.h's 64 B header, whose spare words hold the tree's):
//   hdr.level 0 = leaf; every page covers the keys [low, high) (high kInfKey: no bound), fixed
//             for the page's life (a split makes new pages)
//   leaf:     records of [key 8 B][TID word 8 B: the CC's Meta][payload], `count` of them. In a
//             volatile page in arrival order: a record never moves within its page (a
//             transaction's RowRef stays valid; only a split copies it, setting kTidMoved on the
//             old copy); an insert writes its record, then publishes `count` (release), so a
//             reader that loads `count` (acquire) sees whole records without a lock. In a
//             snapshot page sorted by key, with no absent record.
//   interior: entries of [low key 8 B][DualPointer 16 B], `count` of them, sorted; entry i covers
//             [key i, key i+1) (the last up to the page's high; entry 0's key is the page's low).
//             Keys and count are read and written as atomics: readers read them optimistically.
//   version:  the page's lock and the OCC node set's word: kLocked (a writer holds the page),
//             kChanging (an interior page's entries are being shifted in place: readers wait and
//             re-read), kMoved (a split replaced the page by its foster twins, hdr.reserved[4] and
//             hdr.index, for good) over a counter bumped by every insert into a leaf, every change
//             of an interior page's entries and the split that moves the page: the node set of a
//             scan or of a lookup that found no key validates it (phantoms).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

#include "storage/engines/foedus/epoch.h"
#include "storage/engines/foedus/page.h"

namespace nvt::foedus {

constexpr uint64_t kInfKey = ~0ull;
constexpr uint64_t kEntryBytes = 8 + sizeof(DualPointer);

struct TreeGeometry {
  uint32_t page_size = 4096;
  uint32_t len = 0;       // tuple bytes
  uint32_t slot = 0;      // record: key + TID + payload, 8 B aligned
  uint64_t per_leaf = 0;  // records per leaf page
  uint64_t fanout = 0;    // entries per interior page

  TreeGeometry(uint32_t page, uint32_t tuple, const std::string& table) : page_size(page), len(tuple) {
    if (!Geometry::power_of_two(page) || page < 256)
      throw std::invalid_argument("--page-size " + std::to_string(page) + " is not a power of two of at least 256 B");
    slot = 16 + (tuple + 7) / 8 * 8;
    per_leaf = (page - sizeof(PageHeader)) / slot;
    if (per_leaf < 2)  // a split leaves at least one record on each side
      throw std::invalid_argument("--page-size " + std::to_string(page) + " cannot hold two records of table " + table +
                                  " (" + std::to_string(slot) + " B each with key and TID, after a " +
                                  std::to_string(sizeof(PageHeader)) + " B page header), which its ordered tree needs");
    fanout = (page - sizeof(PageHeader)) / kEntryBytes;
  }
  // Records a leaf gets when written whole (load, restart): room is left for inserts.
  uint64_t fill() const { return std::max<uint64_t>(1, per_leaf * 3 / 4); }
};

// A leaf of a snapshot tree as the gleaner's page table lists it.
struct TreeLeaf {
  uint64_t low, high;
  SnapshotPtr ptr;
};

namespace tp {
inline uint64_t& low(Page* p) { return p->hdr.reserved[0]; }
inline uint64_t& high(Page* p) { return p->hdr.reserved[1]; }
inline uint64_t& count(Page* p) { return p->hdr.reserved[2]; }
inline uint64_t low(const Page* p) { return p->hdr.reserved[0]; }
inline uint64_t high(const Page* p) { return p->hdr.reserved[1]; }
inline uint64_t count(const Page* p) { return p->hdr.reserved[2]; }
inline std::atomic<uint64_t>* version(Page* p) { return reinterpret_cast<std::atomic<uint64_t>*>(&p->hdr.reserved[3]); }
// The version word as a reader loads it.
inline uint64_t ver(const Page* p) { return version(const_cast<Page*>(p))->load(std::memory_order_acquire); }
constexpr uint64_t kLocked = kTidLock, kMoved = kTidMoved, kChanging = 1ull << 61;

// Words readers load while a writer may store them (count, interior keys, foster twins).
inline uint64_t load(const uint64_t& w, std::memory_order o = std::memory_order_relaxed) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(w)).load(o);
}
inline void store(uint64_t& w, uint64_t v, std::memory_order o = std::memory_order_relaxed) {
  std::atomic_ref<uint64_t>(w).store(v, o);
}
// `count` as a reader sees it: every record (entry) below it is whole.
inline uint64_t count_acq(const Page* p) { return load(p->hdr.reserved[2], std::memory_order_acquire); }
// A moved page's foster twins: minor covers [low, minor's high), major the rest (null when the
// split compacted the page into the minor alone).
inline Page* foster_minor(const Page* p) { return reinterpret_cast<Page*>(load(p->hdr.reserved[4])); }
inline Page* foster_major(const Page* p) { return reinterpret_cast<Page*>(load(p->hdr.index)); }
inline void set_foster(Page* p, Page* minor, Page* major) {
  store(p->hdr.reserved[4], reinterpret_cast<uint64_t>(minor));
  store(p->hdr.index, reinterpret_cast<uint64_t>(major));
}
// The foster twin of moved page `p` whose range holds `k`.
inline Page* foster_of(const Page* p, uint64_t k) {
  Page* m = foster_minor(p);
  return k < high(m) ? m : foster_major(p);
}

// A writer's lock on the page: spins while another holds it. Returns the word before locking.
inline uint64_t lock(Page* p) {
  std::atomic<uint64_t>* v = version(p);
  for (;;) {
    uint64_t w = v->load(std::memory_order_relaxed);
    if (!(w & kLocked) && v->compare_exchange_weak(w, w | kLocked, std::memory_order_acquire)) return w;
    std::this_thread::yield();
  }
}
// Unlock: `w` as lock() returned it, the counter bumped when the page changed.
inline void unlock(Page* p, uint64_t w, bool changed) { version(p)->store(changed ? w + 1 : w, std::memory_order_release); }

inline uint64_t& key(Page* p, uint64_t i, uint32_t slot) { return *reinterpret_cast<uint64_t*>(p->body() + i * slot); }
inline uint64_t key(const Page* p, uint64_t i, uint32_t slot) {
  return *reinterpret_cast<const uint64_t*>(p->body() + i * slot);
}
inline std::atomic<uint64_t>* tid(Page* p, uint64_t i, uint32_t slot) {
  return reinterpret_cast<std::atomic<uint64_t>*>(p->body() + i * slot + 8);
}
inline uint64_t tid(const Page* p, uint64_t i, uint32_t slot) {
  return reinterpret_cast<const std::atomic<uint64_t>*>(p->body() + i * slot + 8)->load(std::memory_order_relaxed);
}
inline char* payload(Page* p, uint64_t i, uint32_t slot) { return p->body() + i * slot + 16; }
inline const char* payload(const Page* p, uint64_t i, uint32_t slot) { return p->body() + i * slot + 16; }

inline uint64_t& ekey(Page* p, uint64_t i) { return *reinterpret_cast<uint64_t*>(p->body() + i * kEntryBytes); }
inline uint64_t ekey(const Page* p, uint64_t i) { return load(*reinterpret_cast<const uint64_t*>(p->body() + i * kEntryBytes)); }
inline DualPointer* entry(Page* p, uint64_t i) { return reinterpret_cast<DualPointer*>(p->body() + i * kEntryBytes + 8); }
inline const DualPointer* entry(const Page* p, uint64_t i) {
  return reinterpret_cast<const DualPointer*>(p->body() + i * kEntryBytes + 8);
}
// The entry of an interior page whose range holds `k`.
inline uint64_t child_of(const Page* p, uint64_t k) {
  uint64_t lo = 1, hi = load(p->hdr.reserved[2]);  // first entry with key > k, minus one
  while (lo < hi) {
    uint64_t mid = (lo + hi) / 2;
    if (ekey(p, mid) <= k) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
// The key range [first, second) of entry i.
inline std::pair<uint64_t, uint64_t> range(const Page* p, uint64_t i) {
  return {i == 0 ? low(p) : ekey(p, i), i + 1 < load(p->hdr.reserved[2]) ? ekey(p, i + 1) : high(p)};
}
// A key's record in a sorted (snapshot) leaf, or -1.
inline int64_t find_sorted(const Page* p, uint64_t k, uint32_t slot) {
  uint64_t lo = 0, hi = count(p);
  while (lo < hi) {
    uint64_t mid = (lo + hi) / 2;
    if (key(p, mid, slot) < k) lo = mid + 1;
    else hi = mid;
  }
  return lo < count(p) && key(p, lo, slot) == k ? int64_t(lo) : -1;
}
// A key's record in a volatile leaf (arrival order), or -1.
inline int64_t find(const Page* p, uint64_t k, uint32_t slot) {
  for (uint64_t i = 0, n = count_acq(p); i < n; i++)
    if (key(p, i, slot) == k) return int64_t(i);
  return -1;
}
inline void init(Page* p, uint32_t storage, uint16_t level, uint64_t lo, uint64_t hi) {
  p->hdr = PageHeader{storage, level, 0, 0, 0, {}};
  low(p) = lo;
  high(p) = hi;
}
}  // namespace tp

}  // namespace nvt::foedus
