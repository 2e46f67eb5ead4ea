#include "system/host.h"

#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace nvt {

int real_numa_nodes() { return numa_available() < 0 ? 1 : numa_max_node() + 1; }

static std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

nlohmann::json host_json(const dev::NvmImage& nvm) {
  char hn[256] = {};
  gethostname(hn, sizeof hn - 1);
  const dev::HostCosts& h = nvm.host();
  return {{"hostname", hn},
          {"cpu", cpu_model()},
          {"cores", std::thread::hardware_concurrency()},
          {"numa_nodes", real_numa_nodes()},
          {"nvm",
           {{"real", nvm.is_pmem()},
            {"emulated", !nvm.is_pmem()},
            {"path", nvm.path()},
            {"size", nvm.size()}}},
          {"calibration",
           {{"tsc_ghz", h.tsc_ghz},
            {"dram_read_ns", h.dram_read_ns},
            {"persist_ns", h.persist_ns},
            {"slower_than_target", h.slower_than_target}}}};
}

void pin_thread(int tid, int real_node) {
  int ncpu = int(std::thread::hardware_concurrency());
  if (ncpu <= 0) return;
  if (real_node >= 0 && real_numa_nodes() > 1) {  // real NUMA: stay on the node, the kernel picks the core
    if (numa_run_on_node(real_node) != 0)
      throw std::runtime_error("cannot run on NUMA node " + std::to_string(real_node));
    return;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(tid % ncpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

}  // namespace nvt
