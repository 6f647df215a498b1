"""U-Net in PyTorch, the PyTorch way, for pytorch_worker.py: the architecture, data and loss of
dlbench's unet (engine/models/unet_model.cc), so the two measure the same work.

  - model: four stages down (two 3x3 same-padded convolutions without bias, each followed by
    batch norm and ReLU, then a 2x2 max-pool), channels 64-128-256-512 and 1024 at the
    bottleneck; four stages up (a 2x2 stride-2 nn.ConvTranspose2d without bias, torch.cat with
    the matching encoder features, encoder features first, then the same two convolutions); a
    1x1 convolution with bias to the classes: 31,035,651 parameters at 3 classes.
  - data: one synthetic batch of segmentation scenes drawn once on the host and kept on the
    device, as dlbench's blob scenes are (engine/data/blobs.h): one to three ellipses of class 1
    per slice, inside each with even odds a smaller one of the next class, and so on; the image
    is the class map made visible, class - (classes - 1) / 2 plus N(0, 0.5) noise. Drawn by this
    worker's generator, so the scenes are alike in kind, not bit for bit.
  - training: per-pixel cross-entropy (mean over the pixels) plus soft Dice (per slice and class
    from class 1 on, the background left out, smoothing 1e-6 in numerator and denominator, the
    loss 1 - the mean), SGD with the run's lr and momentum, as dlbench's unet trains.
  - inference: model.eval() under torch.no_grad().
  - precision: as for the image models (autocast, GradScaler for fp16, channels-last).
"""


def scenes(torch, n, h, w, classes, generator):
    """Labels [n, h, w] (int64) and images [n, 1, h, w] (f32) of nested-ellipse scenes."""
    labels = torch.zeros(n, h, w, dtype=torch.int64)
    ys = torch.arange(h, dtype=torch.float64).view(h, 1)
    xs = torch.arange(w, dtype=torch.float64).view(1, w)

    def between(low, high):
        return low + (high - low) * torch.rand((), generator=generator, dtype=torch.float64).item()

    for s in range(n):
        plane = labels[s]
        for _ in range(1 + int(between(0.0, 3.0))):
            cy, cx = between(0.2, 0.8) * h, between(0.2, 0.8) * w
            ry, rx = max(1.0, between(0.08, 0.2) * h), max(1.0, between(0.08, 0.2) * w)
            c = 1
            while True:
                inside = ((ys - cy) / ry) ** 2 + ((xs - cx) / rx) ** 2 <= 1.0
                plane[inside & (plane == c - 1)] = c
                if c + 1 >= classes or between(0.0, 1.0) < 0.5:
                    break
                shrink = between(0.25, 0.5)
                cy, cx = cy + between(-0.4, 0.4) * ry, cx + between(-0.4, 0.4) * rx
                ry, rx, c = max(1.0, ry * shrink), max(1.0, rx * shrink), c + 1
    noise = torch.randn(n, 1, h, w, generator=generator)
    images = labels.unsqueeze(1).float() - (classes - 1) / 2 + 0.5 * noise
    return labels, images


class UNet:
    """Builds the torch module lazily so this file imports without torch."""

    @staticmethod
    def build(torch, in_channels, classes, channels=(64, 128, 256, 512, 1024)):
        nn = torch.nn

        def double_conv(c_in, c_out):
            layers = []
            for c in (c_in, c_out):
                layers += [nn.Conv2d(c, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out),
                           nn.ReLU(inplace=True)]
            return nn.Sequential(*layers)

        class Module(nn.Module):
            def __init__(self):
                super().__init__()
                widths = (in_channels,) + tuple(channels)
                self.down = nn.ModuleList(double_conv(widths[i], widths[i + 1])
                                          for i in range(len(channels)))
                self.pool = nn.MaxPool2d(2)
                stages = range(len(channels) - 1)
                self.upconv = nn.ModuleList(
                    nn.ConvTranspose2d(channels[i + 1], channels[i], 2, stride=2, bias=False)
                    for i in stages)
                self.up = nn.ModuleList(double_conv(2 * channels[i], channels[i]) for i in stages)
                self.head = nn.Conv2d(channels[0], classes, 1)

            def forward(self, x):
                skips = []
                for i, block in enumerate(self.down):
                    x = block(x)
                    if i + 1 < len(self.down):
                        skips.append(x)
                        x = self.pool(x)
                for i in reversed(range(len(self.up))):
                    x = self.up[i](torch.cat([skips[i], self.upconv[i](x)], dim=1))
                return self.head(x)

        return Module()


def soft_dice_loss(torch, scores, labels, classes, first_class=1, smooth=1e-6):
    """1 - the mean over samples and classes from first_class of (2 I + s) / (P + G + s), the
    sums over each sample's pixels (voxels)."""
    q = torch.softmax(scores.float(), dim=1)
    g = torch.nn.functional.one_hot(labels, classes).movedim(-1, 1).float()
    positions = tuple(range(2, scores.dim()))
    inter = (q * g).sum(dim=positions)
    dice = (2 * inter + smooth) / (q.sum(dim=positions) + g.sum(dim=positions) + smooth)
    return 1 - dice[:, first_class:].mean()


class Workload:
    """What pytorch_worker.py's step needs: the module, its inputs, the loss, the optimizers.
    Subclasses (pytorch_unet3d.py) change the module and the scenes."""

    name = "unet"

    @staticmethod
    def build_module(torch, in_channels, classes):
        return UNet.build(torch, in_channels, classes)

    @staticmethod
    def scenes(torch, n, spatial, classes, generator):
        return scenes(torch, n, *spatial, classes, generator)

    def __init__(self, torch, channel, args, device, input_named):
        images = input_named(channel, args, "images")
        labels = input_named(channel, args, "labels")
        distribution = labels["distribution"]
        if distribution.get("kind") != "blob_labels":
            channel.fail("usage", f"{self.name}: labels must be blob scenes, not {distribution}")
        shape = images["shape"]  # [n, (d,) h, w, channels]
        n, spatial, in_channels = shape[0], tuple(shape[1:-1]), shape[-1]
        self.torch = torch
        self.classes = int(distribution["classes"])
        self.module = self.build_module(torch, in_channels, self.classes)
        self.train = args.mode == "train"
        self.channels_last = args.precision in ("fp16", "bf16")
        generator = torch.Generator().manual_seed(args.seed)
        labels, images = self.scenes(torch, n, spatial, self.classes, generator)
        if in_channels != 1:
            images = images.expand(n, in_channels, *spatial)
        last = torch.channels_last if len(spatial) == 2 else torch.channels_last_3d
        self.memory_format = last if self.channels_last else torch.contiguous_format
        self.images = images.to(device).contiguous(memory_format=self.memory_format)
        self.labels = labels.to(device)
        self.class_weights = None  # every class weighs 1
        if args.class_weights is not None:
            if len(args.class_weights) != self.classes:
                channel.fail("usage", f"{self.name}: {len(args.class_weights)} class weights "
                                      f"for {self.classes} classes")
            self.class_weights = torch.tensor(args.class_weights, device=device)

    def optimizers(self, args):
        return [self.torch.optim.SGD(self.module.parameters(), lr=args.lr,
                                     momentum=args.momentum)]

    def loss(self, model):
        scores = model(self.images)
        if not self.train:
            return None
        torch = self.torch
        cross_entropy = torch.nn.functional.cross_entropy(scores, self.labels,
                                                          weight=self.class_weights)
        return cross_entropy + soft_dice_loss(torch, scores, self.labels, self.classes)
