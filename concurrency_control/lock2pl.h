// What WAIT_DIE and DL_DETECT share: a lock word per tuple that names its holders, and a
// registry of the live transactions those names point to.
//
// DBx1000 keeps an owner list and a waiter queue per row. Here the row's lock word is the owner
// list as a bitmap: bit s set = the transaction in registry slot s holds the tuple, kEx = held
// exclusively (then exactly one bit is set). One word keeps the per-tuple metadata as small as
// NO_WAIT's (it may sit in NVM), and lets a waiter see who it waits for, which both methods
// need (WAIT_DIE compares timestamps, DL_DETECT adds waits-for edges). Waiters spin on the word
// instead of queueing; they re-decide at every change of the holders. The price: at most 63
// transactions at once (rundb's --threads), checked in start().
#pragma once
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "concurrency_control/cc.h"

namespace nvt::cc::lock2pl {

constexpr int kMaxSlots = 63;
constexpr uint64_t kEx = 1ull << 63;
enum : uint8_t { kNone = 0, kShared = 1, kExclusive = 2 };

struct Meta {
  std::atomic<uint64_t> word{0};  // kEx | holder bits
};

// Per-transaction state the other transactions may look at (DRAM, one cache line per slot).
struct alignas(64) SlotState {
  std::atomic<uint64_t> ts{0};        // WAIT_DIE: the transaction's timestamp
  std::atomic<uint64_t> waits_for{0}; // holder bits of the lock it waits for (0: not waiting)
};

// The registry of one method (Tag keeps WAIT_DIE's and DL_DETECT's apart in one test binary).
template <class Tag>
struct Registry {
  static inline SlotState slot[kMaxSlots];
  static inline std::atomic<uint64_t> used{0};

  static void check_threads(int threads, const char* method) {
    if (threads > kMaxSlots)
      throw std::invalid_argument(std::string(method) + " supports at most " +
                                  std::to_string(kMaxSlots) + " threads");
  }
  static int acquire(const char* method) {
    uint64_t u = used.load();
    for (;;) {
      if (~u & ~kEx) {
        int s = __builtin_ctzll(~u & ~kEx);
        if (used.compare_exchange_weak(u, u | (1ull << s))) return s;
      } else {
        throw std::runtime_error(std::string(method) + ": more than " +
                                 std::to_string(kMaxSlots) + " live transactions");
      }
    }
  }
  static void release(int s) { used.fetch_and(~(1ull << s)); }
};

// A transaction's registry slot, taken at its first begin() and held for the object's life.
template <class Tag>
class Slot {
 public:
  Slot() = default;
  Slot(Slot&& o) noexcept : id_(o.id_) { o.id_ = -1; }
  Slot& operator=(Slot&&) = delete;
  ~Slot() { if (id_ >= 0) Registry<Tag>::release(id_); }
  int get(const char* method) {
    if (id_ < 0) id_ = Registry<Tag>::acquire(method);
    return id_;
  }
  int id() const { return id_; }
  uint64_t bit() const { return 1ull << id_; }
  SlotState& state() const { return Registry<Tag>::slot[id_]; }

 private:
  int id_ = -1;
};

inline Meta* meta(Access& a) { return static_cast<Meta*>(a.row.meta); }

// Take `a` shared (kShared) or exclusive (kExclusive; also the upgrade of our own shared
// hold). On a conflict, decide(holders other than us) says whether to keep waiting (true) or to
// give up (false, after setting the cause). Returns whether the lock was taken.
template <class Decide>
bool acquire(Access& a, uint64_t me, uint8_t mode, Decide&& decide) {
  std::atomic<uint64_t>& word = meta(a)->word;
  dev::update(&word, sizeof word);
  uint64_t w = word.load(std::memory_order_relaxed);
  for (uint32_t spins = 0;;) {
    bool free = mode == kShared ? !(w & kEx) : (w & ~me) == 0;
    if (free) {
      uint64_t want = mode == kShared ? w | me : kEx | me;
      if (word.compare_exchange_weak(w, want, std::memory_order_acquire)) break;
      continue;
    }
    if (!decide(w & ~kEx & ~me)) return false;
    relax(spins);
    w = word.load(std::memory_order_relaxed);
  }
  a.held = mode;
  return true;
}

inline void release(Access* acc, size_t n, uint64_t me) {
  for (size_t i = 0; i < n; i++) {
    Access& a = acc[i];
    if (a.held == kNone) continue;
    std::atomic<uint64_t>& word = meta(a)->word;
    dev::update(&word, sizeof word);
    word.fetch_and(~(me | (a.held == kExclusive ? kEx : 0)), std::memory_order_release);
    a.held = kNone;
  }
}

// What read/write/upgrade do once the lock is taken: the in-place image for a read (it cannot
// change under a shared lock), a private copy for a write.
inline const char* locked_read(Access& a) {
  dev::read(a.row.data, a.len);
  return a.row.data;
}
inline void locked_write(Access& a) { copy_tuple(a.local, a.row.data, a.len); }

// The variants that wait (WAIT_DIE, DL_DETECT): a registry slot and a timestamp per
// transaction (taken at its first start and kept across its retries), a shared lock to read, an
// exclusive one to write, all held to commit. `Method::lock(t, a, mode, cause)` decides how a
// conflict waits and what ends the wait.
template <class Method>
struct Waiting {
  using Meta = lock2pl::Meta;
  using Slot = lock2pl::Slot<Method>;
  using Registry = lock2pl::Registry<Method>;

  struct Txn {
    AbortCause cause = AbortCause::None;
    uint64_t ts = 0;     // smaller = older
    bool retry = false;  // the last attempt aborted: the next begin() keeps ts
    Slot slot;
  };

  static inline std::atomic<uint64_t> next_ts{1};

  static void start(int threads) { Registry::check_threads(threads, Method::name); }
  static void stop() {}

  void begin(Txn& t) {
    t.cause = AbortCause::None;
    t.slot.get(Method::name);
    if (!t.retry) t.ts = next_ts.fetch_add(1, std::memory_order_relaxed);
    t.retry = false;
    t.slot.state().ts.store(t.ts, std::memory_order_release);
  }
  void abort(Txn& t, Access* acc, size_t n) {
    if (t.slot.id() >= 0) release(acc, n, t.slot.bit());
    t.retry = true;
  }

  template <class Txn>
  const char* read(Txn& t, Access& a) {
    if (!Method::lock(t, a, kShared, AbortCause::ReadConflict)) return nullptr;
    return locked_read(a);
  }
  template <class Txn>
  bool write(Txn& t, Access& a) {
    if (!Method::lock(t, a, kExclusive, AbortCause::WriteConflict)) return false;
    locked_write(a);
    return true;
  }
  template <class Txn>
  bool upgrade(Txn& t, Access& a) { return write(t, a); }
  template <class Txn>
  bool validate(Txn&, Access*, size_t) { return true; }  // locks already exclude conflicts
  template <class Txn>
  void finish(Txn& t, Access* acc, size_t n) { release(acc, n, t.slot.bit()); }
};

}  // namespace nvt::cc::lock2pl
