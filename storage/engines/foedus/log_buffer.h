// A worker's private log buffer (foedus-sigmod15 section 6.1): a DRAM ring of redo records that
// the worker appends at commit, while it still holds its write set, and the log writer drains
// into the worker's log file in NVM. One writer (the worker), one reader (the log writer).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>

#include "storage/device/device.h"

namespace nvt::foedus {

// One redo record: a tuple's after-image and the TID it was installed with (epoch inside). The
// checksum covers the header and the padded payload: a restart tells a record that reached NVM
// from bytes of one that did not (the gleaner reports a torn log), whichever lines were lost.
struct LogRecord {
  static constexpr uint32_t kDelete = 1u << 31;  // in `storage`: a delete (ordered tree), no payload used
  uint32_t bytes;    // whole record, header included, multiple of 8
  uint32_t storage;  // table id, | kDelete for a delete
  uint64_t key;
  uint64_t tid;
  uint64_t sum = 0;  // seal()
  // then the payload, padded to 8
  const char* payload() const { return reinterpret_cast<const char*>(this + 1); }
  static uint32_t size_for(uint32_t len) { return uint32_t(sizeof(LogRecord) + (len + 7) / 8 * 8); }
  // The checksum of this header with `payload` (len bytes; the padding counts as zeros).
  uint64_t checksum(const char* payload, uint32_t len) const {
    uint64_t x = (uint64_t(bytes) << 32 | storage) * 0x9E3779B97F4A7C15ull ^ key;
    x = (x ^ tid) * 0x100000001b3ull;
    for (uint32_t i = 0; i < len; i += 8) {
      uint64_t w = 0;
      memcpy(&w, payload + i, std::min<uint32_t>(8, len - i));
      x = (x ^ w) * 0x100000001b3ull;
      x ^= x >> 29;
    }
    return x | 1;  // zeroed NVM never passes
  }
  void seal(const char* payload, uint32_t len) { sum = checksum(payload, len); }
  bool intact() const { return sum == checksum(payload(), bytes - uint32_t(sizeof(LogRecord))); }
};
static_assert(sizeof(LogRecord) == 32);

class LogBuffer {
 public:
  LogBuffer(char* mem, uint64_t cap) : buf_(mem), cap_(cap) {}

  // Room for `bytes` more now (the worker only: nobody else stages).
  bool room(uint64_t bytes) const { return staged_ + bytes - head_.load(std::memory_order_acquire) <= cap_; }
  // Room for `bytes` more: waits while the log writer drains (never while holding anything the
  // writer needs). False when the record can never fit.
  bool reserve(uint64_t bytes) {
    if (bytes > cap_) return false;
    while (staged_ + bytes - head_.load(std::memory_order_acquire) > cap_) {
      dev::pay_debt();
      std::this_thread::yield();
    }
    return true;
  }
  // Stage a record (reserve() first); published by publish().
  void put(const LogRecord& h, const char* payload, uint32_t len) {
    copy_in(&h, sizeof h);
    copy_in(payload, len);
    static const char zeros[8] = {};
    copy_in(zeros, h.bytes - sizeof h - len);
  }
  void publish() { tail_.store(staged_, std::memory_order_release); }

  uint64_t tail() const { return tail_.load(std::memory_order_acquire); }
  uint64_t head() const { return head_.load(std::memory_order_acquire); }
  // The log writer: copy [from, to) out of the ring, then release it.
  void copy_out(uint64_t from, uint64_t to, char* dst) const {
    while (from < to) {
      uint64_t at = from % cap_, n = std::min(to - from, cap_ - at);
      memcpy(dst, buf_ + at, n);
      dst += n;
      from += n;
    }
  }
  void consumed(uint64_t to) { head_.store(to, std::memory_order_release); }
  uint64_t capacity() const { return cap_; }

 private:
  void copy_in(const void* src, uint64_t n) {
    auto s = static_cast<const char*>(src);
    while (n) {
      uint64_t at = staged_ % cap_, k = std::min(n, cap_ - at);
      memcpy(buf_ + at, s, k);
      s += k;
      n -= k;
      staged_ += k;
    }
  }
  char* buf_;
  uint64_t cap_;
  uint64_t staged_ = 0;              // worker only
  alignas(64) std::atomic<uint64_t> tail_{0};
  alignas(64) std::atomic<uint64_t> head_{0};
};

}  // namespace nvt::foedus
