// WBL's persistent structures (papers/zen-vldb21.txt section 2.3, Figure 1(b); the WBL paper's
// facts in ../shared/notes/anchor-systems.md): tuple versions in NVM, each with its own
// metadata, and the write-behind log of {cp, cd} records.
//
// Version (32 B header + the tuple, in 32 B aligned slots of zen's 2 MB heap pages, so the
// header lies inside one 64 B line):
//   word 0: commit timestamp (0 = empty slot; NVM starts zeroed). The same word as Zen's
//           NvmTuple Tx-CTS (its LP bit is never set here), so zen::update_index_gc applies.
//   word 1: tuple ID = key (56 bits) | table id (7 bits) | deleted bit: zen's NvmTuple layout.
//   word 2: the writer's transaction id ((thread + 1) << 48 | the thread's sequence).
//   word 3: reference to the previous version (heap offset / 32 + 1, 0 = none) << 32 | the
//           tuple's head id (where its CC metadata lives in NVM; the same for all its versions).
// A committed version is never modified; a superseded one stays intact until reclaimed.
//
// Log record {seq, cp, cd, check} (32 B) in a ring: the last durable record is the one with the
// largest seq whose check matches (a torn record fails its check).
#pragma once
#include <atomic>
#include <cstdint>

#include "storage/engines/zen/nvm_tuple.h"

namespace nvt::wbl {

constexpr uint32_t kVersionHeader = 32;
constexpr uint64_t kLineBytes = 64;

// Slot stride for a tuple of `len` bytes.
constexpr uint32_t slot_bytes(uint32_t len) { return (kVersionHeader + len + 31) / 32 * 32; }

struct Version {
  uint64_t cts_word;
  uint64_t id_word;
  uint64_t txn;
  uint64_t link;

  static Version* at(void* slot) { return static_cast<Version*>(slot); }
  zen::NvmTuple* tuple() { return reinterpret_cast<zen::NvmTuple*>(this); }
  const zen::NvmTuple* tuple() const { return reinterpret_cast<const zen::NvmTuple*>(this); }

  uint64_t cts() const { return std::atomic_ref<const uint64_t>(cts_word).load(std::memory_order_acquire); }
  void set_cts(uint64_t c) { std::atomic_ref<uint64_t>(cts_word).store(c, std::memory_order_release); }
  void set_id(uint64_t id) { std::atomic_ref<uint64_t>(id_word).store(id, std::memory_order_relaxed); }
  uint64_t key() const { return tuple()->key(); }
  uint32_t table() const { return tuple()->table(); }
  bool deleted() const { return tuple()->deleted(); }
  uint32_t head() const { return uint32_t(link); }
  uint64_t prev() const { return link >> 32; }
  char* data() { return reinterpret_cast<char*>(this + 1); }
  const char* data() const { return reinterpret_cast<const char*>(this + 1); }
};
static_assert(sizeof(Version) == kVersionHeader);

struct LogRecord {
  uint64_t seq, cp, cd, check;
  static uint64_t checksum(uint64_t seq, uint64_t cp, uint64_t cd) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ seq;
    for (uint64_t w : {cp, cd, seq}) {
      h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      h *= 0xff51afd7ed558ccdull;
    }
    return h | 1;  // never 0: a zeroed record is invalid
  }
  bool valid() const { return seq != 0 && check == checksum(seq, cp, cd); }
};
static_assert(sizeof(LogRecord) == 32);

constexpr uint64_t kLogRecords = 1 << 16;  // 2 MB ring; recovery reads it whole

}  // namespace nvt::wbl
