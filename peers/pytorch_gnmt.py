"""GNMT v2 translation in PyTorch, the PyTorch way, for pytorch_worker.py: the architecture, data
and optimizer of dlbench's gnmt (engine/models/gnmt_model.cc), as NVIDIA's DeepLearningExamples
GNMT builds it, so the two measure the same work.

  - model: one nn.Embedding table of 32,320 ids by 1024 for source and target, dropout 0.2.
    Encoder: layer 0 an nn.LSTM(1024, 1024, bidirectional=True) over the source sentences packed
    by their lengths (pack_padded_sequence, as the reference), layer 1 nn.LSTM(2048, 1024), layers
    2 and 3 nn.LSTM(1024, 1024) with a residual, dropout before layers 1-3. Decoder: layer 0
    nn.LSTM(1024, 1024) over the target's embeddings; its output queries the normalized Bahdanau
    attention (the reference's calc_score: tanh(W_q q + W_k k + b) against g v / |v|, masked by
    the source lengths, softmax, bmm with the encoder's outputs); layers 1-3 nn.LSTM(2048, 1024)
    over dropout([x, context]), layers 2 and 3 with a residual; nn.Linear(1024, 32320) with a
    bias. Time-major, as nn.LSTM's default and dlbench's rows. Cross-entropy with label smoothing
    0.1 over the target's tokens (-100 on padding). 160,671,297 parameters.
  - inference: greedy decoding under torch.no_grad(), as dlbench's: the encoder once (and the
    attention's keys projected once), then one position at a time, each LSTM's (h, c) carried,
    every open sentence taking its highest-scoring token (the lowest id on ties, torch.argmax's
    first), [PAD] after its [EOS], until every sentence has closed (checked on the host after
    each position) or the sentence length has run. With --beam K, beam search as dlbench's
    (Backend::beam_pick): each hypothesis's K best next tokens by log-softmax, the sentence's K
    best of those, finished hypotheses carried once at their score, (h, c) and the summed
    attention following the hypotheses they continue, until every hypothesis of every sentence
    has closed; then per sentence the best by score / ((5 + length) / 6)^0.6 + 0.1 x the sum of
    log(min(attention summed, 1)) over the source positions attended to, traced back through
    the positions on the device. The sources only; no target.
  - training: Adam at the run's rate (PyTorch's betas and eps), fused on CUDA where torch has
    it, gradients clipped at global norm 5 (torch.nn.utils.clip_grad_norm_, after GradScaler's unscale_ in fp16).
  - init: every parameter U(-0.1, 0.1) (the reference's init_weight), the attention's bias b 0
    and its scale g 1 / sqrt(1024).
  - data: one synthetic batch of sentence pairs drawn once on the host and kept on the device,
    of the statistics of dlbench's (pytorch_transformer.translation_batch), transposed to
    time-major.
  - precision: autocast as for the other models; fp16 with GradScaler. fp16/bf16 decoding also
    casts the model to the dtype first (half_inference), as the reference's translate.py does.
"""

import math

from pytorch_transformer import IGNORED_LABEL, SHORTEST, translation_batch

MODEL = "gnmt"

VOCABULARY = 32320  # joined source and target BPE, padded to a multiple of 8
HIDDEN = 1024
DROPOUT = 0.2
INIT_BOUND = 0.1
LABEL_SMOOTHING = 0.1
MAX_GRAD_NORM = 5.0

# dlbench's inputs, in its order: the ids and labels are [S * batch] (time-major), the lengths
# [batch].
TRAINING_INPUTS = ("source_ids", "source_lengths", "target_ids", "target_labels")
INFERENCE_INPUTS = ("source_ids", "source_lengths")
PAD, BOS, EOS = 0, 1, 2  # dlbench's data::SentenceIds
ROW_INPUTS = ("source_ids", "target_ids", "target_labels")


class Gnmt:
    """Builds the torch modules lazily so this file imports without torch."""

    @staticmethod
    def build(torch):
        """(source_ids [S, b], source_lengths [b], target_ids [T, b]) -> logits [T * b, V]."""
        nn = torch.nn
        F = nn.functional
        rnn = nn.utils.rnn

        class Attention(nn.Module):
            """The reference's BahdanauAttention with normalize=True."""

            def __init__(self):
                super().__init__()
                self.linear_q = nn.Linear(HIDDEN, HIDDEN, bias=False)
                self.linear_k = nn.Linear(HIDDEN, HIDDEN, bias=False)
                self.normalize_bias = nn.Parameter(torch.empty(HIDDEN))
                self.linear_att = nn.Parameter(torch.empty(HIDDEN))  # v
                self.normalize_scalar = nn.Parameter(torch.empty(1))  # g

            def forward(self, query, keys, lengths, projected=None, with_probs=False):
                """query [T, b, H], keys (the encoder's outputs, also the values) [S, b, H],
                lengths [b] -> the context [T, b, H] (and with_probs the probabilities
                [b, T, S]). projected: linear_k(keys) where the caller kept it (decoding projects
                the keys once)."""
                q = self.linear_q(query).transpose(0, 1)  # [b, T, H]
                if projected is None:
                    projected = self.linear_k(keys)
                k = projected.transpose(0, 1)  # [b, S, H]
                u = self.normalize_scalar * self.linear_att / self.linear_att.norm()
                # [b, T, S, H]: the tensor dlbench's op never builds.
                scores = torch.tanh(q.unsqueeze(2) + k.unsqueeze(1) + self.normalize_bias) @ u
                s = keys.shape[0]
                padding = torch.arange(s, device=keys.device) >= lengths.unsqueeze(1)  # [b, S]
                scores = scores.masked_fill(padding.unsqueeze(1), float("-inf"))
                probs = F.softmax(scores, dim=-1)  # [b, T, S]
                context = torch.bmm(probs.to(keys.dtype), keys.transpose(0, 1)).transpose(0, 1)
                return (context, probs) if with_probs else context

        class Translation(nn.Module):
            def __init__(self):
                super().__init__()
                self.table = nn.Embedding(VOCABULARY, HIDDEN)
                self.dropout = nn.Dropout(DROPOUT)
                self.encoder0 = nn.LSTM(HIDDEN, HIDDEN, bidirectional=True)
                self.encoder1 = nn.LSTM(2 * HIDDEN, HIDDEN)
                self.encoder_residual = nn.ModuleList(nn.LSTM(HIDDEN, HIDDEN) for _ in range(2))
                self.decoder0 = nn.LSTM(HIDDEN, HIDDEN)
                self.attention = Attention()
                self.decoder_rest = nn.ModuleList(nn.LSTM(2 * HIDDEN, HIDDEN) for _ in range(3))
                self.classifier = nn.Linear(HIDDEN, VOCABULARY)

            def encode(self, source_ids, source_lengths):
                """-> the encoder's outputs [S, b, H]."""
                s = source_ids.shape[0]
                x = self.dropout(self.table(source_ids))  # [S, b, H]
                # Packing takes the lengths on the host, as the reference does.
                packed = rnn.pack_padded_sequence(x, source_lengths.cpu(), enforce_sorted=False)
                x, _ = rnn.pad_packed_sequence(self.encoder0(packed)[0], total_length=s)
                x, _ = self.encoder1(self.dropout(x))
                for lstm in self.encoder_residual:
                    x = lstm(self.dropout(x))[0] + x
                return x

            def forward(self, source_ids, source_lengths, target_ids):
                b = source_ids.shape[1]
                memory = self.encode(source_ids, source_lengths)  # [S, b, H]
                query, _ = self.decoder0(self.dropout(self.table(target_ids)))  # [T, b, H]
                context = self.attention(query, memory, source_lengths)
                x = query
                for i, lstm in enumerate(self.decoder_rest):
                    out, _ = lstm(self.dropout(torch.cat([x, context], dim=2)))
                    x = out if i == 0 else out + x
                t = target_ids.shape[0]
                return self.classifier(x).reshape(t * b, VOCABULARY)

            def step(self, tokens, states, memory, lengths, projected):
                """One decoder position for every row -> (scores [rows, V], attention
                probabilities [rows, 1, S]); states (h, c) per layer, updated in place."""
                query, states[0] = self.decoder0(self.table(tokens), states[0])
                context, probs = self.attention(query, memory, lengths, projected, True)
                x = query
                for i, lstm in enumerate(self.decoder_rest):
                    out, states[i + 1] = lstm(torch.cat([x, context], dim=2), states[i + 1])
                    x = out if i == 0 else out + x
                return self.classifier(x)[0], probs

            def translate(self, source_ids, source_lengths, max_length, beam=1):
                """Greedy decoding or beam search -> the tokens translated into, [EOS]
                included (a device scalar)."""
                b = source_ids.shape[1]
                memory = self.encode(source_ids, source_lengths)
                projected = self.attention.linear_k(memory)
                if beam > 1:
                    return self.beam_search(memory, projected, source_lengths, max_length, beam)
                tokens = torch.full((1, b), BOS, dtype=torch.long, device=source_ids.device)
                states = [None] * (1 + len(self.decoder_rest))
                finished = torch.zeros(b, dtype=torch.bool, device=source_ids.device)
                lengths = torch.zeros(b, dtype=torch.long, device=source_ids.device)
                for _ in range(max_length):
                    scores, _ = self.step(tokens, states, memory, source_lengths, projected)
                    chosen = scores.argmax(dim=-1)  # [b]
                    chosen = chosen.masked_fill(finished, PAD)
                    lengths += ~finished
                    finished |= chosen == EOS
                    tokens = chosen.unsqueeze(0)
                    if bool(finished.all()):  # waits for the position, as dlbench's decoder
                        break
                return lengths.sum()

            def beam_search(self, memory, projected, source_lengths, max_length, beam):
                s, b = memory.shape[0], memory.shape[1]
                rows = b * beam
                device = memory.device
                # Row n * beam + k: sentence n's hypothesis k.
                memory = memory.repeat_interleave(beam, dim=1)
                projected = projected.repeat_interleave(beam, dim=1)
                lengths_in = source_lengths.repeat_interleave(beam)
                first = torch.full((beam,), float("-inf"), device=device)
                first[0] = 0
                scores = first.repeat(b)  # one hypothesis per sentence to begin with
                finished = torch.zeros(rows, dtype=torch.bool, device=device)
                lengths = torch.zeros(rows, dtype=torch.long, device=device)
                coverage = torch.zeros(rows, s, device=device)
                carried = torch.full((rows, beam), float("-inf"), device=device)
                carried_ids = torch.full((rows, beam), PAD, dtype=torch.long, device=device)
                base = (torch.arange(b, device=device) * beam).unsqueeze(1)
                tokens = torch.full((1, rows), BOS, dtype=torch.long, device=device)
                states = [None] * (1 + len(self.decoder_rest))
                history, parents = [], []
                for _ in range(max_length):
                    logits, probs = self.step(tokens, states, memory, lengths_in, projected)
                    top, ids = F.log_softmax(logits.float(), dim=-1).topk(beam, dim=-1)
                    candidates = scores.unsqueeze(1) + top  # [rows, beam]
                    # A finished hypothesis: one candidate, its score, continued by padding.
                    carried[:, 0] = scores
                    done = finished.unsqueeze(1)
                    candidates = torch.where(done, carried, candidates)
                    ids = torch.where(done, carried_ids, ids)
                    best, index = candidates.view(b, beam * beam).topk(beam, dim=1)
                    parent = (base + index // beam).view(-1)
                    token = ids.view(b, beam * beam).gather(1, index).view(-1)
                    was_done = finished[parent]
                    scores = best.view(-1)
                    finished = was_done | (token == EOS)
                    lengths = lengths[parent] + (~was_done).long()
                    attended = probs[:, 0, :].float().masked_fill(done, 0)
                    coverage = coverage[parent] + attended[parent]
                    states = [(h.index_select(1, parent), c.index_select(1, parent))
                              for h, c in states]
                    tokens = token.unsqueeze(0)
                    history.append(token)
                    parents.append(parent)
                    if bool(finished.all()):  # waits for the position, as dlbench's decoder
                        break
                norm = ((5.0 + lengths.float()) / 6.0) ** 0.6
                penalty = torch.where(coverage > 0, coverage.clamp(max=1).log(),
                                      torch.zeros_like(coverage)).sum(dim=1)
                value = (scores / norm + 0.1 * penalty).view(b, beam)
                row = value.argmax(dim=1) + base.view(-1)
                translated = lengths[row].sum()
                out = torch.empty(len(history), b, dtype=torch.long, device=device)
                for t in range(len(history) - 1, -1, -1):  # traced back on the device
                    out[t] = history[t][row]
                    row = parents[t][row]
                return translated

        module = Translation()
        for p in module.parameters():
            nn.init.uniform_(p, -INIT_BOUND, INIT_BOUND)
        nn.init.zeros_(module.attention.normalize_bias)
        nn.init.constant_(module.attention.normalize_scalar, 1.0 / math.sqrt(HIDDEN))
        return module


class Workload:
    """What pytorch_worker.py's step needs: the module, its inputs, the loss, the optimizers."""

    max_grad_norm = MAX_GRAD_NORM
    # fp16/bf16 decoding runs a model cast to the dtype, as the reference's translate.py does
    # (autocast would cast the LSTMs' and the classifier's weights again at every position).
    half_inference = True

    def __init__(self, torch, channel, args, device, input_named):
        self.torch = torch
        self.train = args.mode == "train"
        names = TRAINING_INPUTS if self.train else INFERENCE_INPUTS
        specs = {name: input_named(channel, args, name) for name in names}
        for name, spec in specs.items():
            d = spec["distribution"]
            if (d.get("kind") != "translation" or d.get("field") != name
                    or d.get("vocabulary") != VOCABULARY or d.get("time_major") is not True):
                channel.fail("usage", f"{args.model}: input '{name}' must be the '{name}' field "
                                      f"of time-major translation data over {VOCABULARY} ids, "
                                      f"not {d}")
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

        self.module = Gnmt.build(torch)
        generator = torch.Generator().manual_seed(args.seed)
        drawn = translation_batch(torch, args.batch, sequence, VOCABULARY, generator)
        self.inputs = [drawn["source_ids"].t().contiguous().to(device),
                       drawn["source_lengths"].to(device),
                       drawn["target_ids"].t().contiguous().to(device)]
        self.target_labels = drawn["target_labels"].t().reshape(-1).to(device)  # [S * b]
        # As dlbench counts a training step's tokens: both sentences of every pair, [EOS] in,
        # padding out (inference counts the tokens translated into instead).
        self.tokens_per_step = int(drawn["source_lengths"].sum() + drawn["target_lengths"].sum())
        if not self.train:
            self.inputs = self.inputs[:2]  # decoding reads the sources only
        self.max_length = sequence  # as dlbench's: a translation as long as a sentence may be
        self.beam = args.beam
        if not 1 <= self.beam <= 8 or (self.train and self.beam != 1):
            channel.fail("usage", f"{args.model}: --beam searches inference only, 1 to 8, not "
                                  f"{self.beam}")
        self.translated = 0  # the tokens the steps since the worker last reset it translated
        self.channels_last = False

    def optimizers(self, args):
        torch = self.torch
        parameters = list(self.module.parameters())
        if self.inputs[0].device.type == "cuda":
            try:
                return [torch.optim.Adam(parameters, lr=args.lr, fused=True)]
            except TypeError:  # a torch without fused Adam
                pass
        return [torch.optim.Adam(parameters, lr=args.lr)]

    def loss(self, model):
        """One forward and its loss in training; one batch translated in inference."""
        F = self.torch.nn.functional
        if not self.train:
            self.translated += model.translate(*self.inputs, self.max_length, self.beam)
            return None
        logits = model(*self.inputs)  # [S * b, V]
        return F.cross_entropy(logits.float(), self.target_labels, ignore_index=IGNORED_LABEL,
                               label_smoothing=LABEL_SMOOTHING)
