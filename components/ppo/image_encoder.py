"""``ImageEncoder``: a small CNN over the image part of the flat observation, ahead of the trunk.

The env side stays one flat ``"observation"`` vector (``EncodeObservation``), so keys,
primers, the sampler, GAE and checkpoints do not change; the encoder knows where the
image sits in that vector (``EncodeObservation.image_part()``), reshapes it to
``[C, H, W]``, runs the CNN and concatenates the features with the rest of the vector
(MiniGrid's direction one-hot, say). The trunk (LSTM, GRU or MLP) owns the encoder as
a submodule, so it runs in the collector, the loss and the GAE bootstrap alike.

Nets, by the shorter side of the image (``_conv_stack``): below 6 one 1x1 convolution per
cell; up to 16 (MiniGrid's 7x7 symbolic view) the three 2x2 convolutions of the MiniGrid
baselines (rl-starter-files); 17 to 35 (e.g. 32x32 pixels) a shallower strided stack
(4/2, 3/2, 3/1); from 36 the Nature-DQN stack (8/4, 4/2, 3/1), which needs 36. Custom because TorchRL's ``ConvNet`` takes
``[C, H, W]`` input, and here the image arrives flattened inside a longer vector.
"""
from __future__ import annotations

import torch
from torch import nn

from ..config_validation import UserError
from ..envs.observation_encoding import EncodeObservation
from ..envs.lookup import find_transform, obs_dim_of
from .dense_encoder import DenseEncoder

ENCODERS = ("auto", "flat", "cnn", "dense")


#: the shortest image side each conv stack takes (its convolutions leave at least one cell)
NATURE_MIN_SIDE, MID_MIN_SIDE, GRID_MIN_SIDE = 36, 17, 6


def _conv_stack(c: int, h: int, w: int) -> nn.Sequential:
    """The convolutions for a ``c x h x w`` image, chosen by its shorter side."""
    side = min(h, w)
    if side < GRID_MIN_SIDE:  # too small for the 2x2 stack: one 1x1 convolution per cell
        return nn.Sequential(nn.Conv2d(c, 16, 1), nn.ReLU(), nn.Flatten())
    if side < MID_MIN_SIDE:
        return nn.Sequential(
            nn.Conv2d(c, 16, 2), nn.ReLU(), nn.MaxPool2d(2, ceil_mode=True),
            nn.Conv2d(16, 32, 2), nn.ReLU(), nn.Conv2d(32, 64, 2), nn.ReLU(), nn.Flatten(),
        )
    if side < NATURE_MIN_SIDE:
        return nn.Sequential(
            nn.Conv2d(c, 32, 4, 2), nn.ReLU(), nn.Conv2d(32, 64, 3, 2), nn.ReLU(), nn.Conv2d(64, 64, 3, 1), nn.ReLU(), nn.Flatten(),
        )
    return nn.Sequential(
        nn.Conv2d(c, 32, 8, 4), nn.ReLU(), nn.Conv2d(32, 64, 4, 2), nn.ReLU(), nn.Conv2d(64, 64, 3, 1), nn.ReLU(), nn.Flatten(),
    )


class ImageEncoder(nn.Module):
    """A small CNN over the image entry inside the encoded observation vector, with the other
    entries passed through beside its features (``--encoder cnn``; the layers follow the image's
    shorter side, so any size from 1 px works).

    Args:
        in_dim: width of the encoded observation vector.
        offset: where the flattened image starts in it.
        shape: the image's shape, channels last (HxWxC) or first.
        device: where the layers live.
    """

    def __init__(self, in_dim: int, offset: int, shape: tuple[int, int, int], device: torch.device | str = "cpu"):
        super().__init__()
        # channels last (HxWxC: MiniGrid, gymnasium pixels) unless the first side looks like channels
        self.channels_last = shape[-1] <= 4 or shape[0] > 4
        h, w, c = shape if self.channels_last else (shape[1], shape[2], shape[0])
        self.in_dim, self.offset, self.shape = in_dim, offset, tuple(shape)
        self.size = h * w * c
        self.cnn = _conv_stack(c, h, w).to(device)
        with torch.no_grad():
            features = self.cnn(torch.zeros(1, c, h, w, device=device)).shape[-1]
        self.out_dim = features + in_dim - self.size

    def describe(self) -> str:
        shape = "x".join(map(str, self.shape))
        return f"policy input: cnn(image {shape}) -> {self.out_dim - (self.in_dim - self.size)} features + {self.in_dim - self.size} other entries = {self.out_dim}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lead = x.shape[:-1]
        flat = x.reshape(-1, x.shape[-1])
        image = flat[:, self.offset : self.offset + self.size].reshape(-1, *self.shape)
        if self.channels_last:
            image = image.permute(0, 3, 1, 2)
        rest = torch.cat([flat[:, : self.offset], flat[:, self.offset + self.size :]], -1)
        return torch.cat([self.cnn(image), rest], -1).reshape(*lead, self.out_dim)


def make_input_encoder(choice: str, env, device: torch.device | str = "cpu", dense_size: int = 128) -> nn.Module | None:
    """The encoder ``choice`` ('auto', 'flat', 'cnn', 'dense') asks for on ``env``: a CNN when the
    observation holds an image ('auto': whenever it does), POPGym's ``DenseEncoder`` ('dense',
    ``dense_size`` wide), else None (the flat vector as is)."""
    if choice not in ENCODERS:
        raise UserError(f"encoder {choice!r} (accepted: {', '.join(ENCODERS)})")
    if choice == "dense":
        return DenseEncoder(obs_dim_of(env), dense_size, device)
    encoder = find_transform(env, EncodeObservation)
    image = None if encoder is None else encoder.image_part()
    if choice == "cnn" and image is None:
        shown = getattr(env, "observation_description", "a flat vector")
        raise UserError(f"--encoder cnn needs an image observation (a Box of shape HxWxC), got {shown} (accepted here: auto, flat, dense)")
    if choice == "flat" or image is None:
        return None
    offset, shape = image
    return ImageEncoder(obs_dim_of(env), offset, shape, device)
