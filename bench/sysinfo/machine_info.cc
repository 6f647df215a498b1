#include "bench/sysinfo/machine_info.h"

namespace dlbench::sysinfo {
namespace {

using nlohmann::json;

// Writes fields into one JSON object, collecting the reasons of unavailable ones.
class FieldWriter {
 public:
  explicit FieldWriter(json& object) : object_(object) {}
  ~FieldWriter() {
    if (!unavailable_.empty()) object_["unavailable"] = unavailable_;
  }
  template <class T>
  void put(const char* name, const Reported<T>& field) {
    if (field.available()) {
      object_[name] = field.value();
    } else {
      object_[name] = nullptr;
      unavailable_[name] = field.reason();
    }
  }
  template <class T>
  void put(const char* name, const T& value) {
    object_[name] = value;
  }

 private:
  json& object_;
  json unavailable_ = json::object();
};

json host_json(const HostInfo& h) {
  json o = json::object();
  FieldWriter w(o);
  w.put("hostname", h.hostname);
  w.put("architecture", h.architecture);
  w.put("cpu_model", h.cpu_model);
  w.put("sockets", h.sockets);
  w.put("cores", h.cores);
  w.put("threads", h.threads);
  w.put("numa_nodes", h.numa_nodes);
  w.put("memory_bytes", h.memory_bytes);
  w.put("os", h.os);
  w.put("kernel", h.kernel);
  return o;
}

json gpu_json(const GpuInfo& g) {
  json o = json::object();
  FieldWriter w(o);
  w.put("name", g.name);
  w.put("nvml_index", g.nvml_index);
  w.put("cuda_index", g.cuda_index);
  w.put("uuid", g.uuid);
  w.put("pci_bus_id", g.pci_bus_id);
  w.put("compute_capability", g.compute_capability);
  w.put("sm_count", g.sm_count);
  w.put("memory_bytes", g.memory_bytes);
  w.put("l2_cache_bytes", g.l2_cache_bytes);
  w.put("max_sm_clock_mhz", g.max_sm_clock_mhz);
  w.put("max_memory_clock_mhz", g.max_memory_clock_mhz);
  w.put("memory_bus_width_bits", g.memory_bus_width_bits);
  w.put("memory_bandwidth_gb_per_s", g.memory_bandwidth_gb_per_s);
  w.put("pcie_generation_max", g.pcie_generation_max);
  w.put("pcie_width_max", g.pcie_width_max);
  w.put("pcie_generation_current", g.pcie_generation_current);
  w.put("pcie_width_current", g.pcie_width_current);
  w.put("nvlink_links_active", g.nvlink_links_active);
  w.put("power_limit_w", g.power_limit_w);
  w.put("ecc_enabled", g.ecc_enabled);
  w.put("mig_enabled", g.mig_enabled);
  w.put("persistence_enabled", g.persistence_enabled);
  return o;
}

json software_json(const GpuSoftware& s) {
  json o = json::object();
  FieldWriter w(o);
  w.put("driver_version", s.driver_version);
  w.put("nvml_version", s.nvml_version);
  w.put("cuda_driver_api", s.cuda_driver_api);
  w.put("cuda_runtime", s.cuda_runtime);
  w.put("cudnn", s.cudnn);
  w.put("cublas", s.cublas);
  w.put("nccl", s.nccl);
  return o;
}

}  // namespace

MachineInfo query_machine(const nvml::Nvml& nvml) {
  return MachineInfo{build_info(), query_host(), query_gpus(nvml), describe_interconnect(nvml, {})};
}

json to_json(const MachineInfo& m) {
  json gpus = json::array();
  for (const GpuInfo& g : m.gpu.gpus) gpus.push_back(gpu_json(g));
  return json{
      {"schema", "dlbench.info/1"},
      {"dlbench",
       {{"version", m.build.version},
        {"git_hash", m.build.git_hash},
        {"compiler", m.build.compiler},
        {"build_type", m.build.build_type},
        {"cuda", m.build.cuda},
        {"cuda_architectures", m.build.cuda_architectures}}},
      {"host", host_json(m.host)},
      {"gpu_software", software_json(m.gpu.software)},
      {"gpus", gpus},
      {"gpus_none_reason", m.gpu.none_reason.empty() ? json(nullptr) : json(m.gpu.none_reason)},
      {"interconnect", to_json(m.interconnect)},
  };
}

}  // namespace dlbench::sysinfo
