#include "storage/engines/mmdb/redo_log.h"

#include <algorithm>
#include <cstring>

#include "storage/device/device.h"
#include "storage/device/power_fail.h"

namespace nvt::mmdb {

namespace {
constexpr size_t kHdr = 24;
size_t pad8(size_t n) { return (n + 7) & ~size_t(7); }
}  // namespace

uint64_t RedoLog::checksum(const RecHdr& h, const char* body, size_t len) {
  uint64_t x = 0xcbf29ce484222325ull ^ h.lsn ^ (uint64_t(h.bytes) << 32) ^ h.entries;
  for (size_t i = 0; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, body + i, 8);
    x = (x ^ w) * 0x100000001b3ull;
    x ^= x >> 29;
  }
  return x | 1;  // never 0, so zeroed NVM is never a valid record
}

void RedoLog::begin() {
  buf_.resize(kHdr);
  entries_ = 0;
}

char* RedoLog::add(uint32_t table, uint64_t key, uint64_t version, uint32_t len) {
  size_t off = buf_.size();
  buf_.resize(off + sizeof(LogEntry) + pad8(len));
  LogEntry e{table, len, key, version};
  memcpy(buf_.data() + off, &e, sizeof e);
  entries_++;
  return buf_.data() + off + sizeof(LogEntry);
}

bool RedoLog::append() {
  size_t bytes = buf_.size();
  uint64_t lsn = tail_.load(std::memory_order_relaxed);
  uint64_t room_to_end = cap_ - lsn % cap_;
  uint64_t need = bytes + (room_to_end < bytes ? room_to_end : 0);
  if (lsn + need - trunc_.load(std::memory_order_acquire) > cap_) return false;
  safe_.store(lsn, std::memory_order_seq_cst);
  if (room_to_end < bytes) {
    // Filler to the ring's end so that records never straddle it.
    RecHdr w{lsn, uint32_t(room_to_end), kWrap, 0};
    w.checksum = checksum(w, nullptr, 0);
    if (room_to_end >= kHdr) {
      memcpy(at(lsn), &w, kHdr);
      dev::flush(at(lsn), kHdr);
    }
    lsn += room_to_end;
  }
  RecHdr h{lsn, uint32_t(bytes), entries_, 0};
  h.checksum = checksum(h, buf_.data() + kHdr, bytes - kHdr);
  memcpy(buf_.data(), &h, kHdr);
  char* dst = at(lsn);
  memcpy(dst, buf_.data(), bytes);
  // Injected protocol bugs (power-failure tests must catch them): forget the record's last
  // line, or acknowledge without the fence.
  dev::flush(dst, dev::fault_is(dev::Fault::DropFlush) && bytes > 64 ? bytes - 64 : bytes);
  dev::crash_point("mmdb.before_log_fence");
  if (!dev::fault_is(dev::Fault::DropFence)) dev::fence();
  dev::crash_point("mmdb.after_log_fence");
  tail_.store(lsn + bytes, std::memory_order_release);
  return true;
}

uint64_t RedoLog::record_start(uint64_t lsn) const {
  uint64_t room_to_end = cap_ - lsn % cap_;
  return room_to_end < kHdr ? lsn + room_to_end : lsn;
}

uint64_t RedoLog::find_intact(uint64_t from, uint64_t to) const {
  uint64_t lsn = record_start(from);
  for (; lsn < to; lsn = record_start(lsn + 8)) {
    uint64_t named;
    memcpy(&named, at(lsn), sizeof named);  // RecHdr::lsn comes first: a cheap test
    if (named == lsn && intact(lsn)) break;
  }
  lsn = std::min(lsn, to);
  if (lsn > from) dev::read(at(from), lsn - from);
  return lsn;
}

uint32_t RedoLog::intact(uint64_t lsn) const {
  const uint64_t room_to_end = cap_ - lsn % cap_;
  if (room_to_end < kHdr) return 0;
  RecHdr h;
  dev::read(at(lsn), kHdr);  // recovery's reads are charged like any other (issue 17)
  memcpy(&h, at(lsn), kHdr);
  if (h.lsn != lsn || h.bytes < kHdr || h.bytes > room_to_end || h.bytes % 8) return 0;
  if (h.entries == kWrap) return h.checksum == checksum(h, nullptr, 0) ? h.bytes : 0;
  const char* body = at(lsn) + kHdr;
  dev::read(body, h.bytes - kHdr);
  return h.checksum == checksum(h, body, h.bytes - kHdr) ? h.bytes : 0;
}

void RedoLog::entries(uint64_t lsn, const Visit& f) const {
  RecHdr h;
  memcpy(&h, at(lsn), kHdr);
  if (h.entries == kWrap) return;
  const char* body = at(lsn) + kHdr;
  size_t off = 0;
  for (uint32_t i = 0; i < h.entries; i++) {
    LogEntry e;
    memcpy(&e, body + off, sizeof e);
    f(e, body + off + sizeof e);
    off += sizeof e + pad8(e.len);
  }
}

uint64_t RedoLog::scan(uint64_t from, const Visit& f) const {
  for (uint64_t lsn = record_start(from);; lsn = record_start(lsn)) {
    const uint32_t bytes = intact(lsn);
    if (!bytes) return lsn;
    entries(lsn, f);
    lsn += bytes;
  }
}

}  // namespace nvt::mmdb
