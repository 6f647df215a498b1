"""Integer id inputs for the PyTorch peers of the embedding models (pytorch_ncf.py,
pytorch_word2vec.py): tensors drawn from the distributions dlbench's --inputs names."""


def zipf(torch, low, high, exponent, count, device, generator):
    """Ids in [low, high), id low + k drawn with weight (k + 1)^-exponent."""
    ranks = torch.arange(1, high - low + 1, dtype=torch.float64)
    weights = ranks.pow(-exponent)
    drawn = torch.multinomial(weights, count, replacement=True, generator=generator)
    return (low + drawn).to(device=device, dtype=torch.int64)


def draw(torch, spec, device, generator):
    """A tensor for one --inputs entry of integer ids."""
    d = spec["distribution"]
    count = 1
    for n in spec["shape"]:
        count *= n
    if d["kind"] == "zipf":
        values = zipf(torch, d["low"], d["high"], d["exponent"], count, device, generator)
    else:
        values = torch.randint(d["low"], d["high"], (count,), generator=generator).to(device)
    return values.reshape(spec["shape"])
