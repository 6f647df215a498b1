"""dlbench peer: the native workloads in PyTorch (torch + torchvision), the PyTorch way.

Protocol and timing rules: protocol.py. What this worker builds, to match dlbench's engine:
  - resnet50: torchvision resnet50 (v1.5: stride in the 3x3 convolution), 25,557,032
    parameters; with --input 32 the CIFAR-10 variant: a 3x3 stride-1 stem, no max-pool,
    10 classes (23,520,842 parameters).
  - vgg16: torchvision vgg16 without dropout (dlbench's VGG16 has none; dropout changes no
    parameter count but adds work), 138,357,544 parameters at 224x224.
  - ncf: NeuMF with sparse embedding tables, its negatives sampled on the device each step
    (pytorch_ncf.py says how it matches dlbench's).
  - word2vec (and its variants word2vec-d300, word2vec-neg64): skip-gram with sparse input and
    output tables, negatives drawn on the device each step (pytorch_word2vec.py says how it
    matches dlbench's).
  - unet: the 2D U-Net with batch norm on synthetic segmentation scenes, cross-entropy plus
    soft Dice (pytorch_unet.py says how it matches dlbench's), 31,035,651 parameters.
  - unet3d: MLPerf's 3D U-Net with instance norm on synthetic blob volumes, the same losses
    (pytorch_unet3d.py), 31,189,443 parameters.
  - bert-base, bert-large: BERT pretraining (masked LM over every position plus next sentence)
    in Hugging Face's BertForPreTraining layout from torch's own modules and
    scaled_dot_product_attention, AdamW, on one synthetic pretraining batch (pytorch_bert.py
    says how it matches dlbench's): 110,106,428 and 336,226,108 parameters in training, the
    encoder and pooler alone in inference (109,482,240 and 335,141,888).
  - transformer: Transformer-big translation (fairseq's post-LN transformer_vaswani_wmt_en_de_big,
    one 32,000-id table tied across both embeddings and the output), its three attentions by
    scaled_dot_product_attention, label-smoothed cross-entropy, Adam, on one synthetic batch of
    sentence pairs (pytorch_transformer.py says how it matches dlbench's): 209,125,376
    parameters; inference scores the given target (teacher forcing).
  - gnmt: GNMT v2 (nn.LSTM on cuDNN, the first encoder layer bidirectional over packed source
    sentences, normalized Bahdanau attention, label-smoothed cross-entropy, Adam with gradients
    clipped at norm 5) on one synthetic batch of sentence pairs (pytorch_gnmt.py says how it
    matches dlbench's): 160,671,297 parameters; inference decodes greedily.
  - data: one synthetic batch of standard-normal images and uniform labels, generated once on
    the device, reused every step (dlbench's synthetic source does the same).
  - precision: fp32 = strict fp32 (TF32 off in cuBLAS and cuDNN); tf32 = TF32 on; fp16 =
    torch.autocast(float16) + GradScaler, channels-last; bf16 = torch.autocast(bfloat16),
    channels-last. cudnn.benchmark on (PyTorch's autotuner, as dlbench measures algorithms).
  - training (image models): cross-entropy, SGD with the run's lr and momentum,
    zero_grad(set_to_none=True).
  - inference: model.eval() under torch.no_grad().
  - --compile (`dlbench run --framework pytorch-compile`): the model under torch.compile
    (inductor, default mode), as users who care about speed run PyTorch. One step runs before
    the warm-up and compiles; its wall time is reported as compile_seconds.
"""

import sys
import time

import protocol
import pytorch_bert
import pytorch_gnmt
import pytorch_ncf
import pytorch_transformer
import pytorch_unet
import pytorch_unet3d
import pytorch_word2vec


# The models whose workload is not an image classifier (torchvision's), by name.
WORKLOADS = {"ncf": pytorch_ncf.Workload, "unet": pytorch_unet.Workload,
             "unet3d": pytorch_unet3d.Workload,
             pytorch_transformer.MODEL: pytorch_transformer.Workload,
             pytorch_gnmt.MODEL: pytorch_gnmt.Workload}
WORKLOADS.update({name: pytorch_word2vec.Workload for name in pytorch_word2vec.VARIANTS})
WORKLOADS.update({name: pytorch_bert.Workload for name in pytorch_bert.VARIANTS})
MODELS = ("resnet50", "vgg16") + tuple(WORKLOADS)


def build_model(torch, torchvision, args, classes):
    nn = torch.nn
    if args.model == "resnet50":
        model = torchvision.models.resnet50(num_classes=classes)
        if args.input == 32:
            model.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
            model.maxpool = nn.Identity()
        return model
    model = torchvision.models.vgg16(num_classes=classes)
    layers = [nn.Identity() if isinstance(m, nn.Dropout) else m for m in model.classifier]
    # dlbench flattens the last feature map as it is (7x7 at 224); torchvision's adaptive
    # pooling to 7x7 is the identity there and would change the classifier elsewhere.
    side = args.input // 32
    layers[0] = nn.Linear(512 * side * side, 4096)
    model.classifier = nn.Sequential(*layers)
    model.avgpool = nn.Identity()
    return model


def configure_precision(torch, precision):
    tf32 = precision != "fp32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    amp = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)
    return amp


def device_name(torch, device):
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    import platform
    return platform.processor() or platform.machine()


class ImageWorkload:
    """An image classifier on one synthetic batch: what the step needs (pytorch_ncf.Workload
    is the recommender's)."""

    def __init__(self, torch, torchvision, channel, args, device, channels_last):
        self.torch = torch
        classes = protocol.classes(channel, args)
        self.module = build_model(torch, torchvision, args, classes)
        self.channels_last = channels_last
        memory_format = torch.channels_last if channels_last else torch.contiguous_format
        self.images = torch.randn(args.batch, 3, args.input, args.input, device=device)
        self.images = self.images.contiguous(memory_format=memory_format)
        self.labels = torch.randint(0, classes, (args.batch,), device=device)
        self.train = args.mode == "train"

    def optimizers(self, args):
        return [self.torch.optim.SGD(self.module.parameters(), lr=args.lr,
                                     momentum=args.momentum)]

    def loss(self, model):
        out = model(self.images)
        return self.torch.nn.functional.cross_entropy(out, self.labels) if self.train else None


def run(channel, args):
    protocol.check_model(channel, args, MODELS)
    torch = protocol.require(channel, "torch")
    own = WORKLOADS.get(args.model)
    torchvision = None if own else protocol.require(channel, "torchvision")
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        channel.fail("usage", f"torch {torch.__version__} sees no CUDA device "
                              f"(torch.version.cuda = {torch.version.cuda})")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    torch.manual_seed(args.seed)
    amp = configure_precision(torch, args.precision)

    if own:
        workload = own(torch, channel, args, device, protocol.input_named)
    else:
        workload = ImageWorkload(torch, torchvision, channel, args, device, amp is not None)
    model = workload.module
    parameters = sum(p.numel() for p in model.parameters())
    channel.send("hello", protocol=protocol.PROTOCOL, framework="pytorch",
                 versions=protocol.versions(
                     pytorch=torch.__version__,
                     torchvision=torchvision.__version__ if torchvision else None,
                     cuda=torch.version.cuda,
                     cudnn=torch.backends.cudnn.version() if device.type == "cuda" else None),
                 device=device_name(torch, device), parameters=parameters)
    protocol.check_parameters(channel, args, parameters)

    # A workload of volumes names its own (channels-last-3d); the others are images or none.
    memory_format = getattr(workload, "memory_format", None)
    if memory_format is None:
        memory_format = torch.channels_last if workload.channels_last else torch.contiguous_format
    model = model.to(device, memory_format=memory_format)
    # A workload that infers from weights in the compute dtype (GNMT's decoding, as NVIDIA's
    # translate.py runs fp16): autocast would cast every weight at every call of the loop.
    if args.mode == "infer" and amp is not None and getattr(workload, "half_inference", False):
        model = model.to(amp)
    if args.compile:
        model = torch.compile(model)
    train = args.mode == "train"
    optimizers = workload.optimizers(args)
    scaler = torch.amp.GradScaler(device.type, enabled=args.precision == "fp16")

    def step():
        with torch.autocast(device.type, dtype=amp or torch.float32, enabled=amp is not None):
            loss = workload.loss(model)
        if train:
            for optimizer in optimizers:
                optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            clip = getattr(workload, "max_grad_norm", None)
            if clip:  # PyTorch's AMP recipe: unscale, then clip the true gradients' norm
                for optimizer in optimizers:
                    scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            for optimizer in optimizers:
                scaler.step(optimizer)
            scaler.update()
            return loss.detach()
        return None

    def synchronize():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    model.train(train)
    compile_seconds = None
    with torch.enable_grad() if train else torch.no_grad():
        if args.compile:
            start = time.perf_counter()
            step()
            synchronize()
            compile_seconds = time.perf_counter() - start
        # The peak counts the measured steps, not the warm-up's autotuning workspaces.
        for _ in range(args.warmup):
            step()
        synchronize()
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        warmed = argparse_copy(args, warmup=0)
        decodes = not train and hasattr(workload, "translated")
        if decodes:
            workload.translated = 0  # count the measured steps' translations only
        summary = protocol.measure(channel, warmed, step, synchronize)
        if decodes:
            summary["translated_tokens"] = float(workload.translated)
        elif getattr(workload, "tokens_per_step", None) is not None:
            summary["tokens_per_step"] = float(workload.tokens_per_step)
    if device.type == "cuda":
        summary["peak_memory_bytes"] = torch.cuda.max_memory_allocated(device)
    if compile_seconds is not None:
        summary["compile_seconds"] = compile_seconds
    channel.send("summary", **summary)


def argparse_copy(args, **changes):
    copy = type(args)(**vars(args))
    for k, v in changes.items():
        setattr(copy, k, v)
    return copy


def main():
    protocol.run_worker("pytorch", run, ("out of memory",))


if __name__ == "__main__":
    sys.exit(main())
