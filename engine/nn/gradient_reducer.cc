#include "engine/nn/gradient_reducer.h"

namespace dlbench::nn {

GradientReducer::GradientReducer(dist::Communicator& communicator, const ParameterStore& store,
                                 std::size_t bucket_bytes)
    : communicator_(communicator),
      store_(store),
      buckets_(plan_gradient_buckets(store.gradient_slots(), bucket_bytes)) {}

void GradientReducer::begin_step(bool overlap) {
  next_bucket_ = 0;
  overlap_ = overlap;
}

void GradientReducer::node_done(std::size_t node) {
  if (overlap_) start_ready(node);
}

void GradientReducer::finish(StepObserver* observer) {
  start_ready(0);  // whatever is left: everything, without overlap
  // A table row is touched when any replica touched it: the masks are summed (and read as > 0)
  // like the gradients, after them.
  for (const SparseTable& t : store_.sparse_tables()) communicator_.allreduce_sum(t.touched);
  // What the device waits here is the communication that backward did not hide.
  ObservedPart part(observer, StepPart::kGradientSync, 0);
  communicator_.wait();
}

void GradientReducer::start_ready(std::size_t node) {
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].ready_after >= node)
    communicator_.allreduce_sum(store_.bucket_view(buckets_[next_bucket_++]));
}

}  // namespace dlbench::nn
