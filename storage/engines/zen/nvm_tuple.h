// Zen's NVM-tuple (papers/zen-vldb21.txt section 3.1): a 16 B header and the tuple data, in
// 16 B aligned slots so the header always lies inside one 64 B line (one clwb persists it).
//   word 0: Tx-CTS (63 bits) | LP bit (most significant): LP marks the last tuple persisted by a
//           committed transaction; Tx-CTS 0 marks an empty slot (NVM starts zeroed).
//   word 1: tuple ID = key (56 bits) | table id (7 bits) | deleted bit (most significant), so a
//           fresh process can rebuild every table's index from the heap alone.
// The header carries nothing specific to a concurrency-control method.
#pragma once
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace nvt::zen {

constexpr uint64_t kLP = 1ull << 63;
constexpr uint64_t kDeletedBit = 1ull << 63;
constexpr int kKeyBits = 56;
constexpr uint64_t kMaxKey = (1ull << kKeyBits) - 1;
constexpr uint32_t kMaxTables = 127;
constexpr uint32_t kHeaderBytes = 16;
constexpr uint64_t kLineBytes = 64;

// Slot stride for a tuple of `len` bytes.
constexpr uint32_t slot_bytes(uint32_t len) { return (kHeaderBytes + len + 15) / 16 * 16; }

struct NvmTuple {
  uint64_t cts_word;  // Tx-CTS | LP
  uint64_t id_word;   // key | table << 56 | deleted

  static NvmTuple* at(void* slot) { return static_cast<NvmTuple*>(slot); }
  static uint64_t make_id(uint32_t table, uint64_t key, bool deleted = false) {
    if (key > kMaxKey) throw std::invalid_argument("zen: key " + std::to_string(key) + " exceeds 56 bits");
    if (table >= kMaxTables) throw std::invalid_argument("zen: table id too large");
    return key | uint64_t(table) << kKeyBits | (deleted ? kDeletedBit : 0);
  }

  uint64_t word0() const { return std::atomic_ref<const uint64_t>(cts_word).load(std::memory_order_acquire); }
  uint64_t cts() const { return word0() & ~kLP; }
  bool lp() const { return word0() & kLP; }
  bool empty() const { return cts() == 0; }
  bool deleted() const { return id_word & kDeletedBit; }
  uint32_t table() const { return uint32_t((id_word & ~kDeletedBit) >> kKeyBits); }
  uint64_t key() const { return id_word & kMaxKey; }
  char* data() { return reinterpret_cast<char*>(this + 1); }
  const char* data() const { return reinterpret_cast<const char*>(this + 1); }

  // One 8 B store: the header word is failure-atomic, so LP and Tx-CTS change together.
  void set_cts(uint64_t cts, bool lp) {
    std::atomic_ref<uint64_t>(cts_word).store(cts | (lp ? kLP : 0), std::memory_order_release);
  }
};
static_assert(sizeof(NvmTuple) == kHeaderBytes);

// The 64 B line holding a slot's header (16 B alignment keeps the header inside it).
inline char* header_line(void* slot) {
  return reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(slot) & ~(kLineBytes - 1));
}

}  // namespace nvt::zen
