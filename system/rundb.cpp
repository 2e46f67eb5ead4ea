// rundb: one engine with one CC method (chosen in config.h / by make), on the device model.
#include "system/rundb_headers.h"  // first: precompiled (Makefile)
#include <cstdio>
#include <fstream>
#include <iostream>

#include "benchmarks/smallbank.h"
#include "benchmarks/tpcc_det.h"
#include "benchmarks/ycsb_de.h"
#include "system/deterministic_run.h"
#include "system/driver.h"
#include "system/pair.h"

namespace {
// The benchmark --workload names: one line per benchmark family. (A template, so that a
// workload an engine cannot run is discarded at compile time rather than instantiated.)
template <class Engine, class CC>
nlohmann::json run_workload(const nvt::RunContext& ctx) {
  using namespace nvt;
  const std::string& w = ctx.o.workload;
  if constexpr (requires { Engine::kDeterministic; }) {
    // Epoch-batched deterministic execution: the benchmarks that declare their write sets.
    if (w == "ycsb" || w == "ycsb-a" || w == "ycsb-b" || w == "ycsb-c") return run_deterministic<Engine, Ycsb>(ctx);
    if (w == "smallbank") return run_deterministic<Engine, Smallbank>(ctx);
    if (w == "tpcc") return run_deterministic<Engine, TpccDet>(ctx);
    throw std::invalid_argument("--workload " + w + " does not declare its write sets yet, which engine " + ctx.engine +
                                " (deterministic) needs");
  } else {
  if (w == "ycsb") return run_pair<Engine, CC, Ycsb>(ctx);
  if (w == "ycsb-a" || w == "ycsb-b" || w == "ycsb-c") return run_pair<Engine, CC, Ycsb>(ctx);
  if (w == "smallbank") return run_pair<Engine, CC, Smallbank>(ctx);
  if (w == "tpcc" || w == "ycsb-d" || w == "ycsb-e") {
    // Workloads that insert (TPC-C also deletes) and scan in key order: an engine without
    // inserts and ordered scans (nvmvcc so far; storage/engine.h) refuses them by name.
    if constexpr (offers_inserts<Engine>)
      return w == "tpcc" ? run_pair<Engine, CC, Tpcc>(ctx) : run_pair<Engine, CC, YcsbDE>(ctx);
    else
      throw std::invalid_argument("--workload " + w + " needs inserts, deletes and ordered scans, which engine " +
                                  ctx.engine + " does not offer");
  }
  throw std::invalid_argument("unknown --workload " + w);  // options.cpp lists the valid ones
  }
}
}  // namespace

int main(int argc, char** argv) {
  using namespace nvt;
  Options o = parse_options(argc, argv, pair::kEngine, pair::kCC);
  install_interrupt_handlers();
  int rc = 0;
  try {
    RunContext ctx{o, pair::kEngine, pair::kCC};
    nlohmann::json out = run_workload<pair::Engine, pair::CC>(ctx);
    // A signal after the measured phase ended (during the checks) still marks the run.
    if (interrupt_signal() && out.contains("results") && !out.contains("recovery")) out["interrupted"] = true;
    print_summary(out);
    std::string text = out.dump(2);
    std::cout << text << std::endl;
    if (!o.out.empty()) {
      std::ofstream f(o.out);
      if (!(f << text << "\n")) {
        std::cerr << "rundb: cannot write --out " << o.out << "\n";
        return 1;
      }
    }
    for (const char* k : {"verification", "invariants", "conservation", "consistency"})
      if (out.contains(k) && out[k]["violations"].get<uint64_t>() > 0) rc = 3;
  } catch (const std::exception& e) {
    std::cerr << "rundb: error: " << e.what() << "\n";
    rc = 1;
  }
  set_interruptible(false);  // a signal from here on exits at once
  // The default image is the run's scratch space: gone after a clean exit unless --keep-image
  // (a given --nvm-path is the user's, and an image after a failure or a signal is left to
  // inspect or --recover).
  if (rc == 0 && o.default_image && !o.keep_image && !interrupt_signal()) {
    std::vector<std::string> files{o.nvm_path};
    try {
      files = node_image_paths(o.nvm_path, plan_numa(o, host_numa_nodes()));
    } catch (const std::exception&) {
    }
    for (const std::string& f : files) std::remove(f.c_str());
  }
  // Stopped by SIGINT (130) or SIGTERM (143), as the shell reports a process the signal killed,
  // after the results were printed; a violation or error found on the way out still wins.
  if (rc == 0 && interrupt_signal()) rc = 128 + interrupt_signal();
  return rc;
}
