"""NCF (NeuMF) in PyTorch, the PyTorch way, for pytorch_worker.py: the architecture, data and
optimizers of dlbench's ncf (engine/models/ncf_model.cc), so the two measure the same work.

  - model: GMF (64-wide user and item embeddings, multiplied) beside an MLP (128-wide user and
    item embeddings, concatenated, through 256 -> 256 -> 128 -> 64 with ReLUs), both
    concatenated into one linear logit: 1,978,305 parameters at MovieLens-1M's 6,040 users and
    3,706 items. The four tables are nn.Embedding(sparse=True), initialized N(0, 0.01).
  - training: the inputs are P positive (user, item) pairs drawn once from --inputs'
    distributions (items Zipf-skewed); each step samples B - P negatives on the device (a
    uniform item for positive j % P's user, torch.randint), as dlbench and NVIDIA's reference
    do; binary cross-entropy with logits; Adam on the dense layers and SparseAdam on the
    tables, both at the run's learning rate.
  - inference: scores the B pairs of --inputs under torch.no_grad().
  - precision: autocast as for the image models (the tables stay f32: autocast does not cast
    embedding lookups); fp16 with GradScaler, which unscales the sparse gradients too.
"""

from pytorch_ids import draw


class NeuMF:
    """Builds the torch module lazily so this file imports without torch."""

    @staticmethod
    def build(torch, users, items, factors=64, layers=(256, 256, 128, 64)):
        nn = torch.nn

        class Module(nn.Module):
            def __init__(self):
                super().__init__()
                self.gmf_user = nn.Embedding(users, factors, sparse=True)
                self.gmf_item = nn.Embedding(items, factors, sparse=True)
                self.mlp_user = nn.Embedding(users, layers[0] // 2, sparse=True)
                self.mlp_item = nn.Embedding(items, layers[0] // 2, sparse=True)
                mlp = []
                for width_in, width_out in zip(layers[:-1], layers[1:]):
                    mlp += [nn.Linear(width_in, width_out), nn.ReLU()]
                self.mlp = nn.Sequential(*mlp)
                self.predict = nn.Linear(factors + layers[-1], 1)
                for table in (self.gmf_user, self.gmf_item, self.mlp_user, self.mlp_item):
                    nn.init.normal_(table.weight, std=0.01)

            def forward(self, user, item):
                gmf = self.gmf_user(user) * self.gmf_item(item)
                mlp = self.mlp(torch.cat([self.mlp_user(user), self.mlp_item(item)], dim=1))
                return self.predict(torch.cat([gmf, mlp], dim=1))

        return Module()


class Workload:
    """What pytorch_worker.py's step needs: the module, its inputs, the loss, the optimizers."""

    def __init__(self, torch, channel, args, device, input_named):
        users_spec = input_named(channel, args, "users")
        items_spec = input_named(channel, args, "items")
        self.torch = torch
        self.users = users_spec["distribution"]["high"]
        self.items = items_spec["distribution"]["high"]
        self.module = NeuMF.build(torch, self.users, self.items)
        self.train = args.mode == "train"
        generator = torch.Generator().manual_seed(args.seed)
        self.user_ids = draw(torch, users_spec, device, generator)
        self.item_ids = draw(torch, items_spec, device, generator)
        positives = self.user_ids.shape[0]
        if self.train and not 0 < positives <= args.batch:
            channel.fail("usage", f"ncf: {positives} positives for a batch of {args.batch}")
        self.batch = args.batch
        self.device = device
        negatives = args.batch - positives
        self.labels = torch.cat([torch.ones(positives, 1), torch.zeros(negatives, 1)]).to(device)
        self.negative_users = self.user_ids[torch.arange(negatives, device=device) % positives] \
            if negatives else self.user_ids[:0]
        self.channels_last = False

    def optimizers(self, args):
        torch = self.torch
        tables = [p for name, p in self.module.named_parameters() if name.endswith("_user.weight")
                  or name.endswith("_item.weight")]
        dense = [p for name, p in self.module.named_parameters()
                 if not (name.endswith("_user.weight") or name.endswith("_item.weight"))]
        return [torch.optim.Adam(dense, lr=args.lr), torch.optim.SparseAdam(tables, lr=args.lr)]

    def loss(self, model):
        """One forward (and the loss in training): negatives drawn afresh on the device."""
        torch = self.torch
        if not self.train:
            model(self.user_ids, self.item_ids)
            return None
        negatives = self.negative_users.shape[0]
        sampled = torch.randint(0, self.items, (negatives,), device=self.device)
        user = torch.cat([self.user_ids, self.negative_users])
        item = torch.cat([self.item_ids, sampled])
        logits = model(user, item)
        return torch.nn.functional.binary_cross_entropy_with_logits(logits.float(), self.labels)
