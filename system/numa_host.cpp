#include "system/numa_host.h"

#include <numa.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "storage/device/device.h"
#include "storage/device/nvm_image.h"

namespace nvt {

namespace {
std::string list(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}
}  // namespace

std::vector<int> host_numa_nodes() {
  std::vector<int> r;
  if (numa_available() < 0) return {0};
  for (int n = 0; n <= numa_max_node(); n++)
    if (numa_bitmask_isbitset(numa_all_nodes_ptr, unsigned(n))) r.push_back(n);
  if (r.empty()) r.push_back(0);
  return r;
}

NumaPlan plan_numa(const Options& o, const std::vector<int>& host) {
  NumaPlan p;
  p.placement = dev::parse_placement(o.numa_policy);
  std::vector<int> asked;
  if (!o.numa_real_nodes.empty()) {
    size_t i = 0;
    while (i <= o.numa_real_nodes.size()) {
      size_t e = o.numa_real_nodes.find(',', i);
      if (e == std::string::npos) e = o.numa_real_nodes.size();
      std::string text = o.numa_real_nodes.substr(i, e - i);
      if (text.empty() || text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos)
        throw std::invalid_argument("--numa-real-nodes: '" + text + "' is not a NUMA node id");
      int id = std::stoi(text);
      if (std::find(host.begin(), host.end(), id) == host.end())
        throw std::invalid_argument("--numa-real-nodes: NUMA node " + std::to_string(id) +
                                    " does not exist on this host (its nodes: " + list(host) + ")");
      if (std::find(asked.begin(), asked.end(), id) != asked.end())
        throw std::invalid_argument("--numa-real-nodes: node " + std::to_string(id) + " named twice");
      asked.push_back(id);
      i = e + 1;
    }
  }
  int k = o.numa_nodes;
  if (k == 0) k = !asked.empty() ? int(asked.size()) : dev::needs_two_nodes(p.placement) ? 2 : 1;
  if (!asked.empty() && int(asked.size()) != k)
    throw std::invalid_argument("--numa-real-nodes names " + std::to_string(asked.size()) + " nodes but --numa-nodes is " +
                                std::to_string(k));
  if (dev::needs_two_nodes(p.placement) && k < 2)
    throw std::invalid_argument("--numa-policy " + o.numa_policy + " needs 2 NUMA nodes, not --numa-nodes " + std::to_string(k));
  // Real nodes where the host has k of them; a policy that needs two on a host with fewer must
  // ask for virtual ones: a run silently modelling what the user thought was real is not honest.
  if (o.numa_nodes == 0 && k > int(host.size()))
    throw std::invalid_argument("--numa-policy " + o.numa_policy + " needs " + std::to_string(k) +
                                " NUMA nodes and this host has " + std::to_string(host.size()) +
                                " real one" + (host.size() == 1 ? "" : "s") + " (" + list(host) +
                                "): add --numa-nodes " + std::to_string(k) + " for virtual nodes in the device model");
  p.nodes = k;
  if (!asked.empty()) p.real = asked;
  else if (k <= int(host.size())) p.real.assign(host.begin(), host.begin() + k);
  else p.real.assign(size_t(k), -1);
  int per_node = o.numa_node_threads;
  if (per_node == 0) {
    int cpus = int(std::thread::hardware_concurrency());
    if (!p.virtual_nodes() && numa_available() >= 0) {
      struct bitmask* m = numa_allocate_cpumask();
      if (numa_node_to_cpus(p.real[0], m) == 0) cpus = int(numa_bitmask_weight(m)) * k;
      numa_free_cpumask(m);
    }
    per_node = std::max(1, cpus / k);
  }
  p.thread_node = dev::bind_threads(p.placement, k, o.threads, o.numa_binding, per_node);
  return p;
}

nlohmann::json NumaPlan::to_json() const {
  nlohmann::json nodes_j = nlohmann::json::array();
  int nreal = 0;
  for (int n = 0; n < nodes; n++) {
    bool is_real = real[size_t(n)] >= 0;
    nreal += is_real;
    nodes_j.push_back({{"node", n}, {"kind", is_real ? "real" : "virtual"},
                       {"host_node", is_real ? nlohmann::json(real[size_t(n)]) : nlohmann::json(nullptr)}});
  }
  return {{"policy", dev::placement_name(placement)},
          {"nodes", nodes},
          {"real_nodes", nreal},
          {"virtual_nodes", nodes - nreal},
          {"node_list", nodes_j},
          {"thread_nodes", thread_node}};
}

std::vector<std::string> node_image_paths(const std::string& arg, const NumaPlan& p) {
  std::vector<std::string> r;
  const std::string mark = "{node}";
  if (arg.find(mark) != std::string::npos) {
    for (int n = 0; n < p.nodes; n++) {
      std::string s = arg;
      std::string id = std::to_string(p.real[size_t(n)] >= 0 ? p.real[size_t(n)] : n);
      for (size_t i = s.find(mark); i != std::string::npos; i = s.find(mark, i + id.size())) s.replace(i, mark.size(), id);
      r.push_back(s);
    }
  } else if (arg.find(',') != std::string::npos) {
    size_t i = 0;
    for (;;) {
      size_t e = arg.find(',', i);
      std::string s = arg.substr(i, e == std::string::npos ? std::string::npos : e - i);
      if (s.empty()) throw std::invalid_argument("--nvm-path '" + arg + "' has an empty file name");
      if (std::find(r.begin(), r.end(), s) != r.end())
        throw std::invalid_argument("--nvm-path names " + s + " twice: each NUMA node needs its own file");
      r.push_back(s);
      if (e == std::string::npos) break;
      i = e + 1;
    }
    if (int(r.size()) != p.nodes)
      throw std::invalid_argument("--nvm-path lists " + std::to_string(r.size()) + " NVM image files and the run has " +
                                  std::to_string(p.nodes) + " NUMA node" + (p.nodes == 1 ? "" : "s") +
                                  ": give one file per node (or one file for the whole image)");
  } else {
    r.push_back(arg);
  }
  return r;
}

void apply_numa(const NumaPlan& p, const dev::NvmImage& nvm) {
  dev::set_numa_layout(p.placement, p.nodes, p.thread_node);
  if (p.nodes > 1 && !p.virtual_nodes()) {
    dev::set_real_nodes(p.real);
    dev::place_image(dev::g_model.base, nvm.size(), nvm.paths().size() > 1 && nvm.is_pmem());
  }
}

}  // namespace nvt
