// Epochs and serial ids (papers/nvcaracal-eurosys23.txt sections 3.1 and 4.1). Transactions are
// batched into epochs; transaction j (1-based) of epoch e has serial id e << 32 | j, so serial
// order within an epoch is the input order and every epoch follows the one before. The epoch
// commit point is one word in NVM: the last epoch whose writes were all fenced (Algorithm 1:
// fence, persist the epoch number, fence). The loaded database is epoch 0.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

#include "storage/device/device.h"
#include "storage/device/power_fail.h"

namespace nvt::nvc {

using Sid = uint64_t;
inline constexpr Sid sid_of(uint64_t epoch, uint64_t j) { return epoch << 32 | j; }
inline constexpr uint64_t epoch_of(Sid s) { return s >> 32; }
// The loaded rows' version: epoch 0, before every transaction.
inline constexpr Sid kLoadSid = sid_of(0, 0) | 1;

// Sentinel values of a version in a version array: PENDING (declared, not yet written),
// IGNORE (its writer aborted before writing) and DELETED (its writer deleted the row: readers
// after it find none). Real values are 64 B aligned pointers.
inline const char* const kPending = reinterpret_cast<const char*>(uintptr_t(1));
inline const char* const kIgnore = reinterpret_cast<const char*>(uintptr_t(2));
inline const char* const kDeleted = reinterpret_cast<const char*>(uintptr_t(3));

// The design variants of papers/nvcaracal-eurosys23.txt Figures 7 and 10 (--caracal-design).
enum class Design { NvCaracal, AllNvmm, Hybrid, NoLogging, AllDram };
inline Design parse_design(const std::string& s) {
  if (s == "nvcaracal") return Design::NvCaracal;
  if (s == "all-nvmm") return Design::AllNvmm;
  if (s == "hybrid") return Design::Hybrid;
  if (s == "no-logging") return Design::NoLogging;
  if (s == "all-dram") return Design::AllDram;
  throw std::invalid_argument("--caracal-design " + s);
}

// The NVM control block: one cache line per word so each persists on its own.
struct alignas(64) ControlLine {
  uint64_t magic;
  uint64_t value;
  uint64_t pad[6];
};
struct Control {
  static constexpr uint64_t kMagic = 0x4e56434152414341ull;  // "NVCARACA"
  ControlLine committed;  // last epoch checkpointed
  ControlLine logged;     // last epoch whose inputs are durable
};
static_assert(sizeof(Control) == 128);

// Persist one control word: the store, its flush; the caller fences.
inline void store_control(ControlLine& l, uint64_t v) {
  l.magic = Control::kMagic;
  l.value = v;
  dev::flush(&l, sizeof l);
}

}  // namespace nvt::nvc
