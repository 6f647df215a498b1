// The door checks of the ops the embedding models (NCF, Word2Vec) brought: embedding lookups
// and their gradients, negative and candidate sampling on the device, and row-against-candidate
// dot products. The backends implement the *_impl hooks.
#include <limits>

#include "engine/backend/backend.h"
#include "engine/backend/door_checks.h"

namespace dlbench::backend {

void Backend::embedding_forward(const Tensor& table, const Tensor& ids, const Tensor& y) {
  const char* op = "embedding_forward";
  DLBENCH_CHECK(table.defined() && table.rank() == 2, "embedding_forward: table must be [V, D]");
  DLBENCH_CHECK(ids.defined() && ids.rank() == 1, "embedding_forward: ids must be [N]");
  check(ids, {ids.dim(0)}, DType::kI32, op, "ids");
  check(y, {ids.dim(0), table.dim(1)}, table.dtype(), op, "y");
  embedding_forward_impl(table, ids, y);
}

void Backend::embedding_backward(const Tensor& dy, const Tensor& ids, const Tensor& workspace,
                                 const Tensor& dtable, const Tensor& touched, GradMode mode) {
  const char* op = "embedding_backward";
  DLBENCH_CHECK(dtable.defined() && dtable.rank() == 2,
                "embedding_backward: dtable must be [V, D]");
  DLBENCH_CHECK(ids.defined() && ids.rank() == 1, "embedding_backward: ids must be [N]");
  check(ids, {ids.dim(0)}, DType::kI32, op, "ids");
  check(dy, {ids.dim(0), dtable.dim(1)}, dtable.dtype(), op, "dy");
  check(touched, {dtable.dim(0)}, DType::kI32, op, "touched");
  const std::size_t need =
      embedding_backward_workspace_bytes(ids.dim(0), dtable.dim(0), dtable.dim(1));
  DLBENCH_CHECK(need == 0 || (workspace.defined() && workspace.bytes() >= need),
                "embedding_backward workspace too small");
  embedding_backward_impl(dy, ids, workspace, dtable, touched, mode);
}

void Backend::sample_negatives(const NegativeSamplingParams& p, const Tensor& step,
                               const Tensor& users_pos, const Tensor& items_pos,
                               const Tensor& users, const Tensor& items, const Tensor& labels) {
  const char* op = "sample_negatives";
  DLBENCH_CHECK(users_pos.defined() && users_pos.rank() == 1 && users_pos.dim(0) > 0,
                "sample_negatives: users_pos must be [P], P > 0");
  DLBENCH_CHECK(users.defined() && users.rank() == 1, "sample_negatives: users must be [B]");
  const std::int64_t positives = users_pos.dim(0), batch = users.dim(0);
  DLBENCH_CHECK(positives <= batch, "sample_negatives: more positives than the batch holds");
  DLBENCH_CHECK(p.items > 0 && p.items <= std::numeric_limits<std::int32_t>::max(),
                "sample_negatives: the item range must be in [1, 2^31)");
  check(step, {1}, DType::kI32, op, "step");
  check(users_pos, {positives}, DType::kI32, op, "users_pos");
  check(items_pos, {positives}, DType::kI32, op, "items_pos");
  check(users, {batch}, DType::kI32, op, "users");
  check(items, {batch}, DType::kI32, op, "items");
  check(labels, {batch, 1}, labels.dtype(), op, "labels");
  sample_negatives_impl(p, step, users_pos, items_pos, users, items, labels);
}

namespace {
// a [n, d], c [n * m, d], y or dy [n, m] of one dtype; returns m.
std::int64_t check_row_dots(const Tensor& a, const Tensor& c, const Tensor& y, const char* op,
                            const char* y_name) {
  DLBENCH_CHECK(a.defined() && a.rank() == 2, std::string(op) + ": a must be [n, d]");
  DLBENCH_CHECK(y.defined() && y.rank() == 2 && y.dim(0) == a.dim(0),
                std::string(op) + ": " + y_name + " must be [n, m]");
  const std::int64_t m = y.dim(1);
  check(c, {a.dim(0) * m, a.dim(1)}, a.dtype(), op, "c");
  check(y, {a.dim(0), m}, a.dtype(), op, y_name);
  return m;
}
}  // namespace

void Backend::row_dots_forward(const Tensor& a, const Tensor& c, const Tensor& y) {
  check_row_dots(a, c, y, "row_dots_forward", "y");
  row_dots_forward_impl(a, c, y);
}

void Backend::row_dots_backward(const Tensor& a, const Tensor& c, const Tensor& dy,
                                const Tensor& da, GradMode da_mode, const Tensor& dc,
                                GradMode dc_mode) {
  const char* op = "row_dots_backward";
  check_row_dots(a, c, dy, op, "dy");
  if (da.defined()) check_same(a, da, op, "da");
  if (dc.defined()) check_same(c, dc, op, "dc");
  row_dots_backward_impl(a, c, dy, da, da_mode, dc, dc_mode);
}

void Backend::sample_candidates(const CandidateSamplingParams& p, const Tensor& step,
                                const Tensor& contexts, const Tensor& cdf, const Tensor& ids,
                                const Tensor& labels) {
  const char* op = "sample_candidates";
  DLBENCH_CHECK(contexts.defined() && contexts.rank() == 1,
                "sample_candidates: contexts must be [P]");
  DLBENCH_CHECK(
      ids.defined() && ids.rank() == 2 && ids.dim(0) == contexts.dim(0) && ids.dim(1) >= 1,
      "sample_candidates: ids must be [P, m], m >= 1");
  DLBENCH_CHECK(cdf.defined() && cdf.rank() == 1 && cdf.dim(0) > 0,
                "sample_candidates: cdf must be [V], V > 0");
  check(step, {1}, DType::kI32, op, "step");
  check(contexts, {contexts.dim(0)}, DType::kI32, op, "contexts");
  check(cdf, {cdf.dim(0)}, kF32, op, "cdf");
  check(ids, ids.shape(), DType::kI32, op, "ids");
  check(labels, ids.shape(), labels.dtype(), op, "labels");
  sample_candidates_impl(p, step, contexts, cdf, ids, labels);
}

}  // namespace dlbench::backend
