// Every runtime setting of rundb, with defaults that run in seconds on a laptop.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nvt {

struct Options {
  // Execution
  int threads = 2;
  double warmup_s = 1.0;
  double duration_s = 2.0;
  uint64_t txns = 0;           // per thread; 0 = measure by --duration
  uint64_t seed = 1;
  int timeline_ms = 0;         // 0 = no timeline
  bool time_breakdown = false; // MCSI/PGSI: results.time_breakdown_s (TSC-timed sections)
  std::string out;
  // Device
  std::string nvm_path;        // default /dev/shm/nvtestbed-<engine>-<cc>.img
  bool keep_image = false;     // keep the default image after a clean exit (a given path is always kept)
  bool default_image = false;  // no --nvm-path given: the image is the default one above
  uint64_t nvm_size = 0;       // 0 = what the engine needs for the workload
  uint64_t dram_size = 0;      // 0 = database bytes / p_ratio
  double p_ratio = 4.0;
  std::string profile = "optane-100";
  std::string persist_domain = "adr";
  std::optional<double> read_ns, write_gbps, fence_ns, remote_factor;
  std::optional<double> remote_read_factor, remote_write_factor, remote_dram_factor;
  // NUMA (storage/device/numa.h, system/numa_host.h, system/soft_partition.h)
  int numa_nodes = 0;              // 0 = not given: 1, or what the policy needs of real nodes
  std::string numa_policy = "stripe";
  std::string numa_real_nodes;     // real node ids to use (default 0..k-1 where the host has them)
  std::string numa_binding = "even";
  int numa_node_threads = 0;       // group binding: threads per node (0 = the node's CPUs)
  uint64_t numa_partitions = 2048; // soft partition: hash partitions of each table's partition key
  double numa_delta = 0.3;         // Algorithm 3: load imbalance beyond which affinity is ignored
  double numa_eta = 1.2;           // Algorithm 4: a candidate node's count must exceed the owner's x eta
  int numa_remap_ms = 100;         // Algorithm 4 runs this often
  // Engine
  std::string checkpoint = "after-load";
  double checkpoint_fill = 0.5;  // MMDB: fuzzy checkpoint when a redo log is this full
  uint64_t log_size = 0;       // 0 = auto
  int group_commit_us = 100;   // WBL: group-commit interval (the Zen paper's setting)
  // Zen+ (papers/zen-plus-journal.txt): its MVCC-based adaptive execution for long-running
  // transactions (storage/engines/zen/lrt.h); off: Zen as zen-vldb21 describes it. The lrt_
  // thresholds are fractions, not percentages.
  bool zen_plus = false;
  double lrt_alpha = 0.95;
  double lrt_beta = 0.05;
  uint64_t lrt_gamma = 0;      // 0 = 16M scaled by the table size (rows / 2^28)
  // FOEDUS (storage/engines/foedus/)
  uint32_t page_size = 4096;
  int epoch_ms = 20;
  int gleaner_interval_ms = 1000;
  std::string snapshot_cache = "on";
  int gleaner_mappers = 1;
  int gleaner_reducers = 1;
  // NVCaracal (storage/engines/nvcaracal/)
  uint64_t epoch_txns = 0;      // 0 = the largest the DRAM budget holds, up to 100000 (deterministic_run.h)
  uint32_t persistent_row_bytes = 256;
  bool minor_gc = true;
  bool cached_versions = true;
  bool input_log = true;
  std::string caracal_design = "nvcaracal";
  uint64_t cache_epochs = 20;
  // Recovery and verification
  bool recover = false;
  int recovery_threads = 0;    // 0 = --threads
  std::string ack_file;        // prefix of per-thread acknowledgement files
  std::string verify_ack;      // after --recover, check these acknowledgements
  // Power-failure simulation
  bool power_fail = false;
  std::string crash_at = "none";
  double evict_prob = 0;
  std::string fault = "none";
  // Workload
  std::string workload = "ycsb";
  uint64_t rows = 100000;
  double read_ratio = 0.5;
  double theta = 0.6;
  int requests = 16;
  int columns = 10;
  int column_size = 100;
  // YCSB forms: NVCaracal's hot rows, partial updates; MCSI's request range; Zen+'s long
  // transactions (benchmarks/ycsb.h)
  uint64_t hot_rows = 256;
  int hot_requests = 0;        // requests per transaction drawn from the hot rows
  bool prefetch = true;        // YCSB: prefetch a transaction's index slots and tuples first
  int update_bytes = 0;        // 0 = a write replaces the whole tuple
  int requests_min = 0;        // 0 = every transaction has --requests
  std::string long_txn = "none";
  std::string long_txn_rows = "1000";  // comma-separated sizes, used in turn
  std::vector<uint64_t> long_txn_sizes;  // parsed from long_txn_rows
  bool long_txn_disjoint = false;
  int long_txn_threads = 1;
  uint64_t long_txn_gap = 0;   // normal transactions a long-txn thread runs between long ones
  // YCSB D and E (benchmarks/ycsb_de.h)
  uint64_t insert_rows = 0;    // room for inserted rows; 0 = sized from the run (options.cpp)
  int scan_length = 100;       // E: scan lengths uniform in 1..scan_length
  // SmallBank (benchmarks/smallbank.h)
  uint64_t accounts = 18000;
  uint64_t hotspot_accounts = 1000;
  double hotspot_share = 0.9;
  bool send_payment = false;
  // TPC-C
  int warehouses = 1;
  std::string tpcc_mix = "standard";
  int neworder_remote_pct = 1;   // clause 2.4.1.5: 1% of order lines from a remote warehouse
  int payment_remote_pct = 15;   // clause 2.5.1.2: 15% of payments by a remote customer
  uint64_t tpcc_new_orders = 200000;  // room for this many NewOrders (inserted rows)
  std::string persist_order;     // Zen: table names, LP table first (default: the benchmark's)

  nlohmann::json to_json() const;
};

// The settings that shape an image of `engine` (JSON; NvmImage records them in its header):
// --recover reads the flags the user leaves out from there (parse_options).
std::string image_settings(const Options& o, const std::string& engine);

// Parses argv; on --help prints usage and exits 0; on a bad value prints a message naming the
// flag and the accepted range and exits 2.
Options parse_options(int argc, char** argv, const std::string& engine, const std::string& cc);

}  // namespace nvt
