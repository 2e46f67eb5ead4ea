#include "storage/device/device.h"

#include <array>
#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>

#include "storage/device/power_fail.h"

namespace nvt::dev {

Model g_model;

namespace {
thread_local Counters t_counters;
thread_local int t_node = 0;

// A published copy of one thread's counters: written by its owner, read by the harness.
struct Slot {
  std::array<std::atomic<uint64_t>, Counters::kFields> f{};
};
std::mutex g_slots_mu;
std::deque<Slot> g_slots;  // a deque: slots never move
thread_local Slot* t_slot = nullptr;
}  // namespace

std::array<uint64_t, Counters::kFields> Counters::fields() const {
  return {clwb, sfence, nvm_read_bytes, nvm_write_bytes, dram_bytes, remote, charged_cycles,
          nvm_reads, nvm_writes, dram_reads, dram_writes,
          remote_nvm_reads, remote_nvm_writes, remote_dram_reads, remote_dram_writes};
}

Counters Counters::from(const std::array<uint64_t, kFields>& f) {
  Counters c;
  c.clwb = f[0], c.sfence = f[1], c.nvm_read_bytes = f[2], c.nvm_write_bytes = f[3];
  c.dram_bytes = f[4], c.remote = f[5], c.charged_cycles = f[6];
  c.nvm_reads = f[7], c.nvm_writes = f[8], c.dram_reads = f[9], c.dram_writes = f[10];
  c.remote_nvm_reads = f[11], c.remote_nvm_writes = f[12], c.remote_dram_reads = f[13];
  c.remote_dram_writes = f[14];
  return c;
}

void publish() {
  if (!t_slot) {
    std::lock_guard g(g_slots_mu);
    t_slot = &g_slots.emplace_back();
  }
  auto v = t_counters.fields();
  for (size_t i = 0; i < v.size(); i++) t_slot->f[i].store(v[i], std::memory_order_relaxed);
}

Counters published() {
  std::array<uint64_t, Counters::kFields> s{};
  {
    std::lock_guard g(g_slots_mu);
    for (auto& slot : g_slots)
      for (size_t i = 0; i < s.size(); i++) s[i] += slot.f[i].load(std::memory_order_relaxed);
  }
  return Counters::from(s);
}

Counters& my_counters() { return t_counters; }
void set_thread_node(int node) { t_node = node; }
int thread_node() { return t_node; }

Counters& Counters::operator+=(const Counters& o) {
  auto a = fields(), b = o.fields();
  for (size_t i = 0; i < kFields; i++) a[i] += b[i];
  uint64_t debt = debt_cycles + o.debt_cycles;
  *this = from(a);
  debt_cycles = debt;
  return *this;
}

Counters Counters::operator-(const Counters& o) const {
  auto a = fields(), b = o.fields();
  for (size_t i = 0; i < kFields; i++) a[i] -= b[i];
  return from(a);  // debt_cycles 0
}

void pay_debt() {
  Counters& c = t_counters;
  if (c.debt_cycles == 0) return;
  uint64_t until = __rdtsc() + c.debt_cycles;
  c.debt_cycles = 0;
  while (__rdtsc() < until) _mm_pause();
}

void flush(const void* p, size_t len) {
  if (len == 0) return;
#if DEVICE_MODEL
  Counters& c = t_counters;
  auto a = reinterpret_cast<uintptr_t>(p);
  uint64_t lines = ((a + len - 1) / kLine) - (a / kLine) + 1;
  if (!g_model.eadr) c.clwb += lines;
  uint64_t u = units(p, len);
  c.nvm_write_bytes += u * kUnit;
  charge_nvm(c, u * g_model.write_unit_cycles, p, true);
#endif
  if (!g_model.eadr) pmem_flush(p, len);
  if (g_power_fail) g_power_fail->on_flush(p, len);
}

void flush_written(const void* p, size_t len) {
  if (len == 0) return;
#if DEVICE_MODEL
  auto a = reinterpret_cast<uintptr_t>(p);
  if (!g_model.eadr) t_counters.clwb += ((a + len - 1) / kLine) - (a / kLine) + 1;
#endif
  if (!g_model.eadr) pmem_flush(p, len);
  if (g_power_fail) g_power_fail->on_flush(p, len);
}

void fence() {
#if DEVICE_MODEL
  Counters& c = t_counters;
  c.sfence++;
  if (g_model.charges) {
    // The fence waits for everything owed, then for the write-pending queue to drain.
    c.charged_cycles += g_model.fence_cycles;
    c.debt_cycles += g_model.fence_cycles;
    pay_debt();
  }
#endif
  pmem_drain();
  if (g_power_fail) g_power_fail->on_fence();
}

void nt_copy(void* dst, const void* src, size_t len) {
  if (len == 0) return;
#if DEVICE_MODEL
  Counters& c = t_counters;
  uint64_t u = units(dst, len);
  c.nvm_write_bytes += u * kUnit;
  charge_nvm(c, u * g_model.write_unit_cycles, dst, true);
#endif
  pmem_memcpy(dst, src, len, PMEM_F_MEM_NONTEMPORAL | PMEM_F_MEM_NODRAIN);
  if (g_power_fail) g_power_fail->on_flush(dst, len);  // streamed lines persist at the fence
}

}  // namespace nvt::dev
