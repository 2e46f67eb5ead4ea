// The NVM device model's hot path: every engine and CC touch of memory that may be NVM goes
// through these inline calls. They count per-thread traffic and charge the target device's
// cost (calibrated busy-waits) for addresses inside the NVM image; DRAM addresses are only
// counted. Nothing outside storage/device calls libpmem or decides what memory costs.
//
// The one counting rule: every store to NVM is counted once, where it reaches the device. A
// store that is flushed (flush, persist) or streamed (nt_copy) is counted by that call alone;
// write() is only for stores that reach NVM with no flush (volatile NVM, metadata words left to
// eviction). Never write() and then flush() the same bytes. Reads of NVM, recovery's included,
// go through read().
//
// Build with -DDEVICE_MODEL=0 to compile counting and charging out (flushes and fences still
// happen, so persistence is unchanged); used to measure the model's own overhead.
#pragma once
#include <cstddef>
#include <array>
#include <cstdint>
#include <x86intrin.h>

#include <libpmem.h>

#include "storage/device/numa.h"

#ifndef DEVICE_MODEL
#define DEVICE_MODEL 1
#endif

namespace nvt::dev {

// Per-thread traffic counters. Monotonic: the harness snapshots them at phase boundaries so
// that only the measured phase is reported.
struct Counters {
  uint64_t clwb = 0;             // cache lines written back by flush()
  uint64_t sfence = 0;           // fences
  uint64_t nvm_read_bytes = 0;   // charged in 256 B units, as the device reads
  uint64_t nvm_write_bytes = 0;  // bytes that reach NVM (flushed, streamed or volatile stores)
  uint64_t dram_bytes = 0;       // bytes read or written in DRAM through the model
  uint64_t remote = 0;           // accesses to another NUMA node's memory (the four below)
  uint64_t charged_cycles = 0;   // busy-wait the model added
  // Accesses (one model call each: a read, a store, a flush, a streamed copy) by kind, and
  // those of them that went to another node's memory (numa.h).
  uint64_t nvm_reads = 0, nvm_writes = 0, dram_reads = 0, dram_writes = 0;
  uint64_t remote_nvm_reads = 0, remote_nvm_writes = 0, remote_dram_reads = 0, remote_dram_writes = 0;
  uint64_t debt_cycles = 0;      // charged but not yet waited

  static constexpr size_t kFields = 15;  // every field but debt_cycles, in declaration order
  std::array<uint64_t, kFields> fields() const;
  static Counters from(const std::array<uint64_t, kFields>& f);

  Counters& operator+=(const Counters& o);
  Counters operator-(const Counters& o) const;
};

// Process-wide parameters, set once by Device::open() before workers start.
struct Model {
  char* base = nullptr;   // NVM image [base, end)
  char* end = nullptr;
  bool charges = false;   // false under the `dram` profile
  bool eadr = false;      // caches in the persistence domain: no clwb needed
  int nodes = 1;          // NUMA nodes (numa.h)
  Placement placement = Placement::Stripe;
  uint64_t node_span = 0; // bytes of the image per node (its per-node NVM pools)
  // Target costs minus what the host already pays, in TSC cycles.
  uint64_t read_unit_cycles = 0;      // first 256 B unit of an access
  uint64_t read_seq_unit_cycles = 0;  // each further unit
  uint64_t write_unit_cycles = 0;     // one 256 B unit written back, at this writer count
  uint64_t fence_cycles = 0;
  double remote_read_factor = 1.0;   // NVM read of another node
  double remote_write_factor = 1.0;  // NVM write-back to another node
  uint64_t remote_dram_cycles = 0;   // added to a DRAM access of another node
  double tsc_per_ns = 1.0;
};

extern Model g_model;
Counters& my_counters();          // this thread's counters
void set_thread_node(int node);   // logical NUMA node of the calling thread
int thread_node();
void pay_debt();                  // busy-wait what this thread owes now

// Threads other than the measured workers (an engine's background threads, recovery's and the
// loaders' helpers) publish their counters so that the harness counts their traffic in the
// window it chooses (the measured phase, a recovery): publish() copies the calling thread's
// counters to its slot, registered on first use; published() sums every slot registered
// (threads that ended included), so the difference of two calls is the traffic published in
// between. A thread publishes at its own boundaries (each checkpoint, batch or epoch, and
// before it ends), which bounds how exactly its traffic falls into a window.
void publish();
Counters published();

constexpr uint64_t kLine = 64;
constexpr uint64_t kUnit = 256;            // Optane's internal access unit (XPLine)
constexpr uint64_t kDebtThreshold = 4096;  // cycles owed before the thread actually waits

inline bool is_nvm(const void* p) {
  auto c = static_cast<const char*>(p);
  return c >= g_model.base && c < g_model.end;
}

// Number of 256 B units that [p, p+len) touches.
inline uint64_t units(const void* p, size_t len) {
  auto a = reinterpret_cast<uintptr_t>(p);
  return len == 0 ? 0 : ((a + len - 1) / kUnit) - (a / kUnit) + 1;
}

// The node owning NVM address p / DRAM address p under the run's placement (numa.h).
inline int nvm_node(const void* p) {
  uint64_t off = uint64_t(static_cast<const char*>(p) - g_model.base);
  switch (g_model.placement) {
    case Placement::Local: return 0;
    case Placement::Remote: return 1;
    case Placement::Naive: return int(off / kInterleaveBytes % uint64_t(g_model.nodes));
    case Placement::LocalWrite:
    case Placement::SoftPartition: return int(off / kNodeExtentBytes % uint64_t(g_model.nodes));
    default: return int(off / g_model.node_span);  // stripe
  }
}
inline int dram_node(const void* p) {
  switch (g_model.placement) {
    case Placement::Local: return 0;
    case Placement::Remote: return 1;
    case Placement::Naive: return int(reinterpret_cast<uintptr_t>(p) / kInterleaveBytes % uint64_t(g_model.nodes));
    case Placement::LocalWrite:
    case Placement::SoftPartition: return dram_pool_node(p, thread_node());
    default: return thread_node();  // stripe: DRAM is not placed
  }
}

#if DEVICE_MODEL
inline void charge(Counters& c, uint64_t cycles) {
  c.charged_cycles += cycles;
  c.debt_cycles += cycles;
  if (c.debt_cycles >= kDebtThreshold) pay_debt();
}

// An access of NVM at p costing `cycles` locally; a remote one costs `factor` times more.
inline void charge_nvm(Counters& c, uint64_t cycles, const void* p, bool is_write) {
  bool remote = g_model.nodes > 1 && nvm_node(p) != thread_node();
  if (is_write) {
    c.nvm_writes++;
    if (remote) c.remote_nvm_writes++, c.remote++, cycles = uint64_t(double(cycles) * g_model.remote_write_factor);
  } else {
    c.nvm_reads++;
    if (remote) c.remote_nvm_reads++, c.remote++, cycles = uint64_t(double(cycles) * g_model.remote_read_factor);
  }
  if (g_model.charges) charge(c, cycles);
}

// A DRAM access through the model: counted; one of another node's DRAM also pays the profile's
// remote DRAM latency.
inline void touch_dram(Counters& c, const void* p, size_t len, bool is_write) {
  c.dram_bytes += len;
  (is_write ? c.dram_writes : c.dram_reads)++;
  if (g_model.nodes > 1 && dram_node(p) != thread_node()) {
    (is_write ? c.remote_dram_writes : c.remote_dram_reads)++;
    c.remote++;
    if (g_model.charges) charge(c, g_model.remote_dram_cycles);
  }
}

// The engine or CC reads len bytes at p.
inline void read(const void* p, size_t len) {
  Counters& c = my_counters();
  if (!is_nvm(p)) return touch_dram(c, p, len, false);
  uint64_t u = units(p, len);
  c.nvm_read_bytes += u * kUnit;
  charge_nvm(c, g_model.read_unit_cycles + (u - 1) * g_model.read_seq_unit_cycles, p, false);
}

// The engine or CC stored len bytes at p that will reach the device without an explicit flush
// (NVM used as volatile memory, or metadata words): bandwidth is spent all the same. Bytes that
// are flushed are counted by flush() instead (the rule above).
inline void write(const void* p, size_t len) {
  Counters& c = my_counters();
  if (!is_nvm(p)) return touch_dram(c, p, len, true);
  uint64_t u = units(p, len);
  c.nvm_write_bytes += u * kUnit;
  charge_nvm(c, u * g_model.write_unit_cycles, p, true);
}

// Read-modify-write of a small word (a lock or timestamp) left unflushed: one access, one unit
// written. A flushed word: read() then flush().
inline void update(const void* p, size_t len) { read(p, len); write(p, len); }
#else
inline void read(const void*, size_t) {}
inline void write(const void*, size_t) {}
inline void update(const void*, size_t) {}
#endif

// Persistence primitives. flush = one clwb per line (none under eADR, where caches are
// persistent); fence = sfence. Both are the only places the persistent image may change in the
// power-failure mode to come.
void flush(const void* p, size_t len);
void fence();
// flush() of lines whose stores were already counted where they were made (a CC method's
// dev::update/write on metadata an engine keeps in persistent NVM, as WBL does): counts the
// clwb and nothing more, so each store is counted once.
void flush_written(const void* p, size_t len);
// Non-temporal copy of len bytes into NVM (no fence), counted as written and flushed.
void nt_copy(void* dst, const void* src, size_t len);
// Convenience: flush then fence.
inline void persist(const void* p, size_t len) { flush(p, len); fence(); }

}  // namespace nvt::dev
