// Layer cases of GNMT's sequence layers (tests/ops/harness/layer_case.h): the LSTM, from zeros
// and from given states (whose gradients, and those of the last states, are probed too, and
// added in accumulate mode), sequence reversal, the bidirectional LSTM's other half, and the
// normalized Bahdanau attention over sources of different lengths.
#include <memory>

#include "engine/nn/layers/additive_attention.h"
#include "engine/nn/layers/lstm.h"
#include "engine/nn/layers/reverse_sequences.h"
#include "tests/ops/harness/layer_case.h"

namespace dlbench::op_harness {
namespace {

std::vector<LayerCase> recurrent_layers() {
  std::vector<LayerCase> out;
  backend::LstmParams lstm;
  lstm.batch = 2, lstm.steps = 3, lstm.input = 3, lstm.hidden = 4;
  for (nn::LstmStates states : {nn::LstmStates::kFromZeros, nn::LstmStates::kCarried}) {
    const bool carried = states == nn::LstmStates::kCarried;
    std::vector<Shape> inputs = {lstm.input_shape()};
    if (carried) inputs.insert(inputs.end(), {lstm.state_shape(), lstm.state_shape()});
    LayerCase c{"lstm",
                carried ? "b2_t3_i3_h4_states" : "b2_t3_i3_h4",
                [=] { return std::make_unique<nn::Lstm>(lstm, Mode::kTrain, states, 0.3f); },
                inputs,
                {},
                {},
                true};
    c.accumulate_every_input = true;  // the states' gradients are added through scratch
    out.push_back(std::move(c));
  }
  // Three sequences of four steps reversed within lengths 4, 2 and 0.
  out.push_back({"reverse_sequences",
                 "t4_b3",
                 [] {
                   return std::make_unique<nn::ReverseSequences>(backend::SequenceParams{4, 3});
                 },
                 {{12, 5}, {3}},
                 {{1, {4, 2, 0}}},
                 {1},
                 true});
  // Three queries of two samples over sources of lengths 4 and 2 (the padding's gradients are
  // probed too: they must be zero), every input's gradient added in accumulate mode.
  backend::AdditiveAttentionParams attention;
  attention.batch = 2, attention.queries = 3, attention.keys = 4, attention.width = 5;
  attention.value_width = 3;
  LayerCase a{"additive_attention",
              "b2_q3_k4_w5_v3",
              [=] { return std::make_unique<nn::AdditiveAttention>(attention); },
              {attention.query_shape(), attention.key_shape(), attention.value_shape(), {2}},
              {{3, {4, 2}}},
              {3},
              true};
  a.accumulate_every_input = true;
  out.push_back(std::move(a));
  return out;
}
DLBENCH_LAYER_CASES(recurrent_layers);

}  // namespace
}  // namespace dlbench::op_harness
