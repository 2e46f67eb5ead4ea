// What the multi-version methods (MVCC, HEKATON, CICADA) share.
//
// The engine owns a tuple's newest committed image (row.data, in DRAM or NVM) and installs a
// writer's private after-image (a.local) between validate() and finish(). The older versions a
// multi-version method needs live here, in DRAM, as a chain of immutable Version nodes (newest
// first) whose head the per-tuple Meta points to. A Meta is 32 bytes of plain words, so Zen may
// move it by memcpy while the committing transaction holds the tuple (copy_to_own_region()).
//
// The word of a Meta: kLock while a writer holds the tuple, kInstall from the moment the writer
// has saved the before-image into the chain (its engine install may then overwrite row.data:
// readers of the old version take it from the chain), and the low bits: the timestamp of the
// current image (its wts / begin).
//
// Reclamation: a node is retired into its creator's FIFO (timestamps of one thread grow, so the
// FIFO is ordered) and freed into a per-thread pool once no running or future transaction can
// read at a timestamp before the node's `end` (the watermark below). Nothing is freed while
// reachable by a reader: readers only walk the chain while looking for a version older than the
// current one, and never past the first node whose wts is at most their timestamp. A freed node
// may stay linked behind such a node (never followed); a new head older than the watermark is
// saved without a tail.
//
// Watermark protocol (one Registry per method, as their timestamp spaces differ): a transaction
// publishes its timestamp in its slot and only then checks it exceeds `announce`; a refresh
// first raises `announce` to `now`, then scans the slots. Either the refresh sees the slot, or
// the transaction sees the raised `announce` and takes a later timestamp, so
//   min_ts = min(now, active read-write slots) <= every current and future read-write ts.
// Readers that read below min_ts (Cicada's read-only snapshots) publish min_ts - 1 and recheck
// min_ts, so a refresh that missed them loaded a min_ts no larger than theirs.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <stdexcept>
#include <vector>

#include "concurrency_control/cc.h"

namespace nvt::cc::mv {

constexpr uint64_t kLock = 1ull << 63;
constexpr uint64_t kInstall = 1ull << 62;
constexpr uint64_t kTsMask = kInstall - 1;
constexpr uint64_t kReadOnlySlot = 1ull << 63;  // in a slot: a snapshot reader, not in min_ts
constexpr int kMaxSlots = 256;
constexpr uint32_t kRefreshEvery = 16;  // commits between watermark refreshes of a thread

inline uint64_t ts_of(uint64_t word) { return word & kTsMask; }

// What an engine that drops a tuple's CC-Meta (Zen evicting a Met-Cache entry) keeps of it:
// the largest write and read timestamps its history held. Zen keeps the maximum over the
// entries it evicted and hands it back to refilled() when a tuple comes back from NVM: every
// refilled tuple's true wts and rts are at most these, so the refill is exact enough for
// readers younger than the last eviction (all but the oldest), where stamping the image with
// "now" made every transaction begun before the latest commit (Cicada's read-only snapshots
// always) fail to read it (issue 18 item 1).
struct History {
  uint64_t wts = 0;  // timestamp of the current image
  uint64_t rts = 0;  // largest timestamp that read it (0 where the method keeps none)
};

struct Version {
  uint64_t wts;                        // timestamp of this image
  uint64_t end;                        // timestamp of the image that replaced it
  std::atomic<Version*> next{nullptr};  // the next older version
  uint32_t cls;                        // size class in the pool (64-byte units)
  uint32_t len;
  char* data() { return reinterpret_cast<char*>(this + 1); }
};

// Access::held of a tuple the transaction has locked for its write.
constexpr uint8_t kLocked = 1;

// Per-tuple part common to the three methods.
struct Chain {
  std::atomic<uint64_t> word{0};        // kLock | kInstall | timestamp of the current image
  std::atomic<Version*> head{nullptr};  // older versions, newest first
};

// The per-tuple CC-Meta of the methods that keep read timestamps (MVCC, CICADA). 32 bytes of
// plain words, as Zen moves it by memcpy.
struct RtsMeta {
  Chain chain;
  std::atomic<uint64_t> rts{0};     // largest timestamp that read the current image
  std::atomic<uint64_t> holder{0};  // timestamp of the writer holding the tuple (0: none, or not yet set)
  // Zen drops this Meta on eviction (History); a refill gets back bounds of what it held.
  History history() const {
    return {ts_of(chain.word.load(std::memory_order_acquire)), rts.load(std::memory_order_acquire)};
  }
  // Refilled from NVM: its image was written at most at bound.wts (0: the loaded image) and
  // read at most at bound.rts, so a reader above bound.wts reads it and a writer above
  // bound.rts may overwrite it; older ones abort, as its older versions are gone.
  void refilled(const History& bound, bool written) {
    chain.word.store(written ? bound.wts : 0, std::memory_order_relaxed);
    rts.store(std::max(bound.rts, written ? bound.wts : 0), std::memory_order_relaxed);
  }
};

// The newest version in the chain with wts <= ts (`strict`: wts < ts), or nullptr.
inline Version* find(const Chain& c, uint64_t ts, bool strict) {
  for (Version* v = c.head.load(std::memory_order_acquire); v; v = v->next.load(std::memory_order_acquire)) {
    dev::read(v, sizeof *v);
    if (strict ? v->wts < ts : v->wts <= ts) return v;
  }
  return nullptr;
}

struct Registry {
  struct alignas(64) Slot {
    std::atomic<uint64_t> ts{0};  // 0: no transaction; else its ts (| kReadOnlySlot)
    std::atomic<uint64_t> last_wts{0};  // largest timestamp this slot's thread installed
    std::atomic<bool> used{false};
  };
  Slot slots[kMaxSlots];
  std::atomic<int> high{0};  // slots ever handed out
  alignas(64) std::atomic<uint64_t> announce{0};
  alignas(64) std::atomic<uint64_t> min_ts{0};
  std::mutex orphan_mu;
  std::vector<Version*> orphans;  // retired nodes of threads that went away

  ~Registry() {
    for (Version* v : orphans) ::operator delete(v, std::align_val_t(64));
  }

  int acquire() {
    for (int i = 0; i < kMaxSlots; i++) {
      bool f = false;
      if (slots[i].used.compare_exchange_strong(f, true)) {
        int h = high.load();
        while (h <= i && !high.compare_exchange_weak(h, i + 1)) {}
        return i;
      }
    }
    throw std::runtime_error("mv: more than 256 concurrent transaction managers");
  }
  void release(int i) {
    slots[i].ts.store(0, std::memory_order_seq_cst);
    slots[i].used.store(false, std::memory_order_release);
  }

  // Publish a read-write timestamp from next(); retried until it exceeds `announce`.
  // next(floor) must return a timestamp > floor when floor is nonzero.
  template <class Next>
  uint64_t enter(int slot, Next&& next) {
    uint64_t floor = 0;
    for (;;) {
      uint64_t ts = next(floor);
      slots[slot].ts.store(ts, std::memory_order_seq_cst);
      floor = announce.load(std::memory_order_seq_cst);
      if (ts > floor) return ts;
    }
  }
  // Publish a snapshot timestamp min_ts - 1 (see the header comment). Returns it.
  uint64_t enter_snapshot(int slot) {
    for (uint64_t m = min_ts.load(std::memory_order_seq_cst);;) {
      uint64_t ts = m ? m - 1 : 0;
      slots[slot].ts.store(ts | kReadOnlySlot, std::memory_order_seq_cst);
      uint64_t again = min_ts.load(std::memory_order_seq_cst);
      if (again == m) return ts;
      m = again;
    }
  }
  // Every committed version's timestamp is at most this (for a Meta whose history is lost).
  uint64_t max_installed() const {
    uint64_t m = 0;
    int h = high.load(std::memory_order_acquire);
    for (int i = 0; i < h; i++) m = std::max(m, slots[i].last_wts.load(std::memory_order_acquire));
    return m;
  }
  void installed(int slot, uint64_t ts) {
    if (slots[slot].last_wts.load(std::memory_order_relaxed) < ts)
      slots[slot].last_wts.store(ts, std::memory_order_release);
  }
  void leave(int slot) { slots[slot].ts.store(0, std::memory_order_release); }

  // Raise min_ts; returns the reclamation bound: every current and future reader's ts is at
  // least it.
  uint64_t refresh(uint64_t now) {
    uint64_t a = announce.load(std::memory_order_relaxed);
    while (a < now && !announce.compare_exchange_weak(a, now, std::memory_order_seq_cst)) {}
    std::atomic_thread_fence(std::memory_order_seq_cst);
    uint64_t g = min_ts.load(std::memory_order_seq_cst);
    uint64_t m = now, bound = g ? g - 1 : 0;
    int h = high.load(std::memory_order_acquire);
    for (int i = 0; i < h; i++) {
      uint64_t v = slots[i].ts.load(std::memory_order_seq_cst);
      if (!v) continue;
      uint64_t t = v & ~kReadOnlySlot;
      bound = std::min(bound, t);
      if (!(v & kReadOnlySlot)) m = std::min(m, t);
    }
    uint64_t cur = min_ts.load(std::memory_order_relaxed);
    while (cur < m && !min_ts.compare_exchange_weak(cur, m, std::memory_order_seq_cst)) {}
    return bound;
  }
};

// A method's process-wide Registry and global timestamp counter (MVCC's and HEKATON's clock);
// Method keeps each method's apart.
template <class Method>
Registry& registry_of() {
  static Registry r;
  return r;
}
template <class Method>
std::atomic<uint64_t>& counter_of() {
  static std::atomic<uint64_t> c{1};
  return c;
}

// One transaction thread's versions: its registry slot, a pool of free nodes per size class
// (no allocation per write once warm) and the FIFO of retired nodes.
class Store {
 public:
  explicit Store(Registry& r) : reg_(r), slot_(r.acquire()) {
    std::lock_guard g(r.orphan_mu);  // adopt what threads that went away left behind
    retired_.insert(retired_.end(), r.orphans.begin(), r.orphans.end());
    r.orphans.clear();
  }
  ~Store() {
    for (Version* head : free_)
      while (head) {
        Version* n = head->next.load(std::memory_order_relaxed);
        ::operator delete(head, std::align_val_t(64));
        head = n;
      }
    {
      std::lock_guard g(reg_.orphan_mu);  // other threads may still read these
      reg_.orphans.insert(reg_.orphans.end(), retired_.begin(), retired_.end());
    }
    reg_.release(slot_);
  }
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  int slot() const { return slot_; }
  Registry& reg() { return reg_; }

  // A node holding a copy of `src` (len bytes) as version [wts, end).
  Version* make(const char* src, uint32_t len, uint64_t wts, uint64_t end) {
    uint32_t cls = uint32_t((sizeof(Version) + len + 63) / 64);
    if (free_.size() <= cls) free_.resize(cls + 1, nullptr);
    Version* v = free_[cls];
    if (v) free_[cls] = v->next.load(std::memory_order_relaxed);
    else v = new (::operator new(size_t(cls) * 64, std::align_val_t(64))) Version;
    v->wts = wts;
    v->end = end;
    v->cls = cls;
    v->len = len;
    v->next.store(nullptr, std::memory_order_relaxed);
    copy_tuple(v->data(), src, len);
    dev::write(v, sizeof *v + len);
    return v;
  }

  // The before-image of a locked tuple becomes the chain's head, [wts, end); from then readers
  // of that version use the node (kInstall), so the engine may overwrite row.data.
  void save_before_image(Chain& c, const char* image, uint32_t len, uint64_t wts, uint64_t end,
                         uint64_t locked_word) {
    Version* v = make(image, len, wts, end);
    Version* old = c.head.load(std::memory_order_relaxed);
    // No reader goes past a node whose wts is below the bound: cut the tail there. Older nodes
    // are not walked: one may already be reclaimed (its end was below another thread's bound).
    v->next.store(wts < bound_ ? nullptr : old, std::memory_order_relaxed);
    dev::update(&c, sizeof c);
    c.head.store(v, std::memory_order_release);
    c.word.store(locked_word | kInstall, std::memory_order_seq_cst);
    retired_.push_back(v);
  }
  // The same for the write access a, which holds the version a.tid, replaced at `end`.
  void save_before_image(Chain& c, const Access& a, uint64_t end) {
    save_before_image(c, a.row.data, a.len, a.tid, end, a.tid | kLock);
  }
  // An abort after save_before_image(): the current image stays; the node stays readable
  // until reclaimed (a reader may hold it).
  static void drop_before_image(Chain& c) {
    Version* v = c.head.load(std::memory_order_relaxed);
    if (v) c.head.store(v->next.load(std::memory_order_relaxed), std::memory_order_release);
  }

  // After a commit: refresh the watermark now and then and reclaim what it allows.
  template <class Now>
  void collect(Now&& now) {
    if (++commits_ % kRefreshEvery == 0 || retired_.size() > 4096) bound_ = reg_.refresh(now());
    while (!retired_.empty() && retired_.front()->end < bound_) {
      Version* v = retired_.front();
      retired_.pop_front();
      if (free_.size() <= v->cls) free_.resize(v->cls + 1, nullptr);
      v->next.store(free_[v->cls], std::memory_order_relaxed);
      free_[v->cls] = v;
    }
  }
  size_t retired() const { return retired_.size(); }

 private:
  Registry& reg_;
  int slot_;
  uint64_t bound_ = 0;
  uint32_t commits_ = 0;
  std::vector<Version*> free_;
  std::deque<Version*> retired_;
};

// What a transaction of each method carries: its timestamp, its versions' Store and, for a
// snapshot reader (read-only hint), whether a version it needed was gone (its retry is then a
// read-write transaction: a snapshot held back by a stalled writer would fail again).
template <class Method>
struct TxnBase {
  AbortCause cause = AbortCause::None;
  uint64_t ts = 0;
  bool read_only = false, snapshot_lost = false;
  uint32_t ro_begins = 0;
  Store store{Method::registry()};
};

// An optimistic copy of the current image, which the caller validates by rereading the word
// (seqlock-style: it may overlap the engine's install by design; tests/tsan.supp names it).
inline void optimistic_copy(Access& a) { copy_tuple(a.local, a.row.data, a.len); }

// A read of chain node v: a.local and a.tid (its wts).
inline const char* read_version(Access& a, Version* v) {
  copy_tuple(a.local, v->data(), a.len);
  a.tid = v->wts;
  return a.local;
}
// An optimistic read of the current image under word w: a.local and a.tid (its timestamp), or
// nullptr when the word changed meanwhile (look again).
inline const char* read_current(const Chain& c, Access& a, uint64_t w) {
  optimistic_copy(a);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (c.word.load(std::memory_order_seq_cst) != w) return nullptr;
  a.tid = ts_of(w);
  return a.local;
}

// A snapshot read at ts = min_ts - 1 (Registry::enter_snapshot; Zen+'s read-only transactions
// for MVCC and HEKATON, as Cicada's): every running or future writer's version is above ts, so
// nothing is waited for or validated and no read timestamp is raised. The current image when it
// is at or below ts and not being installed, else the chain's newest version at or below ts.
// nullptr: that version is gone (history reclaimed, or lost with an evicted Zen entry): the
// attempt aborts (ReadConflict) and its retry reads at a read-write timestamp.
template <class Txn, class M>
const char* snapshot_read(Txn& t, M* m, Access& a) {
  for (;;) {
    dev::read(m, sizeof *m);
    uint64_t w = m->chain.word.load(std::memory_order_seq_cst);
    if (ts_of(w) > t.ts || (w & kInstall)) {
      if (Version* v = find(m->chain, t.ts, false)) return read_version(a, v);
      t.snapshot_lost = true;
      t.cause = AbortCause::ReadConflict;
      return nullptr;
    }
    if (const char* p = read_current(m->chain, a, w)) return p;
  }
}

// Begin a snapshot reader (see snapshot_read()); a reader-only thread moves min_ts on itself now
// and then (writers refresh it as they commit). Returns its timestamp.
template <class Now>
uint64_t begin_snapshot(Registry& r, int slot, uint32_t& begins, Now&& now) {
  if (++begins % kRefreshEvery == 0 || !r.min_ts.load(std::memory_order_relaxed)) r.refresh(now());
  return r.enter_snapshot(slot);
}

// Begin an attempt of t: with the read-only hint a snapshot reader (begin_snapshot(); after a
// lost snapshot version, a read-write transaction instead), else a read-write transaction at a
// timestamp from next (Registry::enter).
template <class Txn, class Now, class Next>
void begin(Registry& r, Txn& t, bool read_only, Now&& now, Next&& next) {
  t.cause = AbortCause::None;
  if (t.snapshot_lost) read_only = t.snapshot_lost = false;
  t.read_only = read_only;
  t.ts = read_only ? begin_snapshot(r, t.store.slot(), t.ro_begins, now) : r.enter(t.store.slot(), next);
}

// The end of a committed attempt: its slot records the timestamp its writes installed (0:
// none) and leaves; a read-write transaction reclaims what the watermark allows.
template <class Txn, class Now>
void committed(Registry& r, Txn& t, uint64_t installed, Now&& now) {
  if (installed) r.installed(t.store.slot(), installed);
  r.leave(t.store.slot());
  if (!t.read_only) t.store.collect(now);
}

// Raise a read timestamp to ts. A writer locks the word, then checks rts; a reader raises rts,
// then rechecks the word (unchanged()): both seq_cst, so at least one of them sees the other.
inline void raise_rts(std::atomic<uint64_t>& rts, uint64_t ts) {
  uint64_t r = rts.load(std::memory_order_relaxed);
  if (r >= ts) { std::atomic_thread_fence(std::memory_order_seq_cst); return; }
  dev::write(&rts, sizeof rts);
  while (r < ts && !rts.compare_exchange_weak(r, ts, std::memory_order_seq_cst)) {}
}

// Whether a reader's decision on (word w, holder h) still stands: the word is w and, if w is
// locked, still by the same holder. The word alone is not enough: a holder that releases the
// tuple unchanged restores the very same word, and the next holder's lock sets the same bits,
// so a reader that let a holder above its timestamp pass could miss a holder below it that
// locked the tuple (and checked rts) before the reader's rts was raised.
inline bool unchanged(const Chain& c, uint64_t w, const std::atomic<uint64_t>& holder, uint64_t h) {
  return c.word.load(std::memory_order_seq_cst) == w &&
         (!(w & kLock) || holder.load(std::memory_order_seq_cst) == h);
}

// A committed write at ts becomes the current image: rts = wts = ts, no holder, unlocked.
inline void publish(Chain& c, std::atomic<uint64_t>& rts, std::atomic<uint64_t>& holder, uint64_t ts) {
  rts.store(ts, std::memory_order_relaxed);
  holder.store(0, std::memory_order_relaxed);
  c.word.store(ts, std::memory_order_seq_cst);
}

// Release a held tuple unchanged: drop a saved before-image, clear the holder, unlock.
inline void release(Chain& c, std::atomic<uint64_t>& holder) {
  uint64_t w = c.word.load(std::memory_order_relaxed);
  if (w & kInstall) Store::drop_before_image(c);
  holder.store(0, std::memory_order_seq_cst);
  c.word.store(ts_of(w), std::memory_order_seq_cst);
}

// Calls f(a) on every access the method holds (held != 0) and marks it released; returns
// whether there was one.
template <class F>
bool release_held(Access* acc, size_t n, F&& f) {
  bool any = false;
  for (size_t i = 0; i < n; i++) {
    if (!acc[i].held) continue;
    f(acc[i]);
    acc[i].held = 0;
    any = true;
  }
  return any;
}

// Lock a tuple's word without waiting: false when another writer holds it.
inline bool try_lock(Chain& c, uint64_t& word) {
  dev::update(&c.word, sizeof c.word);
  word = c.word.load(std::memory_order_relaxed);
  if (word & kLock) return false;
  return c.word.compare_exchange_strong(word, word | kLock, std::memory_order_seq_cst);
}

// A write that locks the tuple at once (MVCC, HEKATON: the first writer wins): WriteConflict
// when another writer holds it or when stale(w), checked holding the lock, says t may not
// overwrite the current image (word w), which unlock() then releases unchanged. A snapshot
// reader may not write (User). Else a.local is a copy of the current image.
template <class Txn, class Stale, class Unlock>
bool lock_for_write(Txn& t, Access& a, Chain& c, Stale&& stale, Unlock&& unlock) {
  if (t.read_only) { t.cause = AbortCause::User; return false; }
  uint64_t w;
  if (!try_lock(c, w)) { t.cause = AbortCause::WriteConflict; return false; }
  if (stale(w)) {
    unlock();
    t.cause = AbortCause::WriteConflict;
    return false;
  }
  a.held = kLocked;
  a.tid = ts_of(w);
  copy_tuple(a.local, a.row.data, a.len);  // we hold it: no installer
  return true;
}

}  // namespace nvt::cc::mv
