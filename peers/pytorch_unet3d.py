"""3D U-Net in PyTorch, the PyTorch way, for pytorch_worker.py: the architecture, data and loss
of dlbench's unet3d (engine/models/unet3d_model.cc), MLPerf Training's KiTS19 model.

  - model: an input block of two 3x3x3 same-padded nn.Conv3d without bias, each followed by
    nn.InstanceNorm3d(affine=True) and ReLU, at 32 channels; four downsampling blocks (the first
    convolution at stride 2) to 64-128-256-320 and a stride-2 bottleneck at 320; five upsampling
    blocks (a 2x2x2 stride-2 nn.ConvTranspose3d without bias, torch.cat with the encoder's
    features of that size, upsampled features first, then two conv blocks); a 1x1x1 convolution
    with bias to the classes: 31,189,443 parameters at 3 classes (MLPerf's reference has 800
    more: biases on its transposed convolutions).
  - data: one synthetic batch of volumes drawn once on the host and kept on the device, as
    dlbench's blob volumes are (engine/data/blobs.h): one to three ellipsoids of class 1 per
    volume, inside each with even odds a smaller one of the next class; the image is the class
    map made visible, class - (classes - 1) / 2 plus N(0, 0.5) noise. Drawn by this worker's
    generator, so the volumes are alike in kind, not bit for bit.
  - training: per-voxel cross-entropy plus soft Dice (pytorch_unet.py's, per volume), SGD with
    the run's lr and momentum, as dlbench's unet3d trains.
  - precision: as for the image models (autocast, GradScaler for fp16, channels-last-3d).
"""

import pytorch_unet


def volume_scenes(torch, n, d, h, w, classes, generator):
    """Labels [n, d, h, w] (int64) and images [n, 1, d, h, w] (f32) of nested ellipsoids."""
    labels = torch.zeros(n, d, h, w, dtype=torch.int64)
    zs = torch.arange(d, dtype=torch.float32).view(d, 1, 1)
    ys = torch.arange(h, dtype=torch.float32).view(1, h, 1)
    xs = torch.arange(w, dtype=torch.float32).view(1, 1, w)

    def between(low, high):
        return low + (high - low) * torch.rand((), generator=generator, dtype=torch.float64).item()

    for s in range(n):
        volume = labels[s]
        for _ in range(1 + int(between(0.0, 3.0))):
            centre = [between(0.2, 0.8) * side for side in (d, h, w)]
            radii = [max(1.0, between(0.08, 0.2) * side) for side in (d, h, w)]
            c = 1
            while True:
                inside = (((zs - centre[0]) / radii[0]) ** 2 + ((ys - centre[1]) / radii[1]) ** 2
                          + ((xs - centre[2]) / radii[2]) ** 2) <= 1.0
                volume[inside & (volume == c - 1)] = c
                if c + 1 >= classes or between(0.0, 1.0) < 0.5:
                    break
                shrink = between(0.25, 0.5)
                centre = [x + between(-0.4, 0.4) * r for x, r in zip(centre, radii)]
                radii, c = [max(1.0, r * shrink) for r in radii], c + 1
    noise = torch.randn(n, 1, d, h, w, generator=generator)
    images = labels.unsqueeze(1).float() - (classes - 1) / 2 + 0.5 * noise
    return labels, images


def build_unet3d(torch, in_channels, classes, filters=(32, 64, 128, 256, 320)):
    nn = torch.nn

    def conv_block(c_in, c_out, stride):
        return [nn.Conv3d(c_in, c_out, 3, stride=stride, padding=1, bias=False),
                nn.InstanceNorm3d(c_out, affine=True), nn.ReLU(inplace=True)]

    def double_block(c_in, c_out, stride):
        return nn.Sequential(*conv_block(c_in, c_out, stride), *conv_block(c_out, c_out, 1))

    class Module(nn.Module):
        def __init__(self):
            super().__init__()
            self.input = double_block(in_channels, filters[0], 1)
            self.down = nn.ModuleList(double_block(filters[i - 1], filters[i], 2)
                                      for i in range(1, len(filters)))
            self.bottleneck = double_block(filters[-1], filters[-1], 2)
            ins = (filters[-1],) + tuple(reversed(filters[1:]))
            outs = tuple(reversed(filters))
            self.upconv = nn.ModuleList(nn.ConvTranspose3d(i, o, 2, stride=2, bias=False)
                                        for i, o in zip(ins, outs))
            self.up = nn.ModuleList(double_block(2 * o, o, 1) for o in outs)
            self.head = nn.Conv3d(filters[0], classes, 1)

        def forward(self, x):
            skips = [self.input(x)]
            for block in self.down:
                skips.append(block(skips[-1]))
            x = self.bottleneck(skips[-1])
            for upconv, block, skip in zip(self.upconv, self.up, reversed(skips)):
                x = block(torch.cat([upconv(x), skip], dim=1))
            return self.head(x)

    return Module()


class Workload(pytorch_unet.Workload):
    name = "unet3d"

    @staticmethod
    def build_module(torch, in_channels, classes):
        return build_unet3d(torch, in_channels, classes)

    @staticmethod
    def scenes(torch, n, spatial, classes, generator):
        return volume_scenes(torch, n, *spatial, classes, generator)
