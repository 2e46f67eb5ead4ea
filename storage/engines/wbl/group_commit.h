// The write-behind log (Arulraj et al., VLDB'16): every group commit appends a
// {cp, cd} record, flushed and fenced: commits at or below cp are durable, timestamps up to cd
// may be handed out until the next record. Recovery reads only the last record.
#pragma once

#include "storage/engines/wbl/wbl.h"

namespace nvt::wbl {

// A timestamp above the durable cd waits for the next record to raise the grant.
template <class CC>
inline void Wbl<CC>::await_grant(Thread& th, uint64_t cts) {
  if (cts <= cd_.load(std::memory_order_acquire)) return;
  th.grant_waits++;
  while (cts > cd_.load(std::memory_order_acquire)) {
    if (!running_.load(std::memory_order_acquire)) { group_commit(true); continue; }
    dev::pay_debt();
    std::this_thread::yield();
  }
}

// One group commit: cp = the largest timestamp such that every commit at or below it has
// persisted its versions (no thread is still writing one); cd = what may be handed out until
// the next record. Appends {cp, cd} and makes it durable; publishes both only then.
template <class CC>
inline void Wbl<CC>::group_commit(bool grant) {
  std::lock_guard g(gc_mu_);
  const uint64_t c = counter_.load(std::memory_order_seq_cst);  // clock first (see persist())
  const uint64_t cd_old = cd_.load(std::memory_order_relaxed), cp_old = cp_.load(std::memory_order_relaxed);
  uint64_t cp = c - 1;
  if (!dev::fault_is(dev::Fault::EarlyRecord))  // injected bug: claim commits still persisting
    for (int t = 0; t < nthreads_; t++) {
      uint64_t f = shared_[t].inflight.load(std::memory_order_seq_cst);
      if (f && f - 1 < cp) cp = f - 1;
    }
  cp = std::max(std::min(cp, cd_old), cp_old);
  uint64_t used = c - std::min(c, last_c_);
  last_c_ = c;
  uint64_t cd = grant ? std::max(cd_old, c - 1 + std::max(kMinGrant, 4 * used)) : std::max(cd_old, cp);
  if (cp == cp_old && cd == cd_old) return;
  append_record(cp, cd);
  cp_tsc_.store(__rdtsc(), std::memory_order_relaxed);  // before cp_: a reader of cp sees it
  cp_.store(cp, std::memory_order_release);
  cd_.store(cd, std::memory_order_release);
}

template <class CC>
inline void Wbl<CC>::append_record(uint64_t cp, uint64_t cd) {
  uint64_t seq = ++seq_;
  LogRecord* r = &log_[seq % kLogRecords];
  r->seq = seq;
  r->cp = cp;
  r->cd = cd;
  r->check = LogRecord::checksum(seq, cp, cd);
  dev::flush(r, sizeof *r);
  dev::crash_point("wbl.record_before_fence");  // between the record's append and its fence
  dev::fence();
  dev::crash_point("wbl.record_durable");
  records_++;
}

template <class CC>
inline LogRecord Wbl<CC>::last_record() const {
  LogRecord best{};
  dev::read(log_, kLogRecords * sizeof(LogRecord));
  for (uint64_t i = 0; i < kLogRecords; i++) {
    LogRecord r = log_[i];
    if (r.valid() && r.seq > best.seq) best = r;
  }
  return best;
}

}  // namespace nvt::wbl
