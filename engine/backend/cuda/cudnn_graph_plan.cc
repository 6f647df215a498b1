// The second half of cudnn_graph.h: operation graph, heuristics, engines, execution plan and
// execution. A refusal by cuDNN (no pattern, no engine) comes back as a value; everything else
// that fails throws.
#include "engine/backend/cuda/cudnn_graph.h"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include "engine/backend/cuda/cuda_check.h"
#include "engine/core/error.h"

namespace dlbench::backend::cuda {
namespace {

bool is_not_supported(cudnnStatus_t status) {
  return CUDNN_STATUS_CATEGORY(status) == CUDNN_STATUS_NOT_SUPPORTED;
}

// Reads `requested` elements of an attribute into `values`; returns how many cuDNN has.
std::int64_t get_attribute(const BackendDescriptor& descriptor,
                           cudnnBackendAttributeName_t attribute, cudnnBackendAttributeType_t type,
                           std::int64_t requested, void* values) {
  std::int64_t count = 0;
  const cudnnStatus_t status =
      cudnnBackendGetAttribute(descriptor.get(), attribute, type, requested, &count, values);
  if (status != CUDNN_STATUS_SUCCESS)
    throw_graph_error("reading attribute " + std::to_string(attribute) + " of the " +
                          descriptor.name() + " descriptor",
                      status);
  return count;
}

// Mode A ranks engines by a trained model and knows the runtime-fusion engines; fallback adds
// the engines that support the most graphs, slower, for when none of A's finalize.
constexpr std::array<cudnnBackendHeurMode_t, 2> kPlanHeuristics = {CUDNN_HEUR_MODE_A,
                                                                   CUDNN_HEUR_MODE_FALLBACK};

}  // namespace

// --- graph, heuristics, plan --------------------------------------------------------------

Refusable make_operation_graph(cudnnHandle_t handle,
                               std::span<const BackendDescriptor* const> operations) {
  BackendDescriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
  // The handle attribute is deprecated from cuDNN 9.x (heuristics can take a device-properties
  // descriptor instead), but still read, and earlier 9.x require it.
  graph.set_handle(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, handle)
      .set_descriptors(CUDNN_ATTR_OPERATIONGRAPH_OPS, operations);
  const cudnnStatus_t status = graph.try_finalize();
  if (status == CUDNN_STATUS_SUCCESS) return {std::move(graph), status, {}};
  if (!is_not_supported(status)) throw_graph_error("finalizing the operation graph", status);
  return {std::nullopt, status, status_name(status)};
}

EngineConfigs engine_configs(const BackendDescriptor& graph, cudnnBackendHeurMode_t mode) {
  BackendDescriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR,
                               std::string("engine heuristics ") + heuristic_name(mode));
  heuristics.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  const cudnnStatus_t status = heuristics.try_finalize();
  if (is_out_of_memory(status)) throw_graph_error("finalizing " + heuristics.name(), status);
  if (status != CUDNN_STATUS_SUCCESS) return {{}, status_name(status)};

  // cuDNN fills configurations the caller created: ask for the count, create, then read.
  const std::int64_t count = get_attribute(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, nullptr);
  EngineConfigs result;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (std::int64_t i = 0; i < count; ++i) {
    result.configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR,
                                "engine config " + std::to_string(i) + " of " + heuristics.name());
    raw.push_back(result.configs.back().get());
  }
  if (count == 0) return result;
  const std::int64_t filled = get_attribute(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, count, raw.data());
  result.configs.erase(result.configs.begin() + std::min(filled, count), result.configs.end());
  return result;
}

const char* heuristic_name(cudnnBackendHeurMode_t mode) {
  switch (mode) {
    case CUDNN_HEUR_MODE_INSTANT:
      return "instant";
    case CUDNN_HEUR_MODE_B:
      return "B";
    case CUDNN_HEUR_MODE_FALLBACK:
      return "fallback";
    case CUDNN_HEUR_MODE_A:
      return "A";
    default:
      return "unknown";
  }
}

bool EngineInfo::has(cudnnBackendNumericalNote_t note) const {
  for (cudnnBackendNumericalNote_t n : numerical_notes)
    if (n == note) return true;
  return false;
}

EngineInfo engine_info(const BackendDescriptor& engine_config) {
  BackendDescriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine of " + engine_config.name());
  cudnnBackendDescriptor_t raw = engine.get();
  get_attribute(engine_config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
  EngineInfo info;
  get_attribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &info.global_index);
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
  const std::int64_t count = get_attribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                           CUDNN_TYPE_NUMERICAL_NOTE, notes.size(), notes.data());
  const auto kept = std::min<std::size_t>(static_cast<std::size_t>(count), notes.size());
  info.numerical_notes.assign(notes.begin(), notes.begin() + kept);
  return info;
}

std::string to_string(std::span<const cudnnBackendNumericalNote_t> notes) {
  static constexpr std::array<const char*, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> kNames = {
      "tensor_core",
      "down_convert_inputs",
      "reduced_precision_reduction",
      "fft",
      "nondeterministic",
      "winograd",
      "winograd_4x4",
      "winograd_6x6",
      "winograd_13x13",
      "strict_nan_prop"};
  std::string text;
  for (cudnnBackendNumericalNote_t note : notes) {
    if (!text.empty()) text += ",";
    text += note < kNames.size() ? kNames[note] : std::to_string(note);
  }
  return text.empty() ? "none" : text;
}

Refusable make_execution_plan(cudnnHandle_t handle, const BackendDescriptor& engine_config) {
  BackendDescriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
                         "execution plan of " + engine_config.name());
  // Deprecated like the graph's handle attribute, and required by earlier 9.x in the same way.
  plan.set_handle(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, handle)
      .set_descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, engine_config);
  const cudnnStatus_t status = plan.try_finalize();
  if (status == CUDNN_STATUS_SUCCESS) return {std::move(plan), status, {}};
  if (is_out_of_memory(status)) throw_graph_error("finalizing the " + plan.name(), status);
  return {std::nullopt, status, status_name(status)};
}

std::int64_t plan_workspace_bytes(const BackendDescriptor& plan) {
  std::int64_t bytes = 0;
  get_attribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &bytes);
  return bytes;
}

void execute(cudnnHandle_t handle, const BackendDescriptor& plan,
             std::span<const std::int64_t> uids, std::span<void* const> pointers, void* workspace) {
  DLBENCH_CHECK(uids.size() == pointers.size(), "one device pointer per unique id");
  BackendDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");
  pack.set_int64s(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, uids)
      .set_pointers(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, pointers)
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace)
      .finalize();
  const cudnnStatus_t status = cudnnBackendExecute(handle, plan.get(), pack.get());
  if (status != CUDNN_STATUS_SUCCESS) throw_graph_error("executing the " + plan.name(), status);
}

bool uses_reduced_precision(const EngineInfo& info) {
  return info.has(CUDNN_NUMERICAL_NOTE_TENSOR_CORE) ||
         info.has(CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) ||
         info.has(CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION);
}

// --- choosing a plan -----------------------------------------------------------------------

std::string ChosenEngine::describe() const {
  return std::string("engine ") + std::to_string(engine_global_index) + " (heuristic " + heuristic +
         " config " + std::to_string(config_index) + ", notes " + numerical_notes + ")";
}

ChosenPlan choose_plan(cudnnHandle_t handle, const BackendDescriptor& graph,
                       std::size_t workspace_limit, bool strict) {
  ChosenPlan out;
  std::string proposed;
  int skipped_for_strict = 0;
  int over_workspace_limit = 0;
  std::map<std::string, int> refusals;  // status name -> how many plans failed with it
  std::string last_refusal;
  for (cudnnBackendHeurMode_t mode : kPlanHeuristics) {
    auto [configs, heuristic_refusal] = engine_configs(graph, mode);
    proposed += std::string(proposed.empty() ? "" : ", ") + heuristic_name(mode) + " " +
                std::to_string(configs.size());
    if (!heuristic_refusal.empty()) proposed += " (" + heuristic_refusal + ")";
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const EngineInfo info = engine_info(configs[i]);
      if (strict && uses_reduced_precision(info)) {
        ++skipped_for_strict;
        continue;
      }
      Refusable plan = make_execution_plan(handle, configs[i]);
      if (!plan.descriptor) {
        ++refusals[cudnnGetErrorString(plan.status)];
        last_refusal = "engine " + std::to_string(info.global_index) + ": " + plan.refusal;
        continue;
      }
      const std::int64_t bytes = plan_workspace_bytes(*plan.descriptor);
      DLBENCH_CHECK(bytes >= 0, "cuDNN reported a negative workspace size");
      if (static_cast<std::uint64_t>(bytes) > workspace_limit) {
        ++over_workspace_limit;
        continue;
      }
      out.workspace_bytes = static_cast<std::size_t>(bytes);
      out.chosen = {heuristic_name(mode), static_cast<int>(i), info.global_index,
                    to_string(info.numerical_notes)};
      out.config.emplace(std::move(configs[i]));
      out.plan = std::move(plan.descriptor);
      return out;
    }
  }
  std::string reason = "no engine runs this graph (configs proposed: " + proposed;
  if (skipped_for_strict > 0)
    reason += "; " + std::to_string(skipped_for_strict) +
              " skipped as TF32 or reduced precision under strict f32";
  if (over_workspace_limit > 0)
    reason += "; " + std::to_string(over_workspace_limit) + " over the workspace limit of " +
              std::to_string(workspace_limit) + " bytes";
  for (const auto& [status, count] : refusals)
    reason += "; " + std::to_string(count) + " refused with " + status;
  if (!last_refusal.empty()) reason += "; last: " + last_refusal;
  out.refusal = reason + ")";
  return out;
}

}  // namespace dlbench::backend::cuda
