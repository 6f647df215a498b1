// The two graphs a sequence-to-sequence model decodes with (GreedyDecoder runs them), meeting by
// their inputs' names:
//   encoder  inputs: the batch's, as a data source fills them (the sources and their lengths).
//            Marked outputs: what the step graph reads of the sources, "memory" in order.
//   step     one output position. Inputs: "tokens" i32 [batch], the tokens chosen last ([BOS]
//            at the first position); an input named as an encoder input gets its values (the
//            source lengths); "memory.<i>" gets the encoder's output i; "state.<i>" gets the
//            step's own output 1 + i of the position before (zeros at the first).
//            Marked outputs: the scores [batch, vocabulary] first, then each state's next value.
#pragma once

#include <cstdint>

#include "engine/data/translation_batch.h"
#include "engine/nn/graph.h"

namespace dlbench::nn {

struct DecodingGraphs {
  Graph encoder, step;
  std::int64_t max_length = 1;  // positions a sentence may take, its [EOS] included
  data::SentenceIds ids = {};
};

}  // namespace dlbench::nn
