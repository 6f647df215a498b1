"""dlbench peer: the native workloads in JAX, written in plain jax.numpy / jax.lax.

Plain JAX rather than Flax: the layers are few (convolution, batch norm, pooling, dense), a
hand-written model needs nothing beyond `jax`, and the parameter layout is explicit, so the
count is checked against dlbench's exactly. Protocol and timing rules: protocol.py.

  - layout NHWC (dlbench's and XLA's preferred one on GPUs), weights HWIO.
  - resnet50: v1.5 (stride in the 3x3 convolution), 25,557,032 parameters; --input 32: the
    CIFAR-10 variant (3x3 stride-1 stem, no max-pool, 10 classes). Batch norm uses batch
    statistics in training and updates running statistics, like PyTorch's and dlbench's.
  - vgg16: 13 convolutions with bias, 3 dense layers, no dropout, 138,357,544 parameters.
  - ncf, word2vec (and its variants): jax_embedding.py says how they match dlbench's.
  - data: one synthetic batch (standard-normal images, uniform labels) made on the device.
  - precision: fp32 = matmul/conv precision "highest" (no TF32); tf32 = "tensorfloat32";
    fp16 and bf16 = compute-dtype policy: fp32 master parameters cast to the compute dtype in
    the step, loss and optimizer in fp32; fp16 adds dynamic loss scaling (skip the update and
    halve the scale on non-finite gradients, double it after 2000 good steps).
  - training: softmax cross-entropy, SGD with momentum (PyTorch's form: v = m v + g,
    p -= lr v), one jax.jit-compiled step, parameters and optimizer state donated. The step
    is compiled ahead of time, so no measured or warm-up step pays for compilation.
"""

import sys

import jax_embedding
import protocol

RESNET_STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))
VGG_CONVS = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
             512, 512, 512, "M")
BN_EPS = 1e-5
BN_MOMENTUM = 0.1
SCALE_GROWTH_INTERVAL = 2000


class Builder:
    """Creates parameters (He-normal convolutions) and the matching batch-norm state."""

    def __init__(self, jax, seed):
        self.jax = jax
        self.key = jax.random.PRNGKey(seed)
        self.params = {}
        self.state = {}

    def _next(self):
        self.key, sub = self.jax.random.split(self.key)
        return sub

    def conv(self, name, k, cin, cout, bias=False):
        jnp = self.jax.numpy
        std = (2.0 / (k * k * cin)) ** 0.5
        self.params[name] = {"w": std * self.jax.random.normal(self._next(), (k, k, cin, cout))}
        if bias:
            self.params[name]["b"] = jnp.zeros((cout,))

    def bn(self, name, c):
        jnp = self.jax.numpy
        self.params[name] = {"gamma": jnp.ones((c,)), "beta": jnp.zeros((c,))}
        self.state[name] = {"mean": jnp.zeros((c,)), "var": jnp.ones((c,))}

    def dense(self, name, cin, cout):
        std = (1.0 / cin) ** 0.5
        self.params[name] = {"w": std * self.jax.random.normal(self._next(), (cin, cout)),
                             "b": self.jax.numpy.zeros((cout,))}


def build_resnet50(b, args, classes):
    cifar = args.input == 32
    b.conv("stem", 3 if cifar else 7, 3, 64)
    b.bn("stem_bn", 64)
    cin = 64
    for s, (width, blocks, _) in enumerate(RESNET_STAGES):
        for i in range(blocks):
            p = f"s{s}b{i}"
            b.conv(p + "c1", 1, cin, width)
            b.bn(p + "n1", width)
            b.conv(p + "c2", 3, width, width)
            b.bn(p + "n2", width)
            b.conv(p + "c3", 1, width, 4 * width)
            b.bn(p + "n3", 4 * width)
            if i == 0:
                b.conv(p + "down", 1, cin, 4 * width)
                b.bn(p + "down_bn", 4 * width)
            cin = 4 * width
    b.dense("fc", cin, classes)


def build_vgg16(b, args, classes):
    cin = 3
    for i, c in enumerate(VGG_CONVS):
        if c != "M":
            b.conv(f"conv{i}", 3, cin, c, bias=True)
            cin = c
    side = args.input // 32
    b.dense("fc0", 512 * side * side, 4096)
    b.dense("fc1", 4096, 4096)
    b.dense("fc2", 4096, classes)


class Layers:
    """NHWC layers over a parameter dict; batch norm collects its new running statistics."""

    def __init__(self, jax, params, state, train, dtype):
        self.jax, self.lax, self.jnp = jax, jax.lax, jax.numpy
        self.params, self.state, self.train, self.dtype = params, state, train, dtype
        self.new_state = {}

    def conv(self, name, x, stride=1):
        w = self.params[name]["w"].astype(self.dtype)
        k = w.shape[0]
        pad = ((k // 2, k // 2), (k // 2, k // 2))
        y = self.lax.conv_general_dilated(x, w, (stride, stride), pad,
                                          dimension_numbers=("NHWC", "HWIO", "NHWC"))
        if "b" in self.params[name]:
            y = y + self.params[name]["b"].astype(self.dtype)
        return y

    def bn(self, name, x):
        jnp = self.jnp
        p, s = self.params[name], self.state[name]
        if self.train:
            x32 = x.astype(jnp.float32)
            mean = jnp.mean(x32, axis=(0, 1, 2))
            var = jnp.var(x32, axis=(0, 1, 2))
            n = x.shape[0] * x.shape[1] * x.shape[2]
            self.new_state[name] = {
                "mean": (1 - BN_MOMENTUM) * s["mean"] + BN_MOMENTUM * mean,
                "var": (1 - BN_MOMENTUM) * s["var"] + BN_MOMENTUM * var * n / (n - 1)}
        else:
            mean, var = s["mean"], s["var"]
        scale = p["gamma"] * self.lax.rsqrt(var + BN_EPS)
        shift = p["beta"] - mean * scale
        return x * scale.astype(self.dtype) + shift.astype(self.dtype)

    def dense(self, name, x):
        p = self.params[name]
        return x @ p["w"].astype(self.dtype) + p["b"].astype(self.dtype)

    def max_pool(self, x, window, stride, pad):
        return self.lax.reduce_window(x, -self.jnp.inf, self.lax.max, (1, window, window, 1),
                                      (1, stride, stride, 1),
                                      ((0, 0), (pad, pad), (pad, pad), (0, 0)))


def resnet50_forward(L, x, cifar):
    relu = L.jax.nn.relu
    x = relu(L.bn("stem_bn", L.conv("stem", x, 1 if cifar else 2)))
    if not cifar:
        x = L.max_pool(x, 3, 2, 1)
    for s, (_, blocks, stride) in enumerate(RESNET_STAGES):
        for i in range(blocks):
            p = f"s{s}b{i}"
            st = stride if i == 0 else 1
            y = relu(L.bn(p + "n1", L.conv(p + "c1", x)))
            y = relu(L.bn(p + "n2", L.conv(p + "c2", y, st)))
            y = L.bn(p + "n3", L.conv(p + "c3", y))
            shortcut = L.bn(p + "down_bn", L.conv(p + "down", x, st)) if i == 0 else x
            x = relu(y + shortcut)
    x = L.jnp.mean(x, axis=(1, 2))
    return L.dense("fc", x)


def vgg16_forward(L, x, cifar):
    relu = L.jax.nn.relu
    for i, c in enumerate(VGG_CONVS):
        x = L.max_pool(x, 2, 2, 0) if c == "M" else relu(L.conv(f"conv{i}", x))
    x = x.reshape(x.shape[0], -1)
    x = relu(L.dense("fc0", x))
    x = relu(L.dense("fc1", x))
    return L.dense("fc2", x)


def pick_device(jax, channel, text):
    platform, _, index = text.partition(":")
    platform = {"cuda": "gpu"}.get(platform, platform)
    try:
        devices = jax.devices(platform)
    except RuntimeError as e:
        channel.fail("usage", f"jax {jax.__version__} has no {platform} backend ({e}); "
                              "install jax[cuda12] or jax[cuda13] for GPUs")
    i = int(index or 0)
    if i >= len(devices):
        channel.fail("usage", f"jax sees {len(devices)} {platform} device(s), not {text}")
    return devices[i]


def make_step(jax, args, forward, dtype):
    jnp = jax.numpy
    train = args.mode == "train"
    cifar = args.input == 32

    def loss_fn(params, state, images, labels, scale):
        L = Layers(jax, params, state, train, dtype)
        logits = forward(L, images.astype(dtype), cifar).astype(jnp.float32)
        logp = jax.nn.log_softmax(logits)
        loss = -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))
        return loss * scale, (loss, L.new_state)

    if not train:
        def infer(params, state, images):
            L = Layers(jax, params, state, False, dtype)
            return forward(L, images.astype(dtype), cifar)
        return jax.jit(infer)

    def train_step(params, velocity, state, scaler, images, labels):
        scale, good_steps = scaler
        grads, (loss, new_state) = jax.grad(loss_fn, has_aux=True)(params, state, images,
                                                                    labels, scale)
        grads = jax.tree_util.tree_map(lambda g: g / scale, grads)
        finite = jnp.all(jnp.array([jnp.all(jnp.isfinite(g))
                                    for g in jax.tree_util.tree_leaves(grads)]))
        new_velocity = jax.tree_util.tree_map(lambda v, g: args.momentum * v + g, velocity, grads)
        new_params = jax.tree_util.tree_map(lambda p, v: p - args.lr * v, params, new_velocity)
        keep = lambda new, old: jax.tree_util.tree_map(  # noqa: E731
            lambda a, b: jnp.where(finite, a, b), new, old)
        params, velocity = keep(new_params, params), keep(new_velocity, velocity)
        if args.precision == "fp16":
            grow = good_steps + 1 >= SCALE_GROWTH_INTERVAL
            scale = jnp.where(finite, jnp.where(grow, scale * 2, scale), scale / 2)
            good_steps = jnp.where(finite & ~grow, good_steps + 1, 0)
        return params, velocity, new_state, (scale, good_steps), loss

    return jax.jit(train_step, donate_argnums=(0, 1, 2))


MODELS = ("resnet50", "vgg16") + jax_embedding.MODELS


def prepare_image_model(jax, channel, args, device, dtype):
    """ResNet-50 or VGG16 on one synthetic batch: (parameter count, compile) as
    jax_embedding.prepare returns them."""
    jnp = jax.numpy
    classes = protocol.classes(channel, args)
    builder = Builder(jax, args.seed)
    (build_resnet50 if args.model == "resnet50" else build_vgg16)(builder, args, classes)
    forward = resnet50_forward if args.model == "resnet50" else vgg16_forward
    parameters = int(sum(x.size for x in jax.tree_util.tree_leaves(builder.params)))

    def compile_step():
        put = lambda tree: jax.device_put(tree, device)  # noqa: E731
        params, state = put(builder.params), put(builder.state)
        key = jax.random.PRNGKey(args.seed + 7)
        images = put(jax.random.normal(key, (args.batch, args.input, args.input, 3),
                                       jnp.float32))
        labels = put(jax.random.randint(jax.random.fold_in(key, 1), (args.batch,), 0, classes))
        step_fn = make_step(jax, args, forward, dtype)
        if args.mode == "train":
            velocity = put(jax.tree_util.tree_map(jnp.zeros_like, builder.params))
            initial_scale = 2.0 ** 16 if args.precision == "fp16" else 1.0
            scaler = put((jnp.float32(initial_scale), jnp.int32(0)))
            compiled = step_fn.lower(params, velocity, state, scaler, images, labels).compile()
            box = {"params": params, "velocity": velocity, "state": state, "scaler": scaler}

            def step():
                b = box
                b["params"], b["velocity"], b["state"], b["scaler"], loss = compiled(
                    b["params"], b["velocity"], b["state"], b["scaler"], images, labels)
                return loss
        else:
            compiled = step_fn.lower(params, state, images).compile()
            box = {"out": None}

            def step():
                box["out"] = compiled(params, state, images)
                return None
        return step, lambda: jax.block_until_ready(box)

    return parameters, compile_step


def run(channel, args):
    protocol.check_model(channel, args, MODELS)
    if args.compile:
        channel.fail("usage", "the JAX worker always compiles its step with XLA: there is no "
                              "separate compiled variant (run --framework jax)")
    jax = protocol.require(channel, "jax")
    jnp = jax.numpy
    if args.precision == "fp32":
        jax.config.update("jax_default_matmul_precision", "highest")
    elif args.precision == "tf32":
        jax.config.update("jax_default_matmul_precision", "tensorfloat32")
    dtype = {"fp16": jnp.float16, "bf16": jnp.bfloat16}.get(args.precision, jnp.float32)
    device = pick_device(jax, channel, args.device)

    if args.model in jax_embedding.MODELS:
        parameters, compile_step = jax_embedding.prepare(jax, channel, args, device, dtype,
                                                         protocol.input_named)
    else:
        parameters, compile_step = prepare_image_model(jax, channel, args, device, dtype)
    import jaxlib
    channel.send("hello", protocol=protocol.PROTOCOL, framework="jax",
                 versions=protocol.versions(jax=jax.__version__,
                                            jaxlib=getattr(jaxlib, "__version__", None)),
                 device=getattr(device, "device_kind", str(device)), parameters=parameters)
    protocol.check_parameters(channel, args, parameters)
    # Compiled ahead of time: no measured or warm-up step pays for compilation.
    step, synchronize = compile_step()

    summary = protocol.measure(channel, args, step, synchronize)
    stats = device.memory_stats() if hasattr(device, "memory_stats") else None
    if stats and "peak_bytes_in_use" in stats:
        summary["peak_memory_bytes"] = stats["peak_bytes_in_use"]
    channel.send("summary", **summary)


def main():
    protocol.run_worker("jax", run, ("RESOURCE_EXHAUSTED", "out of memory"))


if __name__ == "__main__":
    sys.exit(main())
