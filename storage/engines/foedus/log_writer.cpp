#include "storage/engines/foedus/log_writer.h"

#include <x86intrin.h>

#include <algorithm>
#include <cstring>

#include "storage/device/device.h"
#include "storage/device/power_fail.h"
#include "storage/engines/foedus/epoch.h"

namespace nvt::foedus {

LogWriter::LogWriter(MetaArea* meta, std::vector<dev::Region> files, std::vector<WorkerLog*> workers, int epoch_ms)
    : meta_(meta), files_(std::move(files)), workers_(std::move(workers)), epoch_ms_(epoch_ms),
      tail_(files_.size(), 0), marker_lsn_(new std::atomic<uint64_t>[files_.size()]),
      gleaned_(new std::atomic<uint64_t>[files_.size()]),
      last_advance_(std::chrono::steady_clock::now()) {
  for (size_t i = 0; i < files_.size(); i++) {
    marker_lsn_[i].store(0);
    gleaned_[i].store(0);
  }
}

void LogWriter::reset(uint64_t epoch, const std::vector<uint64_t>& lsn) {
  std::lock_guard g(mu_);
  for (size_t i = 0; i < files_.size(); i++) {
    tail_[i] = lsn[i];
    marker_lsn_[i].store(lsn[i]);
    gleaned_[i].store(lsn[i]);
  }
  durable_.store(epoch);
  const EpochMarker* m = MetaArea::newest(meta_->marker, uint64_t(files_.size()));
  marker_seq_ = m ? m->seq : 0;
}

void LogWriter::start() {
  if (running_.exchange(true)) return;
  thread_ = std::thread([this] { loop(); });
}

void LogWriter::halt() {
  if (running_.exchange(false)) thread_.join();
}

void LogWriter::stop() {
  if (!running_.exchange(false)) return;
  thread_.join();
  g_epoch.fetch_add(1, std::memory_order_seq_cst);  // no transaction runs: all of it is durable
  pass();
  dev::pay_debt();
  dev::publish();
}

void LogWriter::loop() {
  while (running_.load(std::memory_order_acquire)) {
    pass();
    dev::pay_debt();
    dev::publish();  // the measured phase counts the log writer's traffic (per_txn.background)
    std::this_thread::sleep_for(std::chrono::microseconds(std::min(1000, epoch_ms_ * 1000 / 4 + 1)));
  }
}

bool LogWriter::wants_gleaning() const {
  for (size_t i = 0; i < files_.size(); i++)
    if (marker_lsn(i) - gleaned(i) > files_[i].size / 2) return true;
  return false;
}

void LogWriter::pass() {
  std::lock_guard g(mu_);
  auto t0 = std::chrono::steady_clock::now();
  bool asked = advance_asked_.exchange(false, std::memory_order_acq_rel);
  bool advanced = asked || t0 - last_advance_ >= std::chrono::milliseconds(epoch_ms_);
  if (advanced) {
    g_epoch.fetch_add(1, std::memory_order_seq_cst);
    last_advance_ = t0;
  }
  // The epoch first, then each worker's running epoch, then its buffer's tail: every record of
  // an epoch below `safe` is then below the tail read (a worker commits at or above the epoch it
  // publishes, and publishes its tail before it stops running a transaction).
  uint64_t safe = g_epoch.load(std::memory_order_seq_cst);
  std::vector<uint64_t> to(workers_.size());
  for (size_t w = 0; w < workers_.size(); w++) {
    uint64_t e = workers_[w]->active_epoch.load(std::memory_order_seq_cst);
    if (e && e < safe) safe = e;
    to[w] = workers_[w]->buf.tail();
  }
  bool stalled = false;
  uint64_t bytes = 0, recs = 0;
  for (size_t w = 0; w < workers_.size(); w++) {
    LogBuffer& b = workers_[w]->buf;
    uint64_t from = b.head(), n = to[w] - from;
    if (!n) continue;
    uint64_t cap = files_[w].size;
    if (tail_[w] + n - gleaned(w) > cap) {
      // The file is full until the gleaner catches up: what stays in the buffer is at or above
      // the epoch of its first record, so the epochs below it can still become durable (and be
      // gleaned, which frees the file).
      LogRecord first;
      b.copy_out(from, from + sizeof first, reinterpret_cast<char*>(&first));
      safe = std::min(safe, epoch_of(first.tid));
      stalled = true;
      continue;
    }
    uint64_t lsn = tail_[w];
    for (uint64_t done = 0; done < n;) {
      uint64_t at = (lsn + done) % cap, k = std::min(n - done, cap - at);
      b.copy_out(from + done, from + done + k, files_[w].base + at);
      dev::flush(files_[w].base + at, k);
      done += k;
    }
    // The records this batch wrote: their headers walked (each starts with its length).
    for (uint64_t at = from; at < to[w]; recs++) {
      uint32_t len = 0;
      b.copy_out(at, at + sizeof len, reinterpret_cast<char*>(&len));
      at += len;
    }
    tail_[w] += n;
    b.consumed(to[w]);
    bytes += n;
  }
  if (bytes) {
    dev::crash_point("foedus.log_before_fence");
    if (!dev::fault_is(dev::Fault::DropFence)) dev::fence();  // injected bug: the batch unfenced
    dev::crash_point("foedus.log_after_fence");
  }
  uint64_t durable = safe - 1;
  if (durable > durable_.load(std::memory_order_relaxed) || bytes) {
    write_marker(std::max(durable, durable_.load(std::memory_order_relaxed)));
    durable_.store(std::max(durable, durable_.load(std::memory_order_relaxed)), std::memory_order_release);
    durable_tsc_.store(__rdtsc(), std::memory_order_relaxed);
  }
  double busy = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::lock_guard s(stats_mu_);
  stats_.passes++;
  if (advanced) stats_.advances++;
  if (asked) stats_.asked_advances++;
  if (bytes) stats_.batches++, stats_.busy_s += busy;
  if (stalled) stats_.stalls++;
  stats_.bytes += bytes;
  stats_.records += recs;
}

void LogWriter::write_marker(uint64_t epoch) {
  EpochMarker& m = meta_->marker[(marker_seq_ + 1) & 1];
  m.seq = marker_seq_ + 1;
  m.epoch = epoch;
  for (size_t i = 0; i < kMaxLogs; i++) m.lsn[i] = i < files_.size() ? tail_[i] : 0;
  m.checksum = m.sum(files_.size());
  dev::flush(&m, offsetof(EpochMarker, lsn) + files_.size() * sizeof(uint64_t));
  dev::crash_point("foedus.marker_before_fence");  // with a dropped batch fence, the marker may land alone
  dev::fence();
  marker_seq_++;
  for (size_t i = 0; i < files_.size(); i++) marker_lsn_[i].store(tail_[i], std::memory_order_release);
}

LogWriter::Stats LogWriter::stats() const {
  std::lock_guard s(stats_mu_);
  return stats_;
}

}  // namespace nvt::foedus
