// Input logging and the epoch commit (nvcaracal-eurosys23 sections 4.1 and 4.3, Algorithm 1's
// fences): each core's inputs logged and fenced before the epoch runs, the epoch marked logged;
// after execution each core checkpoints its pools' offsets and fences its NVM writes, then one
// core persists the committed epoch number, the commit point.
#pragma once
#include <utility>
#include <vector>

#include "storage/engines/nvcaracal/nvcaracal.h"

namespace nvt::nvc {

// Input logging: this core's inputs, fenced; then (one core) the epoch marked logged.
template <class CC>
void NvCaracal<CC>::log_inputs(Thread& th, const std::vector<uint64_t>& entries, uint64_t count) {
  if (!input_log_) return;
  log_[size_t(th.core)].write(epoch_, entries, count);
  dev::fence();
}

template <class CC>
void NvCaracal<CC>::mark_logged() {
  if (!input_log_) return;
  store_control(control_->logged, epoch_);
  dev::fence();
  dev::crash_point("nvcaracal.logged");
}

// Epoch commit, per core: the pools' offsets into the slot of this epoch's parity, fenced
// with every NVM write this core made in the epoch (Algorithm 1's first fence).
template <class CC>
void NvCaracal<CC>::commit_core(Thread& th) {
  if (persist_) {
    row_pool_[size_t(th.core)].checkpoint(epoch_);
    if (val_pool_[size_t(th.core)].capacity()) val_pool_[size_t(th.core)].checkpoint(epoch_);
  }
  std::swap(th.gc_now, th.gc_next);
  th.gc_next.clear();
  if (persist_ && !dev::fault_is(dev::Fault::SkipEpochFence)) dev::fence();
  if (th.core == 0) dev::crash_point("nvcaracal.before_epoch_commit");
}

// The commit point (one core, after every core's commit_core): persist the epoch number,
// fence. A crash between the two fences leaves the epoch either committed or replayed.
template <class CC>
void NvCaracal<CC>::commit_epoch() {
  if (persist_) {
    store_control(control_->committed, epoch_);
    dev::crash_point("nvcaracal.epoch_commit");
    dev::fence();
  } else {  // all-dram: the epoch number, as the checker reads it, nothing persisted
    control_->committed.magic = Control::kMagic;
    control_->committed.value = epoch_;
  }
  epochs_committed_++;
  // The blocks recovery found on the free lists matter to the first epoch's major GC only (a
  // block freed again later was reused in between).
  recovered_free_.clear();
  update_ledger();
}

// The lists' DRAM into the ledger (no core touches them between epochs).
template <class CC>
void NvCaracal<CC>::update_ledger() {
  uint64_t b = heap_bytes_of(th_) + cache_->list_bytes() +
               recovered_free_.bucket_count() * sizeof(void*) + recovered_free_.size() * 32;  // node: next, hash, value
  for (auto& t : th_) {
    b += heap_bytes_of(t.created) + heap_bytes_of(t.gc_now) + heap_bytes_of(t.gc_next) + heap_bytes_of(t.evict_lists) +
         heap_bytes_of(t.retired) + heap_bytes_of(t.unindex);
    for (auto& l : t.evict_lists) b += heap_bytes_of(l);
  }
  lists_->set(b);
}

}  // namespace nvt::nvc
