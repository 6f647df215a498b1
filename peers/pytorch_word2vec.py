"""Word2Vec (skip-gram with negative sampling) in PyTorch, the PyTorch way, for
pytorch_worker.py: the model, data and optimizer of dlbench's word2vec
(engine/models/word2vec_model.cc), so the two measure the same work.

  - model: an input and an output table, nn.Embedding(sparse=True), of the vocabulary in
    --inputs (71,290 words at text8's size) by dimension D: 128 (18,250,240 parameters), 300 for
    word2vec-d300. Input vectors N(0, (0.5 / D) / sqrt(3)) (the spread of the reference's
    uniform +-0.5/D), output vectors 0.
  - training: the B (word, context) pairs of --inputs are drawn once (Zipf, as word
    frequencies); each step draws 5 negatives per pair (64 for word2vec-neg64) on the device
    from the unigram^0.75 distribution of the same frequencies (torch.multinomial, with
    replacement), scores each word against its context and negatives (a batched dot product),
    binary cross-entropy with logits (1 for the context, 0 for the negatives), SparseAdam on
    both tables at the run's rate.
  - inference: scores the B pairs of --inputs under torch.no_grad().
  - precision: autocast as for the other models (the tables stay f32; the dot products run in
    the autocast dtype); fp16 with GradScaler.
"""

from pytorch_ids import draw

NEGATIVE_POWER = 0.75  # the reference's unigram^0.75
# dlbench's variants (engine/models/word2vec_model.cc): (dimension, negatives per pair).
VARIANTS = {"word2vec": (128, 5), "word2vec-d300": (300, 5), "word2vec-neg64": (128, 64)}


class SkipGram:
    """Builds the torch module lazily so this file imports without torch."""

    @staticmethod
    def build(torch, vocabulary, dimension):
        nn = torch.nn

        class Module(nn.Module):
            def __init__(self):
                super().__init__()
                self.input = nn.Embedding(vocabulary, dimension, sparse=True)
                self.output = nn.Embedding(vocabulary, dimension, sparse=True)
                nn.init.normal_(self.input.weight, std=0.5 / dimension / 3 ** 0.5)
                nn.init.zeros_(self.output.weight)

            def forward(self, words, candidates):
                """Each word's logit against each of its candidates: [B] x [B, m] -> [B, m]."""
                vectors = self.input(words).unsqueeze(2)
                return torch.bmm(self.output(candidates), vectors).squeeze(2)

        return Module()


class Workload:
    """What pytorch_worker.py's step needs: the module, its inputs, the loss, the optimizers."""

    def __init__(self, torch, channel, args, device, input_named):
        words_spec = input_named(channel, args, "words")
        contexts_spec = input_named(channel, args, "contexts")
        self.torch = torch
        vocabulary = contexts_spec["distribution"]["high"]
        dimension, self.negatives = VARIANTS[args.model]
        self.module = SkipGram.build(torch, vocabulary, dimension)
        self.train = args.mode == "train"
        generator = torch.Generator().manual_seed(args.seed)
        self.words = draw(torch, words_spec, device, generator)
        self.contexts = draw(torch, contexts_spec, device, generator).unsqueeze(1)
        pairs = self.words.shape[0]
        # Rank r's frequency under the inputs' Zipf law, to the reference's power.
        exponent = contexts_spec["distribution"].get("exponent", 0.0)
        ranks = torch.arange(1, vocabulary + 1, dtype=torch.float32, device=device)
        self.negative_weights = ranks.pow(-exponent * NEGATIVE_POWER)
        self.labels = torch.cat([torch.ones(pairs, 1), torch.zeros(pairs, self.negatives)],
                                dim=1).to(device)
        self.channels_last = False

    def optimizers(self, args):
        return [self.torch.optim.SparseAdam(list(self.module.parameters()), lr=args.lr)]

    def loss(self, model):
        """One forward (and the loss in training): negatives drawn afresh on the device."""
        torch = self.torch
        if not self.train:
            model(self.words, self.contexts)
            return None
        pairs = self.words.shape[0]
        negatives = torch.multinomial(self.negative_weights, pairs * self.negatives,
                                      replacement=True)
        candidates = torch.cat([self.contexts, negatives.view(pairs, self.negatives)], dim=1)
        logits = model(self.words, candidates)
        return torch.nn.functional.binary_cross_entropy_with_logits(logits.float(), self.labels)
