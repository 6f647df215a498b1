"""NCF and Word2Vec in JAX for jax_worker.py: the models, data and optimizers of dlbench's ncf
and word2vec (engine/models/ncf_model.cc, word2vec_model.cc), in plain jax.numpy.

  - ncf: NeuMF, GMF (64-wide user and item tables, multiplied) beside an MLP (128-wide tables,
    concatenated, 256 -> 256 -> 128 -> 64 with ReLUs), one linear logit; 1,978,305 parameters
    at MovieLens-1M's sizes. Training: the P positive pairs of --inputs, drawn once, and B - P
    negatives drawn on the device each step (a uniform item for positive j % P's user).
  - word2vec (and word2vec-d300, word2vec-neg64): an input and an output table; each pair is
    scored against its context and k negatives drawn on the device each step from the
    unigram^0.75 distribution of the inputs' Zipf law (jax.random.choice).
  - loss: binary cross-entropy with logits, in f32.
  - optimizer: Adam on the dense layers; on the tables the lazy Adam of dlbench and PyTorch's
    SparseAdam (moments and weights change only on the rows the step looked up). JAX has no
    sparse gradients: a table's gradient is dense (the scatter-add of the looked-up rows'
    gradients) and the lazy update is masked over the whole table, so the step touches every
    row, as XLA users run it.
  - precision: as the image models (fp32 = "highest", tf32, fp16/bf16 compute with f32 master
    parameters: looked-up rows and dense weights are cast in the step; fp16 with dynamic loss
    scaling).
"""

import math

NCF_FACTORS = 64
NCF_MLP = (256, 256, 128, 64)
NEGATIVE_POWER = 0.75
# dlbench's Word2Vec variants: (dimension, negatives per pair).
WORD2VEC = {"word2vec": (128, 5), "word2vec-d300": (300, 5), "word2vec-neg64": (128, 64)}
MODELS = ("ncf",) + tuple(WORD2VEC)
BETA1, BETA2, EPSILON = 0.9, 0.999, 1e-8
SCALE_GROWTH_INTERVAL = 2000


def zipf_probabilities(jnp, count, exponent):
    """Id k of [0, count) with weight (k + 1)^-exponent, normalized."""
    weights = jnp.arange(1, count + 1, dtype=jnp.float32) ** -exponent
    return weights / jnp.sum(weights)


def draw(jax, key, spec):
    """One --inputs entry of integer ids, drawn once on the default device."""
    jnp = jax.numpy
    d = spec["distribution"]
    count = math.prod(spec["shape"])
    low, high = int(d["low"]), int(d["high"])
    if d["kind"] == "zipf":
        p = zipf_probabilities(jnp, high - low, d["exponent"])
        ids = low + jax.random.choice(key, high - low, (count,), replace=True, p=p)
    else:
        ids = jax.random.randint(key, (count,), low, high)
    return ids.astype(jnp.int32).reshape(spec["shape"])


class Parameters:
    """Named f32 arrays: tables (lazy Adam) and dense weights (Adam)."""

    def __init__(self, jax, seed):
        self.jax = jax
        self.key = jax.random.PRNGKey(seed)
        self.tables, self.dense = {}, {}

    def _next(self):
        self.key, sub = self.jax.random.split(self.key)
        return sub

    def table(self, name, rows, width, stddev):
        jnp = self.jax.numpy
        self.tables[name] = (stddev * self.jax.random.normal(self._next(), (rows, width))
                             if stddev > 0 else jnp.zeros((rows, width), jnp.float32))

    def linear(self, name, width_in, width_out):
        jnp = self.jax.numpy
        w = self.jax.random.normal(self._next(), (width_in, width_out)) / math.sqrt(width_in)
        self.dense[name] = {"w": w, "b": jnp.zeros((width_out,), jnp.float32)}

    def count(self):
        leaves = self.jax.tree_util.tree_leaves((self.tables, self.dense))
        return int(sum(x.size for x in leaves))


class Ncf:
    def __init__(self, jax, channel, args, input_named):
        users = input_named(channel, args, "users")
        items = input_named(channel, args, "items")
        self.user_count = int(users["distribution"]["high"])
        self.item_count = int(items["distribution"]["high"])
        p = Parameters(jax, args.seed)
        for side, rows in (("user", self.user_count), ("item", self.item_count)):
            p.table("gmf_" + side, rows, NCF_FACTORS, 0.01)
            p.table("mlp_" + side, rows, NCF_MLP[0] // 2, 0.01)
        for i in range(1, len(NCF_MLP)):
            p.linear(f"fc{i}", NCF_MLP[i - 1], NCF_MLP[i])
        p.linear("predict", NCF_FACTORS + NCF_MLP[-1], 1)
        self.params = p
        key = jax.random.PRNGKey(args.seed + 7)
        self.inputs = (draw(jax, jax.random.fold_in(key, 0), users),
                       draw(jax, jax.random.fold_in(key, 1), items))
        self.train = args.mode == "train"
        positives = self.inputs[0].shape[0]
        if self.train and not 0 < positives <= args.batch:
            channel.fail("usage", f"ncf: {positives} positives for a batch of {args.batch}")
        self.negatives = args.batch - positives if self.train else 0

    def batch(self, jax, key, inputs):
        """The step's (users, items), ids of every table lookup, and labels."""
        jnp = jax.numpy
        users, items = inputs
        if not self.train:
            return (users, items), None
        positives = users.shape[0]
        sampled = jax.random.randint(key, (self.negatives,), 0, self.item_count)
        negative_users = users[jnp.arange(self.negatives) % positives]
        labels = jnp.concatenate([jnp.ones((positives, 1)), jnp.zeros((self.negatives, 1))])
        return (jnp.concatenate([users, negative_users]),
                jnp.concatenate([items, sampled.astype(jnp.int32)])), labels

    def lookups(self, ids):
        users, items = ids
        return {"gmf_user": users, "mlp_user": users, "gmf_item": items, "mlp_item": items}

    def forward(self, jax, tables, dense, ids, dtype):
        jnp = jax.numpy
        users, items = ids
        row = lambda name, i: tables[name][i].astype(dtype)  # noqa: E731
        gmf = row("gmf_user", users) * row("gmf_item", items)
        x = jnp.concatenate([row("mlp_user", users), row("mlp_item", items)], axis=1)
        for i in range(1, len(NCF_MLP)):
            layer = dense[f"fc{i}"]
            x = jax.nn.relu(x @ layer["w"].astype(dtype) + layer["b"].astype(dtype))
        last = dense["predict"]
        both = jnp.concatenate([gmf, x], axis=1)
        return both @ last["w"].astype(dtype) + last["b"].astype(dtype)


class Word2Vec:
    def __init__(self, jax, channel, args, input_named):
        jnp = jax.numpy
        words = input_named(channel, args, "words")
        contexts = input_named(channel, args, "contexts")
        dimension, self.negatives = WORD2VEC[args.model]
        self.vocabulary = int(contexts["distribution"]["high"])
        p = Parameters(jax, args.seed)
        p.table("input", self.vocabulary, dimension, 0.5 / dimension / math.sqrt(3))
        p.table("output", self.vocabulary, dimension, 0.0)
        self.params = p
        key = jax.random.PRNGKey(args.seed + 7)
        self.inputs = (draw(jax, jax.random.fold_in(key, 0), words),
                       draw(jax, jax.random.fold_in(key, 1), contexts))
        exponent = contexts["distribution"].get("exponent", 0.0)
        self.negative_p = zipf_probabilities(jnp, self.vocabulary, exponent * NEGATIVE_POWER)
        self.train = args.mode == "train"

    def batch(self, jax, key, inputs):
        jnp = jax.numpy
        words, contexts = inputs
        pairs = words.shape[0]
        if not self.train:
            return (words, contexts[:, None]), None
        sampled = jax.random.choice(key, self.vocabulary, (pairs, self.negatives), replace=True,
                                    p=self.negative_p).astype(jnp.int32)
        candidates = jnp.concatenate([contexts[:, None], sampled], axis=1)
        labels = jnp.concatenate([jnp.ones((pairs, 1)), jnp.zeros((pairs, self.negatives))],
                                 axis=1)
        return (words, candidates), labels

    def lookups(self, ids):
        words, candidates = ids
        return {"input": words, "output": candidates.reshape(-1)}

    def forward(self, jax, tables, dense, ids, dtype):
        words, candidates = ids
        vectors = tables["input"][words].astype(dtype)
        scored = tables["output"][candidates].astype(dtype)
        return jax.numpy.einsum("bd,bmd->bm", vectors, scored)


def adam_moments(jnp, m, v, g):
    return BETA1 * m + (1 - BETA1) * g, BETA2 * v + (1 - BETA2) * g * g


def adam_step(jnp, p, m, v, step, lr):
    m_hat = m / (1 - BETA1 ** step)
    v_hat = v / (1 - BETA2 ** step)
    return p - lr * m_hat / (jnp.sqrt(v_hat) + EPSILON)


def make_step(jax, args, workload, dtype):
    """The jitted training step (or the inference function) over (tables, dense)."""
    jnp = jax.numpy
    tree_map = jax.tree_util.tree_map

    if not workload.train:
        def infer(params, inputs):
            ids, _ = workload.batch(jax, None, inputs)
            return workload.forward(jax, params[0], params[1], ids, dtype)
        return jax.jit(infer)

    def loss_fn(params, ids, labels, scale):
        logits = workload.forward(jax, params[0], params[1], ids, dtype).astype(jnp.float32)
        loss = jnp.mean(jnp.maximum(logits, 0) - logits * labels
                        + jnp.log1p(jnp.exp(-jnp.abs(logits))))
        return loss * scale, loss

    def train_step(params, moments, state, inputs):
        key, step, scale, good_steps = state
        key, sub = jax.random.split(key)
        ids, labels = workload.batch(jax, sub, inputs)
        grads, loss = jax.grad(loss_fn, has_aux=True)(params, ids, labels, scale)
        grads = tree_map(lambda g: g / scale, grads)
        finite = jnp.all(jnp.array([jnp.all(jnp.isfinite(g))
                                    for g in jax.tree_util.tree_leaves(grads)]))
        step = step + finite.astype(jnp.int32)
        t = jnp.maximum(step, 1).astype(jnp.float32)
        (m_tables, v_tables), (m_dense, v_dense) = moments
        tables, dense = params
        # Lazy Adam on the tables: only rows this step looked up change.
        new_tables, new_m_tables, new_v_tables = {}, {}, {}
        for name, ids_of in workload.lookups(ids).items():
            touched = jnp.zeros((tables[name].shape[0], 1), bool).at[ids_of].set(True)
            m, v = adam_moments(jnp, m_tables[name], v_tables[name], grads[0][name])
            p = adam_step(jnp, tables[name], m, v, t, args.lr)
            new_m_tables[name] = jnp.where(touched, m, m_tables[name])
            new_v_tables[name] = jnp.where(touched, v, v_tables[name])
            new_tables[name] = jnp.where(touched, p, tables[name])
        new_m_dense = tree_map(lambda m, g: BETA1 * m + (1 - BETA1) * g, m_dense, grads[1])
        new_v_dense = tree_map(lambda v, g: BETA2 * v + (1 - BETA2) * g * g, v_dense, grads[1])
        new_dense = tree_map(lambda p, m, v: adam_step(jnp, p, m, v, t, args.lr), dense,
                             new_m_dense, new_v_dense)
        new = ((new_tables, new_dense),
               ((new_m_tables, new_v_tables), (new_m_dense, new_v_dense)))
        old = (params, moments)
        params, moments = tree_map(lambda a, b: jnp.where(finite, a, b), new, old)
        if args.precision == "fp16":
            grow = good_steps + 1 >= SCALE_GROWTH_INTERVAL
            scale = jnp.where(finite, jnp.where(grow, scale * 2, scale), scale / 2)
            good_steps = jnp.where(finite & ~grow, good_steps + 1, 0)
        return params, moments, (key, step, scale, good_steps), loss

    return jax.jit(train_step, donate_argnums=(0, 1))


def prepare(jax, channel, args, device, dtype, input_named):
    """Builds the workload; returns (parameter count, compile) where compile() gives the
    (step, synchronize) pair protocol.measure takes."""
    jnp = jax.numpy
    workload = (Ncf if args.model == "ncf" else Word2Vec)(jax, channel, args, input_named)

    def compile_step():
        put = lambda tree: jax.device_put(tree, device)  # noqa: E731
        params = put((workload.params.tables, workload.params.dense))
        inputs = put(workload.inputs)
        step_fn = make_step(jax, args, workload, dtype)
        if not workload.train:
            compiled = step_fn.lower(params, inputs).compile()
            box = {"out": None}

            def infer_step():
                box["out"] = compiled(params, inputs)
                return None
            return infer_step, lambda: jax.block_until_ready(box)
        zeros = lambda tree: jax.tree_util.tree_map(jnp.zeros_like, tree)  # noqa: E731
        moments = put(((zeros(params[0]), zeros(params[0])), (zeros(params[1]), zeros(params[1]))))
        scale = 2.0 ** 16 if args.precision == "fp16" else 1.0
        state = put((jax.random.PRNGKey(args.seed + 11), jnp.int32(0), jnp.float32(scale),
                     jnp.int32(0)))
        compiled = step_fn.lower(params, moments, state, inputs).compile()
        box = {"params": params, "moments": moments, "state": state}

        def train_step():
            b = box
            b["params"], b["moments"], b["state"], loss = compiled(
                b["params"], b["moments"], b["state"], inputs)
            return loss
        return train_step, lambda: jax.block_until_ready(box)

    return workload.params.count(), compile_step
