// ParameterStore: a graph's parameters in flat buffers, and the views layers, optimizers and
// the all-reduce read them through.
//
// The graph's parameters are ordered by group ([decayed | not decayed | sparse rows | kept in
// f32], see ParamGroup), then by declaration on the graph, so each group is one contiguous range:
// f32 master weights and f32 gradients over all of them. In fp16/bf16 the compute groups are
// also kept as a compute-dtype copy (cast from the masters before each forward) with
// compute-dtype gradients (cast to f32 after backward), so each cast and each fused update runs
// once over a range. Weights are initialized from the seed, the same on every device and rank.
//
// A sparse-rows table ([rows, columns], an embedding) also has, in training, an i32 [rows]
// touched mask that its users' backward writes beside the gradient, for lazy optimizers. The
// gradient itself stays dense (zero-filled outside the touched rows): data parallelism all-reduces
// it like any other, which costs O(rows x columns) per step however few rows were read, and
// all-reduces the masks too (summed: a row is touched when any replica touched it). Measure
// before making either sparse.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/memory.h"
#include "engine/dist/communicator.h"
#include "engine/nn/gradient_buckets.h"
#include "engine/nn/graph.h"

namespace dlbench::nn {

// Where one parameter tensor lives in the flat f32 buffers.
struct ParameterSlice {
  std::string name;  // "layer1.0.conv1.weight"
  std::int64_t offset = 0;
  std::int64_t count = 0;
  ParamGroup group = ParamGroup::kDecayed;
};

// Elements [begin, end) of the flat buffers.
struct ParamRange {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
};

// One ParamGroup::kSparseRows table: where it lives in the flat buffers, its shape and its
// touched-row mask (i32 [rows]; training only).
struct SparseTable {
  ParamRange range;
  std::int64_t rows = 0, columns = 0;
  Tensor touched;
};

class ParameterStore {
 public:
  // Gradients are allocated (and zeroed) in training only.
  ParameterStore(const Graph& graph, backend::Backend& backend, Mode mode, DType compute,
                 std::uint64_t seed);

  // One node's parameters in the order its layer reads them: the compute-dtype copy or the f32
  // masters (a shared parameter is the same tensor for each user). grads() are undefined
  // tensors in inference.
  const std::vector<Tensor>& weights(std::size_t node) const { return nodes_.at(node).weights; }
  const std::vector<Tensor>& grads(std::size_t node) const { return nodes_.at(node).grads; }
  // Per parameter of the node: a sparse table's touched mask, undefined for the others (and in
  // inference).
  const std::vector<Tensor>& rows(std::size_t node) const { return nodes_.at(node).rows; }
  // The kSparseRows tables in the store's order.
  const std::vector<SparseTable>& sparse_tables() const { return tables_; }

  ParamRange range(ParamGroup group) const;
  // f32 views of the masters and their gradients, for optimizers.
  Tensor master_weights(ParamRange r) const { return flat(weights_, DType::kF32, r); }
  Tensor master_grads(ParamRange r) const { return flat(grads_, DType::kF32, r); }
  Tensor flat_weights() const { return master_weights({0, count_}); }
  Tensor flat_grads() const { return master_grads({0, count_}); }

  // Data parallel: the slots to cut buckets from, and a bucket's gradients in the dtype the
  // backward wrote them in (compute dtype, or f32 for kKeptF32).
  std::vector<GradientSlot> gradient_slots() const;
  Tensor bucket_view(const GradientBucket& bucket) const;
  // Copies root's weights to every rank (then refresh_compute_weights()).
  void broadcast(dist::Communicator& communicator, int root);

  // Mixed precision (no-ops in f32): masters -> compute copy, compute grads -> f32 grads.
  void refresh_compute_weights();
  void gather_compute_grads();

  DType compute_dtype() const { return dtype_; }
  std::int64_t count() const { return count_; }
  const std::vector<ParameterSlice>& slices() const { return slices_; }
  std::size_t weight_bytes() const { return weights_.bytes() + compute_weights_.bytes(); }
  std::size_t grad_bytes() const {
    return grads_.bytes() + compute_grads_.bytes() + touched_.bytes();
  }

 private:
  struct Slot {
    ParamId param;
    ParamDecl decl;
    std::size_t first_user = 0;  // its gradient is final after this node's backward
    std::int64_t offset = 0;
  };
  struct NodeParams {
    std::vector<Tensor> weights, grads, rows;
  };
  Tensor flat(const Buffer& b, DType dtype, ParamRange r) const;
  bool mixed() const { return dtype_ != DType::kF32; }
  ParamRange compute_range() const { return {0, range(ParamGroup::kSparseRows).end}; }
  void allocate_touched_masks(const Graph& graph, std::vector<Tensor>& rows);

  backend::Backend& backend_;
  DType dtype_;
  std::vector<Slot> slots_;  // group, then declaration order
  std::vector<NodeParams> nodes_;
  std::vector<ParameterSlice> slices_;  // declaration order
  std::vector<SparseTable> tables_;
  std::int64_t group_end_[kParamGroups] = {};
  std::int64_t count_ = 0;
  Buffer weights_, grads_;
  Buffer compute_weights_, compute_grads_;  // fp16/bf16 only
  Buffer touched_;                          // every table's mask; training with tables only
};

}  // namespace dlbench::nn
