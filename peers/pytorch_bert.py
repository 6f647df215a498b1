"""BERT pretraining in PyTorch, the PyTorch way, for pytorch_worker.py: the architecture, data
and optimizer of dlbench's bert-base and bert-large (engine/models/bert_model.cc), so the two
measure the same work.

  - model: Hugging Face's BertForPreTraining layout from torch's own modules. Embeddings: word
    (30,522 ids), position (512) and segment (2) tables summed, nn.LayerNorm (eps 1e-12),
    dropout 0.1. L post-LN layers of width H: q, k and v as three nn.Linear, attention by
    F.scaled_dot_product_attention on [b, heads, s, d] under a key-padding mask from the lengths
    input, with no dropout on the attention probabilities (dlbench's attention has none), the
    output nn.Linear, dropout 0.1, residual, layer norm; then nn.Linear(H, 4H), GELU in the
    tanh form of Google's BERT (dlbench's), nn.Linear(4H, H), dropout 0.1, residual, layer norm. Pooler: the [CLS] row through
    nn.Linear and tanh. bert-base: L 12, H 768, 12 heads; bert-large: L 24, H 1024, 16 heads.
  - training: the masked-LM head (nn.Linear, GELU, layer norm, then logits against the word
    table itself, tied, plus a bias of its own) over every position, as BertForPreTraining
    computes it, and the next-sentence head (nn.Linear(H, 2)) on the pooled row; the two
    cross-entropies summed, the masked one ignoring label -100. 110,106,428 parameters
    (bert-base), 336,226,108 (bert-large). AdamW at the run's rate, weight decay 0.01 on the
    nn.Linear weights alone (not on biases, layer norms, tables or the decoder's bias: what
    dlbench decays), fused on CUDA where torch has it.
  - inference: the encoder alone (embeddings, layers, pooler: BertModel), 109,482,240 and
    335,141,888 parameters, under torch.no_grad().
  - init: BERT's, N(0, 0.02) for every nn.Linear and nn.Embedding weight, biases 0, layer norms
    1 and 0.
  - data: one synthetic batch drawn once on the host and kept on the device, of the statistics
    of dlbench's (engine/data/pretraining_batch.h), not its values; pretraining_batch() below.
  - precision: autocast as for the other models (tables, layer norms and the loss stay f32);
    fp16 with GradScaler.
"""

from collections import namedtuple

from pytorch_ids import zipf

Size = namedtuple("Size", "layers hidden heads")
# dlbench's variants (engine/models/bert_model.cc).
VARIANTS = {"bert-base": Size(layers=12, hidden=768, heads=12),
            "bert-large": Size(layers=24, hidden=1024, heads=16)}

VOCABULARY = 30522  # bert-base-uncased's, which the special ids below belong to
MAX_POSITIONS = 512
SEGMENTS = 2
NEXT_SENTENCE_CLASSES = 2  # B follows A, B is random
FEED_FORWARD_RATIO = 4
NORM_EPS = 1e-12
HIDDEN_DROPOUT = 0.1
INIT_STD = 0.02  # BERT's initializer_range
WEIGHT_DECAY = 0.01
IGNORED_LABEL = -100

# The batch's statistics, as engine/data/pretraining_batch.cc draws them.
PAD, CLS, SEP, MASK, FIRST_WORD = 0, 101, 102, 103, 999
SHORTEST = 5  # [CLS] word [SEP] word [SEP]
FULL_SHARE = 0.9
MASKED_SHARE = 0.15
MASK_TOKEN_SHARE, RANDOM_WORD_SHARE = 0.8, 0.1  # the rest of the predicted keep their word
WORD_EXPONENT = 1.0

TRAINING_INPUTS = ("ids", "segments", "positions", "lengths", "masked_labels", "next_sentence")
INFERENCE_INPUTS = TRAINING_INPUTS[:4]


def pretraining_batch(torch, batch, sequence, vocabulary, predictions, generator):
    """One batch of BERT pretraining data on the host, int64: {"ids", "segments", "positions",
    "masked_labels"} as [batch, sequence], {"lengths", "next_sentence"} as [batch].

    Each row is [CLS] A [SEP] B [SEP] then padding; 90 % fill the row, the others stop at a
    length uniform in [SHORTEST, sequence]. A gets a uniform share of the words (at least one,
    and B too); words are Zipf(1) ids from FIRST_WORD on. 15 % of a row's words (rounded, at
    least one, at most `predictions`) are predicted: labelled with their id, and replaced by
    [MASK] 80 % of the time, a uniform word 10 %, themselves 10 %."""
    shape = (batch, sequence)
    column = torch.arange(sequence).repeat(batch, 1)
    full = torch.rand(batch, generator=generator) < FULL_SHARE
    short = torch.randint(SHORTEST, sequence + 1, (batch,), generator=generator)
    lengths = torch.where(full, torch.full_like(short, sequence), short)
    words = lengths - 3  # all but [CLS] and the two [SEP]s
    a_words = 1 + (torch.rand(batch, generator=generator, dtype=torch.float64)
                   * (words - 1)).long()
    first_sep = (a_words + 1).unsqueeze(1)
    last_sep = (lengths - 1).unsqueeze(1)
    is_word = (column >= 1) & (column < last_sep) & (column != first_sep)

    drawn = zipf(torch, FIRST_WORD, vocabulary, WORD_EXPONENT, batch * sequence, "cpu",
                 generator).view(shape)
    ids = torch.where(is_word, drawn, torch.full_like(drawn, PAD))
    ids[:, 0] = CLS
    ids[(column == first_sep) | (column == last_sep)] = SEP
    segments = ((column > first_sep) & (column < lengths.unsqueeze(1))).long()

    # The predicted words: each row's `predicted` lowest of random scores over its words.
    predicted = (words.double() * MASKED_SHARE + 0.5).floor().long().clamp(1, predictions)
    scores = torch.rand(shape, generator=generator, dtype=torch.float64).masked_fill(~is_word, 2.0)
    rank = scores.argsort(dim=1).argsort(dim=1)
    chosen = rank < predicted.unsqueeze(1)
    masked_labels = torch.where(chosen, ids, torch.full_like(ids, IGNORED_LABEL))
    u = torch.rand(shape, generator=generator)
    random_words = torch.randint(FIRST_WORD, vocabulary, shape, generator=generator)
    ids = torch.where(chosen & (u < MASK_TOKEN_SHARE), torch.full_like(ids, MASK), ids)
    replaced = chosen & (u >= MASK_TOKEN_SHARE) & (u < MASK_TOKEN_SHARE + RANDOM_WORD_SHARE)
    ids = torch.where(replaced, random_words, ids)

    return {"ids": ids, "segments": segments, "positions": column, "lengths": lengths,
            "masked_labels": masked_labels,
            "next_sentence": torch.randint(0, 2, (batch,), generator=generator)}


class Bert:
    """Builds the torch modules lazily so this file imports without torch."""

    @staticmethod
    def build(torch, size, pretraining):
        """BertModel (inputs [b, s] -> sequence [b, s, H] and pooled [b, H]), or with
        `pretraining` BertForPreTraining (-> masked-LM logits [b * s, V], next-sentence [b, 2])."""
        nn = torch.nn
        F = nn.functional
        hidden, heads = size.hidden, size.heads
        head_dim = hidden // heads

        class Embeddings(nn.Module):
            def __init__(self):
                super().__init__()
                self.word = nn.Embedding(VOCABULARY, hidden)
                self.position = nn.Embedding(MAX_POSITIONS, hidden)
                self.segment = nn.Embedding(SEGMENTS, hidden)
                self.norm = nn.LayerNorm(hidden, eps=NORM_EPS)
                self.dropout = nn.Dropout(HIDDEN_DROPOUT)

            def forward(self, ids, segments, positions):
                x = self.word(ids) + self.position(positions) + self.segment(segments)
                return self.dropout(self.norm(x))

        class Layer(nn.Module):
            def __init__(self):
                super().__init__()
                self.query = nn.Linear(hidden, hidden)
                self.key = nn.Linear(hidden, hidden)
                self.value = nn.Linear(hidden, hidden)
                self.attention_output = nn.Linear(hidden, hidden)
                self.attention_norm = nn.LayerNorm(hidden, eps=NORM_EPS)
                self.intermediate = nn.Linear(hidden, FEED_FORWARD_RATIO * hidden)
                self.gelu = nn.GELU(approximate="tanh")
                self.output = nn.Linear(FEED_FORWARD_RATIO * hidden, hidden)
                self.output_norm = nn.LayerNorm(hidden, eps=NORM_EPS)
                self.dropout = nn.Dropout(HIDDEN_DROPOUT)

            def forward(self, x, mask):
                """x [b, s, H], mask [b, 1, 1, s] (True: the key is attended to)."""
                b, s, _ = x.shape

                def split_heads(t):  # [b, s, H] -> [b, heads, s, d]
                    return t.view(b, s, heads, head_dim).transpose(1, 2)

                context = F.scaled_dot_product_attention(
                    split_heads(self.query(x)), split_heads(self.key(x)),
                    split_heads(self.value(x)), attn_mask=mask, dropout_p=0.0)
                context = context.transpose(1, 2).reshape(b, s, hidden)
                x = self.attention_norm(x + self.dropout(self.attention_output(context)))
                y = self.output(self.gelu(self.intermediate(x)))
                return self.output_norm(x + self.dropout(y))

        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.embeddings = Embeddings()
                self.layers = nn.ModuleList(Layer() for _ in range(size.layers))
                self.pooler = nn.Linear(hidden, hidden)

            def forward(self, ids, segments, positions, lengths):
                keys = torch.arange(ids.shape[1], device=ids.device)
                mask = (keys < lengths.unsqueeze(1)).view(ids.shape[0], 1, 1, ids.shape[1])
                x = self.embeddings(ids, segments, positions)
                for layer in self.layers:
                    x = layer(x, mask)
                return x, torch.tanh(self.pooler(x[:, 0]))

        class Pretraining(nn.Module):
            def __init__(self):
                super().__init__()
                self.bert = Encoder()
                self.transform = nn.Linear(hidden, hidden)
                self.gelu = nn.GELU(approximate="tanh")
                self.transform_norm = nn.LayerNorm(hidden, eps=NORM_EPS)
                self.decoder_bias = nn.Parameter(torch.zeros(VOCABULARY))
                self.next_sentence = nn.Linear(hidden, NEXT_SENTENCE_CLASSES)

            def forward(self, ids, segments, positions, lengths):
                x, pooled = self.bert(ids, segments, positions, lengths)
                t = self.transform_norm(self.gelu(self.transform(x)))
                # The decoder is the word table itself (tied), over every position.
                logits = F.linear(t, self.bert.embeddings.word.weight, self.decoder_bias)
                return logits.view(-1, VOCABULARY), self.next_sentence(pooled)

        def initialize(m):
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=INIT_STD)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)
            if isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

        module = Pretraining() if pretraining else Encoder()
        module.apply(initialize)
        return module


class Workload:
    """What pytorch_worker.py's step needs: the module, its inputs, the loss, the optimizers."""

    def __init__(self, torch, channel, args, device, input_named):
        self.torch = torch
        self.train = args.mode == "train"
        self.device = device
        specs = {name: input_named(channel, args, name)
                 for name in (TRAINING_INPUTS if self.train else INFERENCE_INPUTS)}
        for name, spec in specs.items():
            d = spec["distribution"]
            if d.get("kind") != "pretraining" or d.get("vocabulary") != VOCABULARY:
                channel.fail("usage", f"{args.model}: input '{name}' must be BERT pretraining "
                                      f"data over {VOCABULARY} ids, not {d}")
        d = specs["ids"]["distribution"]
        sequence, predictions = int(d["sequence"]), int(d["predictions"])
        if not SHORTEST <= sequence <= MAX_POSITIONS or predictions < 1:
            channel.fail("usage", f"{args.model}: sequences of {SHORTEST} to {MAX_POSITIONS} "
                                  f"positions with at least one prediction, not {sequence} "
                                  f"and {predictions}")
        if list(specs["ids"]["shape"]) != [args.batch * sequence]:
            channel.fail("usage", f"{args.model}: ids of shape {specs['ids']['shape']}, not "
                                  f"[{args.batch} * {sequence}]")

        self.module = Bert.build(torch, VARIANTS[args.model], self.train)
        generator = torch.Generator().manual_seed(args.seed)
        drawn = pretraining_batch(torch, args.batch, sequence, VOCABULARY, predictions, generator)
        self.inputs = [drawn[name].to(device) for name in INFERENCE_INPUTS]
        self.masked_labels = drawn["masked_labels"].view(-1).to(device)
        self.next_sentence = drawn["next_sentence"].to(device)
        self.channels_last = False

    def optimizers(self, args):
        torch = self.torch
        linear_weights = [m.weight for m in self.module.modules()
                          if isinstance(m, torch.nn.Linear)]
        decayed = {id(p) for p in linear_weights}
        rest = [p for p in self.module.parameters() if id(p) not in decayed]
        groups = [{"params": linear_weights, "weight_decay": WEIGHT_DECAY},
                  {"params": rest, "weight_decay": 0.0}]
        if self.device.type == "cuda":
            try:
                return [torch.optim.AdamW(groups, lr=args.lr, fused=True)]
            except TypeError:  # a torch without fused AdamW
                pass
        return [torch.optim.AdamW(groups, lr=args.lr)]

    def loss(self, model):
        """One forward (and the loss in training)."""
        F = self.torch.nn.functional
        if not self.train:
            model(*self.inputs)
            return None
        masked_lm, next_sentence = model(*self.inputs)
        return (F.cross_entropy(masked_lm.float(), self.masked_labels, ignore_index=IGNORED_LABEL)
                + F.cross_entropy(next_sentence.float(), self.next_sentence))
