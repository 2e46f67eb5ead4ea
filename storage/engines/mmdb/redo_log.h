// MMDB's per-thread redo log in NVM: one record per committed transaction holding the
// after-image of every tuple it wrote, appended sequentially with one flush pass and one fence.
// Records are addressed by LSN (bytes ever appended); the log is a ring whose space behind the
// last checkpoint's start LSN is reusable. A checksum over the record and its LSN marks the end
// of the valid log for recovery.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "storage/device/nvm_image.h"

namespace nvt::mmdb {

struct LogEntry {
  uint32_t table;
  uint32_t len;
  uint64_t key;
  uint64_t version;  // the tuple version this image becomes; replay applies it if newer
  // followed by len bytes of image, padded to 8
};

class RedoLog {
 public:
  RedoLog(dev::Region r) : base_(r.base), cap_(r.size) {}
  // DRAM for the record being built, allocated once by a log a worker writes (its engine
  // charges it): a larger record grows the buffer beyond it.
  static constexpr size_t kRecordReserve = 64 << 10;
  void reserve() { buf_.reserve(kRecordReserve); }

  // Build a record: begin, add entries, then append (flush + one fence).
  void begin();
  char* add(uint32_t table, uint64_t key, uint64_t version, uint32_t len);  // returns image slot
  // Append the record built since begin(). Returns false when the ring has no room beyond the
  // truncation point (the caller waits for a checkpoint).
  bool append();
  bool empty_record() const { return entries_ == 0; }

  uint64_t tail() const { return tail_.load(std::memory_order_acquire); }
  // LSN below which records are no longer needed (set after a checkpoint).
  void truncate_to(uint64_t lsn) { trunc_.store(lsn, std::memory_order_release); }
  uint64_t truncated() const { return trunc_.load(std::memory_order_acquire); }
  // First LSN whose install may still be in flight: a fuzzy checkpoint must replay from here.
  uint64_t safe_lsn() const { return safe_.load(std::memory_order_seq_cst); }
  // The record's installs are done: a checkpoint need not replay it.
  void installed() { safe_.store(tail_.load(std::memory_order_relaxed), std::memory_order_seq_cst); }
  double fill() const { return double(tail() - truncated()) / double(cap_); }

  using Visit = std::function<void(const LogEntry&, const char*)>;
  // Recovery in one pass: visit valid records from `from`; returns the LSN after the last valid
  // one. replay_logs() (redo_replay.h) takes the same records in pieces on many threads.
  uint64_t scan(uint64_t from, const Visit& f) const;
  // What a scan and its pieces are made of. The LSN where a record at or after `lsn` may start
  // (the ring's last bytes, too few for a header, are skipped).
  uint64_t record_start(uint64_t lsn) const;
  // The bytes of the intact record (or ring-end filler) that starts at `lsn`, else 0: a header
  // naming this LSN and a matching checksum. Charges reading it.
  uint32_t intact(uint64_t lsn) const;
  // The first LSN in [from, to) where an intact record starts, else `to`; the bytes searched are
  // charged as one sequential read. [from, to) may not cross the ring's end.
  uint64_t find_intact(uint64_t from, uint64_t to) const;
  // Visit the entries of the intact record at `lsn` (a filler has none).
  void entries(uint64_t lsn, const Visit& f) const;
  uint64_t capacity() const { return cap_; }
  // Continue appending at `lsn` after recovery.
  void reset(uint64_t trunc, uint64_t lsn) { trunc_ = trunc; tail_ = lsn; safe_ = lsn; }

 private:
  struct RecHdr {
    uint64_t lsn;
    uint32_t bytes;     // whole record, header included, multiple of 8
    uint32_t entries;   // kWrap: filler up to the ring's end
    uint64_t checksum;
  };
  static constexpr uint32_t kWrap = ~0u;
  static uint64_t checksum(const RecHdr& h, const char* body, size_t len);
  char* at(uint64_t lsn) const { return base_ + lsn % cap_; }

  char* base_;
  uint64_t cap_;
  std::vector<char> buf_;  // the record being built, in DRAM
  uint32_t entries_ = 0;
  std::atomic<uint64_t> tail_{0};
  std::atomic<uint64_t> trunc_{0};
  std::atomic<uint64_t> safe_{0};
};

}  // namespace nvt::mmdb
