#include "system/options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <regex>
#include <sstream>

#include "storage/device/cost_profile.h"
#include "storage/device/numa.h"
#include "storage/device/nvm_image.h"
#include "system/numa_host.h"

namespace nvt {

namespace {

// A size flag ("512M", "2G"): CLI11 validator that names the accepted form.
struct SizeValidator : CLI::Validator {
  SizeValidator() {
    name_ = "SIZE";
    func_ = [](std::string& s) -> std::string {
      try {
        dev::parse_size(s);
        return {};
      } catch (const std::exception& e) {
        return e.what();
      }
    };
  }
};

// CLI11's ranges let NaN through (every comparison with it is false).
struct FiniteValidator : CLI::Validator {
  FiniteValidator() {
    name_ = "FINITE";
    func_ = [](std::string& s) -> std::string {
      try {
        size_t pos = 0;
        double v = std::stod(s, &pos);
        if (pos == s.size() && std::isfinite(v)) return {};
      } catch (...) {
      }
      return "'" + s + "' is not a finite number";
    };
  }
};

// A numeric flag's value that is not a number at all, named before any range check does
// ("--rows: 'abc' is not a number"); CLI11 alone says only that it "could not be converted".
std::string number_error(const std::string& s, bool integer) {
  static const std::regex whole("^[-+]?[0-9]+$");
  if (integer) {
    if (std::regex_match(s, whole)) return {};  // out of range or negative: the range check says so
  } else {
    try {
      size_t pos = 0;
      (void)std::stod(s, &pos);
      if (pos == s.size()) return {};
    } catch (const std::out_of_range&) {
      return {};
    } catch (...) {
    }
  }
  static const std::regex decimal("^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$");
  return "'" + s + "' is not " + (integer && std::regex_match(s, decimal) ? "a whole number" : "a number");
}

// Levenshtein distance, for "did you mean" on a misspelt flag.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> d(b.size() + 1);
  for (size_t j = 0; j <= b.size(); j++) d[j] = j;
  for (size_t i = 1; i <= a.size(); i++) {
    size_t diag = d[0];
    d[0] = i;
    for (size_t j = 1; j <= b.size(); j++) {
      size_t up = d[j];
      d[j] = std::min({d[j] + 1, d[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return d[b.size()];
}

// The message for an argument rundb does not know: the nearest flag when one is close.
std::string unknown_argument(const CLI::App& app, const std::vector<std::string>& extras) {
  std::string arg = extras.empty() ? "" : extras[0];
  for (const std::string& e : extras)
    if (e.rfind("-", 0) == 0) { arg = e; break; }
  if (arg.rfind("-", 0) != 0) return "unexpected argument '" + arg + "' (rundb takes flags only; see --help)";
  std::string name = arg.substr(0, arg.find('='));
  std::string bare = name.substr(name.find_first_not_of('-'));
  std::string best;
  size_t best_d = ~size_t(0);
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& l : opt->get_lnames()) {
      size_t d = edit_distance(bare, l);
      if (d < best_d) best_d = d, best = l;
    }
  }
  std::string msg = "unknown flag " + name;
  if (!best.empty() && best_d <= std::max<size_t>(2, bare.size() / 3)) msg += "; did you mean --" + best + "?";
  else msg += " (rundb --help lists the flags)";
  return msg;
}

// The flags that shape an NVM image, recorded in its header (image_settings) so that --recover
// takes them from there. `engines`/`workloads`: where the flag applies (space-separated; a
// workload matches by prefix; empty: everywhere); `strict`: where a value that contradicts the
// image is an error ("*": every engine), elsewhere a given value simply wins (--threads: MMDB,
// Zen, WBL, NVMVCC and FOEDUS recover with any).
struct ImageSetting {
  const char* key;
  const char *engines, *workloads, *strict;
  std::function<nlohmann::json(const Options&)> get;
  std::function<void(Options&, const nlohmann::json&)> set;
};

template <class T>
ImageSetting image_setting(const char* key, const char* engines, const char* workloads, const char* strict, T Options::*m) {
  return {key, engines, workloads, strict, [m](const Options& o) { return nlohmann::json(o.*m); },
          [m](Options& o, const nlohmann::json& j) { o.*m = j.get<T>(); }};
}

const std::vector<ImageSetting>& image_settings_table() {
  static const std::vector<ImageSetting> t = {
      image_setting("workload", "", "", "*", &Options::workload),
      image_setting("threads", "", "", "nvcaracal", &Options::threads),
      image_setting("rows", "", "ycsb", "*", &Options::rows),
      image_setting("columns", "", "ycsb", "*", &Options::columns),
      image_setting("column_size", "", "ycsb", "*", &Options::column_size),
      image_setting("insert_rows", "", "ycsb-d ycsb-e", "*", &Options::insert_rows),
      image_setting("accounts", "", "smallbank", "*", &Options::accounts),
      image_setting("warehouses", "", "tpcc", "*", &Options::warehouses),
      image_setting("tpcc_new_orders", "", "tpcc", "*", &Options::tpcc_new_orders),
      image_setting("tpcc_mix", "", "tpcc", "nvcaracal", &Options::tpcc_mix),
      image_setting("log_size", "mmdb foedus", "", "*", &Options::log_size),
      image_setting("page_size", "foedus", "", "*", &Options::page_size),
      image_setting("epoch_txns", "nvcaracal", "", "*", &Options::epoch_txns),
      image_setting("persistent_row_bytes", "nvcaracal", "", "*", &Options::persistent_row_bytes),
      image_setting("caracal_design", "nvcaracal", "", "*", &Options::caracal_design),
  };
  return t;
}

bool listed(const char* list, const std::string& name, bool prefix) {
  if (!*list) return true;
  std::istringstream in(list);
  for (std::string item; in >> item;)
    if (name == item || (prefix && name.rfind(item, 0) == 0)) return true;
  return false;
}

std::string flag_of(const std::string& key) {
  std::string f = "--" + key;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

std::string text_of(const nlohmann::json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

// --recover: the image's settings for every flag the user left out; a given flag that
// contradicts the image is an error naming both values. Images of one file only (per-node
// images are read by their first file's header, which this does not reach: they need the flags).
void adopt_image_settings(const CLI::App& app, Options& o, const std::string& engine, const std::string& path) {
  if (path.find(',') != std::string::npos || path.find("{node}") != std::string::npos) return;
  std::string text = dev::read_image_settings(path);
  if (text.empty()) return;  // no image, or another version: the reopen says which
  nlohmann::json img = nlohmann::json::parse(text, nullptr, false);
  if (!img.is_object()) return;
  std::string taken;
  for (const ImageSetting& s : image_settings_table()) {
    if (!img.contains(s.key) || !listed(s.engines, engine, false)) continue;
    std::string flag = flag_of(s.key);
    const nlohmann::json& want = img[s.key];
    if (app.count(flag)) {
      nlohmann::json given = s.get(o);
      if (given != want && (std::string(s.strict) == "*" || listed(s.strict, engine, false)))
        throw CLI::ValidationError(flag, "the image " + path + " holds " + flag + " " + text_of(want) + ", not the " +
                                   text_of(given) + " given (leave " + flag + " out: --recover reads it from the image)");
      continue;
    }
    if (s.get(o) != want) taken += " " + flag + " " + text_of(want);
    s.set(o, want);
  }
  if (!taken.empty()) std::cerr << "rundb: --recover takes from the image:" << taken << "\n";
}

// Comma-separated positive row counts ("2000,8000").
std::vector<uint64_t> parse_rows_list(const std::string& s) {
  std::vector<uint64_t> v;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    std::string item = s.substr(i, j - i);
    if (item.empty() || item.size() > 12 || item.find_first_not_of("0123456789") != std::string::npos ||
        std::stoull(item) == 0)
      throw CLI::ValidationError("--long-txn-rows", "'" + s + "' is not a list of positive row counts (N or N,M,...)");
    v.push_back(std::stoull(item));
    i = j + 1;
  }
  return v;
}

// The cross-flag rules of the YCSB forms and SmallBank.
void validate_workload(const CLI::App& app, Options& o) {
  auto bad = [](const char* flag, const std::string& why) { throw CLI::ValidationError(flag, why); };
  if (o.workload.rfind("ycsb-", 0) == 0) {
    // A: 50% reads, B: 95%, C: 100% (the rest updates); D: 95% reads, E: 95% scans (the rest
    // inserts).
    double r = o.workload == "ycsb-a" ? 0.5 : o.workload == "ycsb-c" ? 1.0 : 0.95;
    if (app.count("--read-ratio") && o.read_ratio != r)
      bad("--read-ratio", "--workload " + o.workload + " fixes it at " + std::to_string(r));
    o.read_ratio = r;
  }
  bool inserts = o.workload == "ycsb-d" || o.workload == "ycsb-e";
  if (inserts) {  // D and E read, scan and insert: the other YCSB forms' flags do not apply
    std::string w = "does not apply to --workload " + o.workload;
    if (o.hot_requests > 0) bad("--hot-requests", w);
    if (o.update_bytes > 0) bad("--update-bytes", w);
    if (o.long_txn != "none") bad("--long-txn", w);
    if (!o.ack_file.empty() || !o.verify_ack.empty()) bad("--ack-file/--verify-ack", w + " (YCSB A-C's)");
  } else {
    for (const char* f : {"--insert-rows", "--scan-length"})
      if (app.count(f)) bad(f, "applies to --workload ycsb-d and ycsb-e only");
  }
  if (o.workload == "ycsb-d" && app.count("--scan-length")) bad("--scan-length", "applies to --workload ycsb-e only");
  o.long_txn_sizes = parse_rows_list(o.long_txn_rows);
  if (o.workload == "smallbank") {
    if (o.hotspot_accounts > o.accounts) bad("--hotspot-accounts", "must not exceed --accounts");
    if (!o.ack_file.empty() || !o.verify_ack.empty())
      bad("--ack-file/--verify-ack", "are YCSB's; SmallBank checks conservation of money instead");
    return;
  }
  if (o.hot_requests > o.requests) bad("--hot-requests", "must not exceed --requests");
  if (o.hot_requests > 0) {
    if (o.hot_rows >= o.rows) bad("--hot-rows", "must be fewer than --rows");
    if (uint64_t(o.hot_requests) > o.hot_rows) bad("--hot-requests", "must not exceed --hot-rows (keys are distinct)");
  }
  if (o.requests_min > o.requests) bad("--requests-min", "must not exceed --requests");
  if (uint64_t(o.update_bytes) > uint64_t(o.columns) * uint64_t(o.column_size))
    bad("--update-bytes", "must not exceed the tuple's columns (--columns x --column-size)");
  if (o.long_txn != "none") {
    if (o.long_txn_threads >= o.threads) bad("--long-txn-threads", "must be fewer than --threads (normal transactions need a thread)");
    uint64_t most = 0;
    for (uint64_t n : o.long_txn_sizes) most = std::max(most, n);
    if (most > o.rows) bad("--long-txn-rows", "must not exceed --rows");
    if (o.long_txn_disjoint && most + uint64_t(o.requests) + o.hot_rows * (o.hot_requests > 0) > o.rows)
      bad("--long-txn-rows", "with --long-txn-disjoint must leave the normal transactions enough rows");
  }
}

// YCSB D/E's insert room when --insert-rows is not given: what the run can insert at up to
// kInsertsPerThreadSecond per worker (D at 20 000 rows inserts 26-30k per thread-second on a
// 2-core host with MMDB and Zen: 3x headroom), so that default flags run the whole --duration;
// with --txns, every measured request an insert. At least 4 x --rows, at most the flag's limit.
uint64_t default_insert_room(const Options& o) {
  constexpr double kInsertsPerThreadSecond = 100000;
  double secs = o.warmup_s + (o.txns ? 0.0 : o.duration_s);
  double n = double(o.threads) * (secs * kInsertsPerThreadSecond + double(o.txns) * double(o.requests));
  uint64_t room = uint64_t(std::min(n, double(uint64_t(1) << 36)));
  return std::max(4 * o.rows, (room + 1023) / 1024 * 1024);
}

}  // namespace

std::string image_settings(const Options& o, const std::string& engine) {
  nlohmann::json j = nlohmann::json::object();
  for (const ImageSetting& s : image_settings_table())
    if (listed(s.engines, engine, false) && listed(s.workloads, o.workload, true)) j[s.key] = s.get(o);
  return j.dump();
}

nlohmann::json Options::to_json() const {
  nlohmann::json j = {
      {"threads", threads},       {"warmup_s", warmup_s},
      {"duration_s", duration_s}, {"txns_per_thread", txns},
      {"seed", seed},             {"timeline_ms", timeline_ms},
      {"time_breakdown", time_breakdown},
      {"nvm_path", nvm_path},     {"nvm_size", nvm_size},
      {"dram_size", dram_size},   {"p_ratio", p_ratio},
      {"profile", profile},       {"persist_domain", persist_domain},
      {"numa_nodes", numa_nodes}, {"numa_policy", numa_policy}, {"numa_binding", numa_binding},
      {"numa_partitions", numa_partitions}, {"numa_delta", numa_delta}, {"numa_eta", numa_eta},
      {"numa_remap_ms", numa_remap_ms}, {"numa_node_threads", numa_node_threads}, {"numa_real_nodes", numa_real_nodes}, {"checkpoint", checkpoint}, {"checkpoint_fill", checkpoint_fill},
      {"log_size", log_size},     {"group_commit_us", group_commit_us}, {"recover", recover},
      {"zen_plus", zen_plus}, {"lrt_alpha", lrt_alpha}, {"lrt_beta", lrt_beta},
      {"lrt_gamma", lrt_gamma},
      {"page_size", page_size}, {"epoch_ms", epoch_ms}, {"gleaner_interval_ms", gleaner_interval_ms},
      {"snapshot_cache", snapshot_cache}, {"gleaner_mappers", gleaner_mappers},
      {"gleaner_reducers", gleaner_reducers},
      {"epoch_txns", epoch_txns}, {"persistent_row_bytes", persistent_row_bytes}, {"minor_gc", minor_gc},
      {"cached_versions", cached_versions}, {"input_log", input_log}, {"caracal_design", caracal_design},
      {"cache_epochs", cache_epochs},
      {"recovery_threads", recovery_threads},
      {"workload", workload},     {"rows", rows},
      {"read_ratio", read_ratio}, {"theta", theta},
      {"requests", requests},     {"columns", columns},
      {"column_size", column_size}, {"power_fail", power_fail},
      {"crash_at", crash_at},     {"evict_prob", evict_prob},
      {"fault", fault},
      {"hot_rows", hot_rows},     {"hot_requests", hot_requests},
      {"prefetch", prefetch}, {"update_bytes", update_bytes}, {"requests_min", requests_min},
      {"long_txn", long_txn},     {"long_txn_rows", long_txn_sizes},
      {"long_txn_disjoint", long_txn_disjoint}, {"long_txn_threads", long_txn_threads},
      {"long_txn_gap", long_txn_gap},
      {"insert_rows", insert_rows}, {"scan_length", scan_length},
      {"accounts", accounts},     {"hotspot_accounts", hotspot_accounts},
      {"hotspot_share", hotspot_share}, {"send_payment", send_payment},
      {"warehouses", warehouses}, {"tpcc_mix", tpcc_mix},
      {"neworder_remote_pct", neworder_remote_pct}, {"payment_remote_pct", payment_remote_pct},
      {"tpcc_new_orders", tpcc_new_orders}, {"persist_order", persist_order}};
  auto opt = [&](const char* k, const std::optional<double>& v) {
    j[k] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  opt("read_ns", read_ns);
  opt("write_gbps", write_gbps);
  opt("fence_ns", fence_ns);
  opt("remote_factor", remote_factor);
  opt("remote_read_factor", remote_read_factor);
  opt("remote_write_factor", remote_write_factor);
  opt("remote_dram_factor", remote_dram_factor);
  return j;
}

Options parse_options(int argc, char** argv, const std::string& engine, const std::string& cc) {
  Options o;
  CLI::App app{"rundb: one OLTP engine (" + engine + ") with one concurrency-control method (" +
               cc + ") on an emulated or real NVM device.\nPrints a summary to stderr and one "
               "JSON object to stdout (and --out)."};
  app.get_formatter()->column_width(34);
  SizeValidator size;
  FiniteValidator finite;
  CLI::Range non_negative(uint64_t(0), ~uint64_t(0) >> 1);
  std::string nvm_size, dram_size, log_size;

  app.add_option("--threads", o.threads, "worker threads")->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("--warmup", o.warmup_s, "warm-up seconds (not measured)")->check(finite)->check(CLI::Range(0.0, 3600.0))->capture_default_str();
  app.add_option("--duration", o.duration_s, "measured seconds")->check(finite)->check(CLI::Range(0.001, 86400.0))->capture_default_str();
  app.add_option("--txns", o.txns, "measure this many committed transactions per thread instead of --duration")->check(CLI::Range(uint64_t(0), uint64_t(1) << 40));
  app.add_option("--seed", o.seed, "random seed")->check(non_negative)->capture_default_str();
  app.add_option("--timeline-ms", o.timeline_ms, "report throughput per interval of this many ms (0 = off)")->check(CLI::Range(0, 60000));
  app.add_flag("--time-breakdown", o.time_breakdown, "mcsi, pgsi: report where the workers' time goes (snapshot generation, status storage, record access, other), timed with the TSC");
  app.add_option("--out", o.out, "also write the JSON result to this file");

  app.add_option("--nvm-path", o.nvm_path, "NVM image file (DAX file system = real PMem; default /dev/shm/nvtestbed-ENGINE-CC.img); with NUMA nodes, one file per node: a comma-separated list or a pattern with {node} (host node id, e.g. /mnt/pmem{node}/db.img)");
  app.add_option("--nvm-size", nvm_size, "NVM image size (default: what the engine needs)")->check(size);
  app.add_option("--dram-size", dram_size, "DRAM budget (default: database size / --p-ratio)")->check(size);
  app.add_option("--p-ratio", o.p_ratio, "NVM (database) to DRAM size ratio P")->check(finite)->check(CLI::Range(0.01, 1024.0))->capture_default_str();
  std::vector<std::string> profiles = dev::profile_names();
  app.add_option("--profile", o.profile, "device cost profile")->check(CLI::IsMember(profiles))->capture_default_str();
  app.add_option("--persist-domain", o.persist_domain, "adr: clwb needed; eadr: caches persistent")->check(CLI::IsMember({"adr", "eadr"}))->capture_default_str();
  app.add_option("--read-ns", o.read_ns, "override: random read latency of a 256 B unit (ns)")->check(finite)->check(CLI::Range(0.0, 100000.0));
  app.add_option("--write-gbps", o.write_gbps, "override: device write bandwidth (GB/s)")->check(finite)->check(CLI::Range(0.01, 10000.0));
  app.add_option("--fence-ns", o.fence_ns, "override: persist (fence) latency (ns)")->check(finite)->check(CLI::Range(0.0, 100000.0));
  app.add_option("--remote-factor", o.remote_factor, "override: remote NUMA cost factor of NVM reads and writes alike")->check(finite)->check(CLI::Range(1.0, 100.0));
  app.add_option("--remote-read-factor", o.remote_read_factor, "override: cost factor of a remote NVM read (optane-100: 1.2)")->check(finite)->check(CLI::Range(1.0, 100.0));
  app.add_option("--remote-write-factor", o.remote_write_factor, "override: cost factor of a remote NVM write-back (optane-100: 2.3)")->check(finite)->check(CLI::Range(1.0, 100.0));
  app.add_option("--remote-dram-factor", o.remote_dram_factor, "override: latency factor of a remote DRAM access (optane-100: 1.6)")->check(finite)->check(CLI::Range(1.0, 100.0));
  app.add_option("--numa-nodes", o.numa_nodes, "NUMA nodes: real ones where the host has that many (libnuma), else virtual ones in the device model (default 1, or 2 for a --numa-policy that needs two, on a host with two real nodes)")->check(CLI::Range(1, 64));
  std::vector<std::string> policies = dev::placement_names();
  policies.push_back("shared");
  policies.push_back("aware");
  app.add_option("--numa-policy", o.numa_policy, "memory placement: stripe (the image in k stripes, threads round robin), local (threads and memory on node 0), remote (threads on node 0, memory on node 1), naive (interleaved pages, shared pools; also 'shared'), local-write (per-node pools, Zen writes only its node's Met-Cache and NVM; also 'aware'), soft-partition (local-write + Algorithms 3 and 4)")->check(CLI::IsMember(policies))->capture_default_str();
  app.add_option("--numa-real-nodes", o.numa_real_nodes, "real NUMA node ids to use, comma separated (default 0..k-1); a node the host lacks is an error")->check([](const std::string& s) {
    static const std::regex list("^[0-9]+(,[0-9]+)*$");
    return std::regex_match(s, list) ? std::string() : "'" + s + "' is not a list of node ids like 0,1";
  });
  app.add_option("--numa-binding", o.numa_binding, "threads to nodes under naive, local-write and soft-partition: even (thread t on node t mod k) or group (fill a node with --numa-node-threads before the next; Figure 30)")->check(CLI::IsMember({"even", "group"}))->capture_default_str();
  app.add_option("--numa-node-threads", o.numa_node_threads, "group binding: threads per node (0 = a real node's CPUs, or host CPUs / k for virtual nodes)")->check(CLI::Range(0, 1024))->capture_default_str();
  app.add_option("--numa-partitions", o.numa_partitions, "soft partition: hash partitions of each table's partition key")->check(CLI::Range(uint64_t(1), uint64_t(1) << 20))->capture_default_str();
  app.add_option("--numa-delta", o.numa_delta, "soft partition, Algorithm 3: node load difference (share of queued transactions) beyond which the least loaded node gets the transaction")->check(finite)->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--numa-eta", o.numa_eta, "soft partition, Algorithm 4: remap a partition when the candidate node accessed it more than eta x its owner")->check(finite)->check(CLI::Range(1.0, 100.0))->capture_default_str();
  app.add_option("--numa-remap-ms", o.numa_remap_ms, "soft partition: run Algorithm 4 every this many ms (0 = never remap)")->check(CLI::Range(0, 600000))->capture_default_str();

  app.add_option("--checkpoint", o.checkpoint, "MMDB: checkpoint after load (recovery needs one)")->check(CLI::IsMember({"none", "after-load"}))->capture_default_str();
  app.add_option("--checkpoint-fill", o.checkpoint_fill, "MMDB: take a fuzzy checkpoint (and truncate the logs) when a redo log is this full")->check(CLI::Range(0.05, 1.0))->capture_default_str();
  app.add_option("--group-commit-us", o.group_commit_us, "WBL: group-commit interval in microseconds (a {cp, cd} record per interval)")->check(CLI::Range(1, 1000000))->capture_default_str();
  // Zen+ (journal section 4.1.2): fractions, so that 0.95 is the paper's 95%; a value above 1
  // (a percentage typed by habit) is refused rather than guessed at.
  std::string zen_plus = "off";
  auto fraction = [](double lo, bool lo_open, double hi, bool hi_open) {
    return [=](const std::string& v) -> std::string {
      double x = std::stod(v);
      if ((lo_open ? x > lo : x >= lo) && (hi_open ? x < hi : x <= hi)) return {};
      return "'" + v + "' is not a fraction in " + (lo_open ? "(" : "[") + std::to_string(lo).substr(0, 3) + ", " +
             std::to_string(hi).substr(0, 3) + (hi_open ? ")" : "]") + " (write 0.95 for 95%)";
    };
  };
  app.add_option("--zen-plus", zen_plus, "Zen with mvcc/hekaton/cicada: Zen+ (on: its MVCC-based adaptive execution: read-only transactions are snapshot readers whose Met-Cache misses are read in NVM, and conditions alpha, beta, gamma enter the exclusive stage), or Zen as zen-vldb21 describes it (off: misses fill the Met-Cache; the exclusive mode entered when a Met-Cache region runs out or a garbage queue grows)")->check(CLI::IsMember({"on", "off"}))->capture_default_str();
  app.add_option("--lrt-alpha", o.lrt_alpha, "Zen+ condition 1: a transaction (not a snapshot reader) that accessed more tuples than this FRACTION of its Met-Cache region runs exclusively (0.95 = the paper's 95%)")->check(finite)->check(fraction(0, true, 1, false))->capture_default_str();
  app.add_option("--lrt-beta", o.lrt_beta, "Zen+ condition 2: free NVM pages below this FRACTION of the page pool make the running transaction with the most accessed tuples run exclusively (0.05 = 5%; 0 = off)")->check(finite)->check(fraction(0, false, 1, true))->capture_default_str();
  app.add_option("--lrt-gamma", o.lrt_gamma, "Zen+ condition 3: a transaction whose aborted attempts accessed more than this many tuples in all runs exclusively (default: the paper's 16M x rows / 2^28, at least 1024)")->check(CLI::Range(uint64_t(1), uint64_t(1) << 40));
  app.add_option("--page-size", o.page_size, "FOEDUS: bytes per page, volatile and snapshot (a power of two that holds a record)")->check(CLI::Range(uint32_t(256), uint32_t(1) << 24))->check([](const std::string& v) {
    uint64_t x = std::stoull(v);
    return x && !(x & (x - 1)) ? std::string() : "'" + v + "' is not a power of two";
  })->capture_default_str();
  app.add_option("--epoch-ms", o.epoch_ms, "FOEDUS: epoch length in ms (commits are acknowledged once their epoch is durable)")->check(CLI::Range(1, 10000))->capture_default_str();
  app.add_option("--gleaner-interval-ms", o.gleaner_interval_ms, "FOEDUS: log gleaner period in ms (it also runs when the volatile pool is half full or a log file half full)")->check(CLI::Range(1, 3600000))->capture_default_str();
  app.add_option("--snapshot-cache", o.snapshot_cache, "FOEDUS: the DRAM cache of snapshot pages (off: every snapshot page read goes to NVM, the paper's FOEDUS-NoSC)")->check(CLI::IsMember({"on", "off"}))->capture_default_str();
  app.add_option("--gleaner-mappers", o.gleaner_mappers, "FOEDUS: log gleaner mapper threads")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--gleaner-reducers", o.gleaner_reducers, "FOEDUS: log gleaner reducer threads")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--log-size", log_size, "MMDB, FOEDUS: log file per thread in NVM (default: max(64M, 2 x database / threads))")->check(size);

  app.add_flag("--recover", o.recover, "recover from the existing NVM image at --nvm-path instead of loading, check it, then stop (no measured run: --duration is refused); the flags that shape the image (--rows, --workload, ...) are read from its header when left out");
  app.add_option("--recovery-threads", o.recovery_threads, "threads for recovery (default --threads)")->check(CLI::Range(1, 1024));
  app.add_option("--ack-file", o.ack_file, "write per-thread acknowledgement files PREFIX.<tid> of committed writes");
  app.add_option("--verify-ack", o.verify_ack, "with --recover: check every acknowledged commit is present and none is partial");

  app.add_flag("--power-fail", o.power_fail, "simulate power failure: the persistent image changes only at flush+fence (ADR) or every store (eADR)");
  app.add_option("--crash-at", o.crash_at, "with --power-fail: none, fence:N, time:MS, point:NAME or point:NAME:N (exits 86)")->check([](const std::string& s) {
    try { dev::parse_crash(s); return std::string(); } catch (const std::exception& e) { return std::string(e.what()); }
  });
  app.add_option("--evict-prob", o.evict_prob, "with --power-fail: share of dirty unflushed lines written back early at the crash")->check(finite)->check(CLI::Range(0.0, 1.0));
  app.add_option("--fault", o.fault, "inject a persistence bug the crash tests must catch")->check(CLI::IsMember({"none", "drop-flush", "drop-fence", "reorder-lp", "early-record", "skip-epoch-fence", "wrong-parity"}))->capture_default_str();
  app.add_option("--workload", o.workload, "benchmark; ycsb-a/b/c: YCSB with --read-ratio 0.5/0.95/1; ycsb-d: 95% reads of the latest keys, 5% inserts; ycsb-e: 95% short scans, 5% inserts")->check(CLI::IsMember({"ycsb", "ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "smallbank", "tpcc"}))->capture_default_str();
  app.add_option("--rows", o.rows, "YCSB table rows")->check(CLI::Range(uint64_t(1), uint64_t(1) << 36))->capture_default_str();
  app.add_option("--read-ratio", o.read_ratio, "YCSB share of read requests")->check(finite)->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--theta", o.theta, "YCSB Zipf theta (0 = uniform)")->check(finite)->check(CLI::Range(0.0, 0.99))->capture_default_str();
  app.add_option("--requests", o.requests, "YCSB requests per transaction (distinct keys)")->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("--columns", o.columns, "YCSB columns besides the 8 B key")->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--column-size", o.column_size, "YCSB bytes per column")->check(CLI::Range(8, 65536))->capture_default_str();
  app.add_option("--hot-rows", o.hot_rows, "YCSB rows in the hot set (with --hot-requests)")->check(CLI::Range(uint64_t(1), uint64_t(1) << 36))->capture_default_str();
  app.add_option("--hot-requests", o.hot_requests, "YCSB requests per transaction on the hot rows (NVCaracal's contention)")->check(CLI::Range(0, 1024))->capture_default_str();
  app.add_flag("--prefetch,!--no-prefetch", o.prefetch, "YCSB: prefetch each transaction's index slots and tuples before running it (default on; engines mmdb and zen; --no-prefetch: one miss after another)");
  app.add_option("--update-bytes", o.update_bytes, "YCSB: a write is a read-modify-write of the first N bytes after the key (0 = blind write of the whole tuple)")->check(CLI::Range(0, 65536 * 100))->capture_default_str();
  app.add_option("--requests-min", o.requests_min, "YCSB: requests per transaction uniform in [N, --requests] (0 = always --requests)")->check(CLI::Range(0, 1024))->capture_default_str();
  app.add_option("--long-txn", o.long_txn, "YCSB long-running transactions on --long-txn-threads threads")->check(CLI::IsMember({"none", "scan", "update"}))->capture_default_str();
  app.add_option("--long-txn-rows", o.long_txn_rows, "rows per long transaction; a list N,M,... is used in turn")->capture_default_str();
  app.add_flag("--long-txn-disjoint", o.long_txn_disjoint, "long transactions work on the last rows, which normal transactions never touch");
  app.add_option("--long-txn-threads", o.long_txn_threads, "threads that issue long transactions (fewer than --threads)")->check(CLI::Range(1, 1023))->capture_default_str();
  app.add_option("--long-txn-gap", o.long_txn_gap, "normal transactions a long-txn thread runs before each long one (0 = back to back)")->check(CLI::Range(uint64_t(0), uint64_t(1) << 40))->capture_default_str();
  app.add_option("--insert-rows", o.insert_rows, "YCSB D/E: room for this many inserted rows; the run stops with an error when they are used up (default: what the run can insert at 100k rows per thread-second over --warmup + --duration, or every request of --txns, at least 4 x --rows; config.insert_rows reports it)")->check(CLI::Range(uint64_t(0), uint64_t(1) << 36))->capture_default_str();
  app.add_option("--scan-length", o.scan_length, "YCSB E: each scan reads uniformly 1..N rows in key order")->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_option("--accounts", o.accounts, "SmallBank customers")->check(CLI::Range(uint64_t(2), uint64_t(1) << 34))->capture_default_str();
  app.add_option("--hotspot-accounts", o.hotspot_accounts, "SmallBank hotspot customers (at most --accounts)")->check(CLI::Range(uint64_t(1), uint64_t(1) << 34))->capture_default_str();
  app.add_option("--hotspot-share", o.hotspot_share, "SmallBank share of customer draws that go to the hotspot")->check(finite)->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_flag("--send-payment", o.send_payment, "add SendPayment to SmallBank's uniform mix (six types)");
  app.add_option("--warehouses", o.warehouses, "TPC-C warehouses")->check(CLI::Range(1, 65536))->capture_default_str();
  app.add_option("--tpcc-mix", o.tpcc_mix, "TPC-C mix: standard, np (NewOrder:Payment 45:43), deterministic, or a list like neworder:45,payment:55")->check([](const std::string& s) {
    if (s == "standard" || s == "np" || s == "deterministic") return std::string();
    static const std::regex list("^(neworder|payment|order_status|delivery|stock_level):[0-9]+(,(neworder|payment|order_status|delivery|stock_level):[0-9]+)*$");
    return std::regex_match(s, list) ? std::string() : "'" + s + "' is not standard, np, deterministic or NAME:WEIGHT,...";
  })->capture_default_str();
  app.add_option("--neworder-remote-pct", o.neworder_remote_pct, "TPC-C: % of NewOrder items from a remote warehouse")->check(CLI::Range(0, 100))->capture_default_str();
  app.add_option("--payment-remote-pct", o.payment_remote_pct, "TPC-C: % of Payments by a remote warehouse's customer")->check(CLI::Range(0, 100))->capture_default_str();
  app.add_option("--tpcc-new-orders", o.tpcc_new_orders, "TPC-C: room for this many NewOrders in the tables (their inserts)")->check(CLI::Range(uint64_t(1000), uint64_t(1) << 30))->capture_default_str();
  app.add_option("--epoch-txns", o.epoch_txns, "nvcaracal: transactions per epoch, at most what the DRAM budget's transient pool holds (default: the largest it holds, up to 100000; config.epoch_txns reports it)")->check(CLI::Range(uint64_t(1), uint64_t(1) << 32));
  app.add_option("--persistent-row-bytes", o.persistent_row_bytes, "nvcaracal: bytes of a persistent row (two versions' 64 B header and an inline heap; a multiple of 64)")->check(CLI::Range(1u, 65536u))->capture_default_str();
  app.add_flag("--minor-gc,!--no-minor-gc", o.minor_gc, "nvcaracal: minor GC of inline versions at the final write (default on; off: major GC only)");
  app.add_flag("--cached-versions,!--no-cached-versions", o.cached_versions, "nvcaracal: cache persistent-row values in DRAM (default on)");
  app.add_flag("--input-log,!--no-input-log", o.input_log, "nvcaracal: log each epoch's transaction inputs in NVM before it runs (default on; off: not recoverable)");
  app.add_option("--caracal-design", o.caracal_design, "nvcaracal design variant (Figures 7, 10): nvcaracal; all-nvmm (every version in NVM, no cache); hybrid (every update also persisted to NVM, cache, no input log); no-logging, all-dram (no input log; all-dram with --profile dram). hybrid, no-logging and all-dram are not recoverable")->check(CLI::IsMember({"nvcaracal", "all-nvmm", "hybrid", "no-logging", "all-dram"}))->capture_default_str();
  app.add_option("--cache-epochs", o.cache_epochs, "nvcaracal: a cached version unused for this many epochs is evicted (K)")->check(CLI::Range(uint64_t(1), uint64_t(1000)))->capture_default_str();
  app.add_option("--persist-order", o.persist_order, "Zen: multi-table persist order, table names LP-first, comma separated (default: the benchmark's)");

  app.add_flag("--keep-image", o.keep_image, "keep the default image (no --nvm-path given) after a clean exit, e.g. to --recover it later; an image at a given --nvm-path is always kept");

  // Every numeric flag: a value that is no number is named as such before its range is checked.
  for (CLI::Option* opt : app.get_options()) {
    std::string type = opt->get_type_name();
    type = type.substr(0, type.find(':'));  // "UINT:UINT in [1 - 10]": the type, then its checks
    if (type != "INT" && type != "UINT" && type != "FLOAT") continue;
    bool integer = type != "FLOAT";
    CLI::Validator number([integer](std::string& v) { return number_error(v, integer); }, "", "");
    opt->transform(number);
  }
  // Usage errors as rundb's other errors read: "rundb: error: ...", exit 2 (below).
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "rundb: error: " + std::string(e.what()) + "\nRun with --help for more information.\n";
  });

  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ExtrasError&) {
      throw CLI::ParseError(unknown_argument(app, app.remaining()), CLI::ExitCodes::ExtrasError);
    }
    if (!nvm_size.empty()) o.nvm_size = dev::parse_size(nvm_size);
    if (!dram_size.empty()) o.dram_size = dev::parse_size(dram_size);
    if (!log_size.empty()) o.log_size = dev::parse_size(log_size);
    o.default_image = o.nvm_path.empty();
    if (o.default_image) o.nvm_path = "/dev/shm/nvtestbed-" + engine + "-" + cc + ".img";
    if (o.recover) {
      adopt_image_settings(app, o, engine, o.nvm_path);
      // The driver recovers and stops (docs/output.md): a measured run after it would be
      // silently skipped, so its flags are refused instead. (--warmup, which scripts repeat
      // as 0 from the run before, only ever delays a measurement: no harm in ignoring it.)
      for (const char* f : {"--duration", "--timeline-ms"})
        if (app.count(f))
          throw CLI::ValidationError(f, "--recover recovers the image and stops: it runs no workload after recovery "
                                        "(measure in a run without --recover)");
    }
    o.zen_plus = zen_plus == "on";
    if (o.zen_plus && (engine != "zen" || (cc != "mvcc" && cc != "hekaton" && cc != "cicada")))
      throw CLI::ValidationError("--zen-plus on", "Zen+ is Zen with a multi-version method (mvcc, hekaton, cicada), not " +
                                 engine + "-" + cc);
    if (uint64_t(o.requests) > o.rows)
      throw CLI::ValidationError("--requests", "must not exceed --rows (keys are distinct)");
    validate_workload(app, o);
    // Sized from this run (recorded in the image, which --recover reads it from).
    if ((o.workload == "ycsb-d" || o.workload == "ycsb-e") && o.insert_rows == 0 && !o.recover)
      o.insert_rows = default_insert_room(o);
    if (o.persistent_row_bytes < 128)
      throw CLI::ValidationError("--persistent-row-bytes", "cannot hold two versions: the 64 B header of both and two inline halves need at least 128 B");
    if (o.persistent_row_bytes % 64)
      throw CLI::ValidationError("--persistent-row-bytes", "must be a multiple of 64 (whole cache lines)");
    if ((o.crash_at != "none" || o.evict_prob > 0) && !o.power_fail)
      throw CLI::ValidationError("--crash-at/--evict-prob", "need --power-fail");
    if (!o.out.empty() && !std::ofstream(o.out, std::ios::app))
      throw CLI::ValidationError("--out", "cannot write " + o.out);
    if (engine == "foedus" && o.workload.rfind("ycsb", 0) == 0) {
      // A YCSB record (key, columns, and FOEDUS's 8 B TID) must fit a page after its 64 B header.
      uint64_t record = 8 + uint64_t(o.columns) * uint64_t(o.column_size) + 8;
      if (64 + (record + 7) / 8 * 8 > o.page_size)
        throw CLI::ValidationError("--page-size", std::to_string(o.page_size) + " cannot hold one YCSB record (" +
                                   std::to_string(record) + " B with its TID, after a 64 B page header)");
    }
    if (o.time_breakdown && cc != "mcsi" && cc != "pgsi")
      throw CLI::ValidationError("--time-breakdown", "is timed in mcsi and pgsi only, not " + cc);
    if (o.numa_policy == "shared") o.numa_policy = "naive";  // the specs' older names
    if (o.numa_policy == "aware") o.numa_policy = "local-write";
    if (o.numa_policy == "soft-partition" && (o.workload != "ycsb" && o.workload != "ycsb-a" && o.workload != "ycsb-b" &&
                                              o.workload != "ycsb-c" && o.workload != "tpcc"))
      throw CLI::ValidationError("--numa-policy soft-partition", "partitions YCSB (A-C) and TPC-C requests, not " + o.workload);
    if (o.numa_policy == "soft-partition" && o.long_txn != "none")
      throw CLI::ValidationError("--numa-policy soft-partition", "does not dispatch --long-txn transactions");
    if (dev::per_node_pools(dev::parse_placement(o.numa_policy)) && engine != "zen")
      throw CLI::ValidationError("--numa-policy " + o.numa_policy,
                                 "needs an engine with node-local pools (zen), not " + engine);
    try {  // nodes against the host: exit 2 as for any bad flag
      NumaPlan plan = plan_numa(o, host_numa_nodes());
      if (!o.default_image) node_image_paths(o.nvm_path, plan);
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError("NUMA", e.what());
    }
    if (!o.verify_ack.empty() && !o.recover)
      throw CLI::ValidationError("--verify-ack", "needs --recover");
    if (o.workload == "tpcc" && (!o.ack_file.empty() || !o.verify_ack.empty()))
      throw CLI::ValidationError("--ack-file/--verify-ack", "are YCSB's; TPC-C checks its consistency conditions");
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    exit(rc == 0 ? 0 : 2);
  }
  if (o.recovery_threads == 0) o.recovery_threads = o.threads;
  return o;
}

}  // namespace nvt
