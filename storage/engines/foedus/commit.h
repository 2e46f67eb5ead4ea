// Logging and committing (foedus-sigmod15 section 6): after the CC's validation, the node set
// and pointer set still hold (6.1); the commit's redo records go to the worker's log buffer
// with the commit TID while the write set is still locked (D.2); the transaction is durable
// once the log writer has made its epoch durable (6.2).
#pragma once
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "storage/access.h"
#include "storage/device/device.h"
#include "storage/engines/foedus/epoch.h"
#include "storage/engines/foedus/log_writer.h"
#include "storage/engines/foedus/worker.h"

namespace nvt::foedus {

// Pre-commit, with the write set locked: no watched word changed or is locked by another
// transaction (its commit may be between its records' publications, as in Silo's read
// validation), and no dual pointer a read followed into the snapshot world got a volatile page
// (else a phantom may have appeared).
inline bool validate_node_set(const Worker& th) {
  for (auto& [v, seen] : th.node_set)
    if (uint64_t now = v->load(std::memory_order_acquire); now != seen || (now & kTidLock)) return false;
  for (const DualPointer* d : th.scan_ptrs)
    if (d->volatile_page.load(std::memory_order_acquire)) return false;
  return true;
}

// Before the CC validates, holding no lock: room in the worker's log buffer for the commit's
// redo records, waited for here (append_redo() then finds it). A worker that waited there
// would hold its write set's locks while the log writer waits for the gleaner to free its log
// file, the gleaner for the durable epoch, and the durable epoch for the transactions spinning
// on those locks. False (cause nvm_space; the retry waits again) after two epochs.
inline bool reserve_log(Worker& th, LogWriter& writer, int epoch_ms, const Access* acc, size_t n) {
  uint64_t bytes = 0;
  for (size_t i = 0; i < n; i++)
    if (acc[i].type != AccessType::Read) bytes += LogRecord::size_for(acc[i].len);
  if (bytes > th.log->buf.capacity()) throw std::runtime_error("FOEDUS: a transaction's log records exceed its log buffer");
  if (th.log->buf.room(bytes)) return true;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2 * epoch_ms + 10);
  while (!th.log->buf.room(bytes)) {
    if (!writer.running()) {  // no log writer thread (unit tests): drain the buffers here
      writer.pass();
      continue;
    }
    if (std::chrono::steady_clock::now() > until) return false;
    dev::pay_debt();
    std::this_thread::yield();
  }
  return true;
}

// The commit's redo records, one per write, sealed and published in the log buffer; returns
// the commit TID (the CC's, in acc[0].version).
inline uint64_t append_redo(Worker& th, const Access* acc, size_t n) {
  if (!n) return 0;
  uint64_t tid = acc[0].version;
  th.commit_epoch = epoch_of(tid);
  uint64_t bytes = 0, recs = 0;
  for (size_t i = 0; i < n; i++)
    if (acc[i].type != AccessType::Read) bytes += LogRecord::size_for(acc[i].len), recs++;
  if (!recs) return tid;
  if (!th.log->buf.reserve(bytes)) throw std::runtime_error("FOEDUS: a transaction's log records exceed its log buffer");
  for (size_t i = 0; i < n; i++) {
    const Access& a = acc[i];
    if (a.type == AccessType::Read) continue;
    uint32_t storage = a.table | (a.type == AccessType::Delete ? LogRecord::kDelete : 0);
    LogRecord rec{LogRecord::size_for(a.len), storage, a.key, tid};
    rec.seal(a.local, a.len);
    th.log->buf.put(rec, a.local, a.len);
  }
  th.log->buf.publish();
  return tid;
}

// Acknowledgement: wait until the worker's last commit epoch is durable.
inline void await_durable(const Worker& th, LogWriter& writer) {
  while (writer.durable_epoch() < th.commit_epoch) {
    if (!writer.running()) {  // no log writer thread (unit tests): do its work here
      g_epoch.fetch_add(1);
      writer.pass();
      continue;
    }
    dev::pay_debt();
    std::this_thread::yield();
  }
}

}  // namespace nvt::foedus
