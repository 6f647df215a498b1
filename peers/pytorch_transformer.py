"""Transformer-big translation in PyTorch, the PyTorch way, for pytorch_worker.py: the
architecture, data and optimizer of dlbench's transformer (engine/models/transformer_model.cc),
so the two measure the same work.

  - model: fairseq's transformer_vaswani_wmt_en_de_big (post-LN) from torch's own modules.
    One nn.Embedding table of 32,000 ids by 1024 serves the source embedding, the target
    embedding and the output projection (tied, no output bias). Embedding: sqrt(1024) x table
    row + the sinusoidal encoding of the row's position (0 to S - 1, padding included; sin in the
    first half of the columns, cos in the second, tensor2tensor's layout), dropout 0.3.
    6 encoder layers: q, k and v as three nn.Linear, attention by
    F.scaled_dot_product_attention on [b, 16 heads, s, 64] under a key-padding mask from the
    source lengths, no dropout on the attention probabilities, the output nn.Linear, dropout
    0.3, residual, nn.LayerNorm (eps 1e-5); then nn.Linear(1024, 4096), ReLU,
    nn.Linear(4096, 1024), dropout 0.3, residual, layer norm. 6 decoder layers: causal
    self-attention over the target lengths, then cross-attention (queries from the decoder,
    keys and values from the encoder's output over the source lengths), then the feed-forward,
    each with its dropout, residual and layer norm. No final layer norm after either stack.
    Logits against the table [b * T, 32000]; cross-entropy with label smoothing 0.1, target
    padding labelled -100 and ignored. 209,125,376 parameters: the table 32,768,000, an
    encoder layer 12,596,224 (4 attention and 2 feed-forward nn.Linear with bias, 2 layer
    norms), a decoder layer 16,796,672 (8 attention nn.Linear, the feed-forward, 3 layer norms).
  - inference: the same forward without dropout under torch.no_grad(), scoring the given target
    (teacher forcing, no search), as dlbench's inference does; no labels. Training: Adam at the
    run's rate, betas (0.9, 0.98), eps 1e-9, no weight decay (fairseq's Transformer-big), fused
    on CUDA where torch has it.
  - init: the table N(0, 1024^-0.5); every nn.Linear weight N(0, 0.02) (as dlbench's BERT;
    fairseq uses xavier, which changes no work), biases 0, layer norms 1 and 0.
  - data: one synthetic batch of sentence pairs drawn once on the host and kept on the device,
    of the statistics of dlbench's (engine/data/translation_batch.h), not its values;
    translation_batch() below.
  - precision: autocast as for the other models (the table, the embedding sums, layer norms
    and the loss stay f32); fp16 with GradScaler.
"""

import math

from pytorch_ids import zipf

MODEL = "transformer"

VOCABULARY = 32000  # joined source and target BPE
HIDDEN = 1024
HEADS = 16
HEAD_WIDTH = HIDDEN // HEADS  # 64
FEED_FORWARD = 4096
ENCODER_LAYERS = 6
DECODER_LAYERS = 6
NORM_EPS = 1e-5
DROPOUT = 0.3
EMBEDDING_SCALE = math.sqrt(HIDDEN)
ENCODING_BASE = 10000.0  # the sinusoids' longest wavelength over 2 pi
TABLE_STD = HIDDEN ** -0.5
INIT_STD = 0.02
LABEL_SMOOTHING = 0.1
ADAM_BETAS = (0.9, 0.98)
ADAM_EPS = 1e-9
IGNORED_LABEL = -100

# The batch's statistics, as engine/data/translation_batch.cc draws them (modelled, not fitted
# to WMT): log-normal source lengths, target lengths a log-normal ratio of them.
PAD, BOS, EOS, FIRST_WORD = 0, 1, 2, 4  # unk is 3
SHORTEST = 3
SOURCE_LOG_MEAN, SOURCE_LOG_STD = math.log(24.0), 0.55
RATIO_LOG_MEAN, RATIO_LOG_STD = 0.05, 0.2
WORD_EXPONENT = 1.0

# dlbench's inputs, in its order: the ids and labels are [batch * S], the lengths [batch].
TRAINING_INPUTS = ("source_ids", "source_lengths", "target_ids", "target_lengths",
                   "target_labels")
INFERENCE_INPUTS = ("source_ids", "source_lengths", "target_ids", "target_lengths")
ROW_INPUTS = ("source_ids", "target_ids", "target_labels")


def translation_batch(torch, batch, sequence, vocabulary, generator):
    """One batch of sentence pairs on the host, int64: {"source_ids", "target_ids",
    "target_labels"} as [batch, sequence], {"source_lengths", "target_lengths"} as [batch].

    Source length n_s = clamp(round(exp(N(ln 24, 0.55))), 3, S) (0.55 the standard deviation);
    target length n_t = clamp(round(n_s exp(N(0.05, 0.2))), 3, S) of the clamped n_s. The
    source row is n_s - 1 words then eos; the target sentence n_t - 1 words then eos; the
    decoder reads bos then the sentence's first n_t - 1 tokens and is labelled with its n_t
    tokens. Words are Zipf(1) ids from FIRST_WORD on; ids are padded with PAD, labels with -100.
    """
    shape = (batch, sequence)
    column = torch.arange(sequence).repeat(batch, 1)  # [batch, S]

    def rounded_lengths(real):  # round half up, as std::llround does for positive values
        return (real + 0.5).floor().long().clamp(SHORTEST, sequence)

    normal = torch.randn(batch, generator=generator, dtype=torch.float64)
    source_lengths = rounded_lengths((SOURCE_LOG_MEAN + SOURCE_LOG_STD * normal).exp())
    normal = torch.randn(batch, generator=generator, dtype=torch.float64)
    target_lengths = rounded_lengths(
        source_lengths.double() * (RATIO_LOG_MEAN + RATIO_LOG_STD * normal).exp())

    def sentence(lengths):
        """[batch, S]: lengths - 1 words, eos, then padding."""
        words = zipf(torch, FIRST_WORD, vocabulary, WORD_EXPONENT, batch * sequence, "cpu",
                     generator).view(shape)
        last = (lengths - 1).unsqueeze(1)  # [batch, 1]
        row = torch.where(column < last, words, torch.full_like(words, PAD))
        return torch.where(column == last, torch.full_like(row, EOS), row)

    source_ids = sentence(source_lengths)
    target = sentence(target_lengths)
    in_target = column < target_lengths.unsqueeze(1)  # [batch, S]
    # The decoder's input is the sentence shifted right by one behind bos: column c < n_t reads
    # token c - 1, a word (the sentence's eos, at n_t - 1, is only ever a label).
    shifted = torch.cat([torch.full((batch, 1), BOS, dtype=target.dtype), target[:, :-1]],
                        dim=1)
    target_ids = torch.where(in_target, shifted, torch.full_like(shifted, PAD))
    target_labels = torch.where(in_target, target, torch.full_like(target, IGNORED_LABEL))
    return {"source_ids": source_ids, "source_lengths": source_lengths,
            "target_ids": target_ids, "target_labels": target_labels,
            "target_lengths": target_lengths}


class Transformer:
    """Builds the torch modules lazily so this file imports without torch."""

    @staticmethod
    def build(torch, sequence):
        """The encoder-decoder: (source_ids [b, S], source_lengths [b], target_ids [b, T],
        target_lengths [b]) -> logits [b * T, V], T = S here. Sequences up to `sequence` long."""
        nn = torch.nn
        F = nn.functional

        def positional_encoding():
            """[sequence, HIDDEN] f32: column c < half is sin(pos w_c), column c >= half is
            cos(pos w_(c - half)), w_j = exp(-ln(10000) j / (half - 1)), as dlbench's
            positional_encoding op computes it (in f32)."""
            half = HIDDEN // 2
            j = torch.arange(half, dtype=torch.float32)
            frequencies = torch.exp(j * (-math.log(ENCODING_BASE) / (half - 1)))  # [half]
            positions = torch.arange(sequence, dtype=torch.float32).unsqueeze(1)  # [S, 1]
            angles = positions * frequencies  # [S, half]
            return torch.cat([angles.sin(), angles.cos()], dim=1)

        class Attention(nn.Module):
            def __init__(self):
                super().__init__()
                self.query = nn.Linear(HIDDEN, HIDDEN)
                self.key = nn.Linear(HIDDEN, HIDDEN)
                self.value = nn.Linear(HIDDEN, HIDDEN)
                self.output = nn.Linear(HIDDEN, HIDDEN)

            def forward(self, x, memory, mask):
                """Queries from x [b, t, H], keys and values from memory [b, s, H] (x itself in
                self-attention); mask [b, 1, 1 or t, s] (True: the key is attended to).
                -> [b, t, H], before dropout."""
                b, t, _ = x.shape
                s = memory.shape[1]

                def split_heads(y, length):  # [b, length, H] -> [b, heads, length, d]
                    return y.view(b, length, HEADS, HEAD_WIDTH).transpose(1, 2)

                context = F.scaled_dot_product_attention(
                    split_heads(self.query(x), t), split_heads(self.key(memory), s),
                    split_heads(self.value(memory), s), attn_mask=mask, dropout_p=0.0)
                # context [b, heads, t, d] -> [b, t, H]
                return self.output(context.transpose(1, 2).reshape(b, t, HIDDEN))

        class FeedForward(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(HIDDEN, FEED_FORWARD)
                self.fc2 = nn.Linear(FEED_FORWARD, HIDDEN)

            def forward(self, x):  # [b, t, H] -> [b, t, H], before dropout
                return self.fc2(F.relu(self.fc1(x)))

        class EncoderLayer(nn.Module):
            def __init__(self):
                super().__init__()
                self.attention = Attention()
                self.attention_norm = nn.LayerNorm(HIDDEN, eps=NORM_EPS)
                self.feed_forward = FeedForward()
                self.feed_forward_norm = nn.LayerNorm(HIDDEN, eps=NORM_EPS)
                self.dropout = nn.Dropout(DROPOUT)

            def forward(self, x, source_mask):
                """x [b, S, H], source_mask [b, 1, 1, S]."""
                x = self.attention_norm(x + self.dropout(self.attention(x, x, source_mask)))
                return self.feed_forward_norm(x + self.dropout(self.feed_forward(x)))

        class DecoderLayer(nn.Module):
            def __init__(self):
                super().__init__()
                self.self_attention = Attention()
                self.self_attention_norm = nn.LayerNorm(HIDDEN, eps=NORM_EPS)
                self.cross_attention = Attention()
                self.cross_attention_norm = nn.LayerNorm(HIDDEN, eps=NORM_EPS)
                self.feed_forward = FeedForward()
                self.feed_forward_norm = nn.LayerNorm(HIDDEN, eps=NORM_EPS)
                self.dropout = nn.Dropout(DROPOUT)

            def forward(self, x, memory, target_mask, source_mask):
                """x [b, T, H], memory (the encoder's output) [b, S, H], target_mask
                [b, 1, T, T] (causal and key padding), source_mask [b, 1, 1, S]."""
                x = self.self_attention_norm(
                    x + self.dropout(self.self_attention(x, x, target_mask)))
                x = self.cross_attention_norm(
                    x + self.dropout(self.cross_attention(x, memory, source_mask)))
                return self.feed_forward_norm(x + self.dropout(self.feed_forward(x)))

        class Translation(nn.Module):
            def __init__(self):
                super().__init__()
                self.table = nn.Embedding(VOCABULARY, HIDDEN)
                # A buffer, not a parameter: it moves with the module and is not trained.
                self.register_buffer("encoding", positional_encoding(), persistent=False)
                self.dropout = nn.Dropout(DROPOUT)
                self.encoder = nn.ModuleList(EncoderLayer() for _ in range(ENCODER_LAYERS))
                self.decoder = nn.ModuleList(DecoderLayer() for _ in range(DECODER_LAYERS))

            def embed(self, ids):
                """ids [b, n] -> [b, n, H]; the encoding [n, H] broadcasts over the batch."""
                n = ids.shape[1]
                return self.dropout(EMBEDDING_SCALE * self.table(ids) + self.encoding[:n])

            def forward(self, source_ids, source_lengths, target_ids, target_lengths):
                b, s = source_ids.shape
                t = target_ids.shape[1]
                source_keys = torch.arange(s, device=source_ids.device)
                source_mask = (source_keys < source_lengths.unsqueeze(1)).view(b, 1, 1, s)
                target_keys = torch.arange(t, device=target_ids.device)
                causal = target_keys.view(1, t) <= target_keys.view(t, 1)  # [t, t]: key <= query
                target_padding = (target_keys < target_lengths.unsqueeze(1)).view(b, 1, 1, t)
                target_mask = causal.view(1, 1, t, t) & target_padding  # [b, 1, t, t]
                # Every row keeps a key: lengths are at least SHORTEST, and key 0 is always one.

                memory = self.embed(source_ids)  # [b, s, H]
                for layer in self.encoder:
                    memory = layer(memory, source_mask)
                x = self.embed(target_ids)  # [b, t, H]
                for layer in self.decoder:
                    x = layer(x, memory, target_mask, source_mask)
                # The output projection is the table itself (tied), without a bias.
                logits = F.linear(x, self.table.weight)  # [b, t, V]
                return logits.reshape(b * t, VOCABULARY)

        def initialize(m):
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=INIT_STD)
                nn.init.zeros_(m.bias)
            if isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

        module = Translation()
        module.apply(initialize)
        nn.init.normal_(module.table.weight, std=TABLE_STD)
        return module


class Workload:
    """What pytorch_worker.py's step needs: the module, its inputs, the loss, the optimizers."""

    def __init__(self, torch, channel, args, device, input_named):
        self.torch = torch
        self.device = device
        self.train = args.mode == "train"
        names = TRAINING_INPUTS if self.train else INFERENCE_INPUTS
        specs = {name: input_named(channel, args, name) for name in names}
        for name, spec in specs.items():
            d = spec["distribution"]
            if (d.get("kind") != "translation" or d.get("field") != name
                    or d.get("vocabulary") != VOCABULARY):
                channel.fail("usage", f"{args.model}: input '{name}' must be the '{name}' field "
                                      f"of translation data over {VOCABULARY} ids, not {d}")
        sequences = sorted({repr(specs[name]["distribution"].get("sequence")) for name in names})
        sequence = specs["source_ids"]["distribution"].get("sequence")
        if (len(sequences) != 1 or not isinstance(sequence, int) or isinstance(sequence, bool)
                or sequence < SHORTEST):
            channel.fail("usage", f"{args.model}: every input must name one sequence of at "
                                  f"least {SHORTEST} positions, not {', '.join(sequences)}")
        for name, spec in specs.items():
            expected = [args.batch * sequence] if name in ROW_INPUTS else [args.batch]
            if list(spec["shape"]) != expected:
                channel.fail("usage", f"{args.model}: {name} of shape {spec['shape']}, not "
                                      f"{expected} (batch {args.batch}, sequence {sequence})")

        self.module = Transformer.build(torch, sequence)
        generator = torch.Generator().manual_seed(args.seed)
        drawn = translation_batch(torch, args.batch, sequence, VOCABULARY, generator)
        self.inputs = [drawn[name].to(device) for name in
                       ("source_ids", "source_lengths", "target_ids", "target_lengths")]
        self.target_labels = drawn["target_labels"].view(-1).to(device)  # [b * S]: training
        # As dlbench counts a step's tokens: both sentences of every pair, [EOS] in, padding out.
        self.tokens_per_step = int(drawn["source_lengths"].sum() + drawn["target_lengths"].sum())
        self.channels_last = False

    def optimizers(self, args):
        torch = self.torch
        parameters = list(self.module.parameters())
        options = {"lr": args.lr, "betas": ADAM_BETAS, "eps": ADAM_EPS, "weight_decay": 0.0}
        if self.device.type == "cuda":
            try:
                return [torch.optim.Adam(parameters, fused=True, **options)]
            except TypeError:  # a torch without fused Adam
                pass
        return [torch.optim.Adam(parameters, **options)]

    def loss(self, model):
        """One forward (and its loss in training)."""
        F = self.torch.nn.functional
        logits = model(*self.inputs)  # [b * S, V]
        if not self.train:
            return None
        return F.cross_entropy(logits.float(), self.target_labels, ignore_index=IGNORED_LABEL,
                               label_smoothing=LABEL_SMOOTHING)
