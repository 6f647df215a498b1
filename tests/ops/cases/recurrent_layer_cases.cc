// Layer cases of the recurrent layers (tests/ops/harness/layer_case.h): the LSTM, from zeros
// and from given states (whose gradients, and those of the last states, are probed too, and
// added in accumulate mode), and sequence reversal, the bidirectional LSTM's other half.
#include <memory>

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
  return out;
}
DLBENCH_LAYER_CASES(recurrent_layers);

}  // namespace
}  // namespace dlbench::op_harness
