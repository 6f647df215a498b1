// GradientReducer: the data-parallel all-reduce of one step, bucket by bucket (see
// gradient_buckets.h), started as backward completes each bucket so communication overlaps the
// rest of backward.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/dist/communicator.h"
#include "engine/nn/gradient_buckets.h"
#include "engine/nn/parameter_store.h"
#include "engine/nn/step_observer.h"

namespace dlbench::nn {

class GradientReducer {
 public:
  GradientReducer(dist::Communicator& communicator, const ParameterStore& store,
                  std::size_t bucket_bytes);

  // overlap false: nothing starts before finish() (the first step: see Trainer).
  void begin_step(bool overlap);
  // After node's backward: starts every bucket that node completed.
  void node_done(std::size_t node);
  // Starts what is left, then the sparse tables' touched masks, and waits for the device's side
  // of every all-reduce.
  void finish(StepObserver* observer);

  int replicas() const { return communicator_.size(); }
  const std::vector<GradientBucket>& buckets() const { return buckets_; }

 private:
  void start_ready(std::size_t node);

  dist::Communicator& communicator_;
  const ParameterStore& store_;
  std::vector<GradientBucket> buckets_;
  std::size_t next_bucket_ = 0;
  bool overlap_ = false;
};

}  // namespace dlbench::nn
