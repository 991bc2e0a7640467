import pytest
import torch
from tensordict import TensorDict

from torchrl_memory import RecurrentMinibatchSampler
from torchrl_memory.keys import ACTION, ADVANTAGE, HIDDEN_C, HIDDEN_H, IS_INIT, LOG_PROB, MASK, OBS, VALUE, VALUE_TARGET

N, T = 6, 8


def _batch():
    env_id = torch.arange(N).reshape(N, 1).expand(N, T).float()
    step = torch.arange(T).reshape(1, T).expand(N, T).float()
    data = {k: torch.zeros(N, T, 1) for k in (VALUE, ADVANTAGE, VALUE_TARGET)}
    data.update(
        {
            OBS: torch.stack([env_id, step], -1),
            HIDDEN_H: (env_id * 100 + step).reshape(N, T, 1, 1).expand(N, T, 1, 4).clone(),
            HIDDEN_C: torch.zeros(N, T, 1, 4),
            IS_INIT: torch.zeros(N, T, 1, dtype=torch.bool),
            ACTION: torch.zeros(N, T, dtype=torch.long),
            LOG_PROB: torch.zeros(N, T),
        }
    )
    return TensorDict(data, batch_size=[N, T])


def test_every_env_exactly_once_per_epoch_with_short_last_minibatch():
    sampler = RecurrentMinibatchSampler(N, T, envs_per_minibatch=4, seed=0)
    for _ in range(3):
        mbs = list(sampler.epoch(_batch()))
        assert [mb.batch_size[0] for mb in mbs] == [4, 2]
        envs = torch.cat([mb[OBS][:, 0, 0] for mb in mbs]).long().tolist()
        assert sorted(envs) == list(range(N))
        for mb in mbs:  # whole trajectories, time order intact
            assert torch.equal(mb[OBS][:, :, 1], torch.arange(T).float().expand(mb.batch_size[0], T))
            assert mb[MASK].all()


def test_seeded_order_is_reproducible_and_reshuffled_each_epoch():
    def orders(seed):
        s = RecurrentMinibatchSampler(N, T, envs_per_minibatch=2, seed=seed)
        return [torch.cat([mb[OBS][:, 0, 0] for mb in s.epoch(_batch())]).tolist() for _ in range(4)]

    a, b = orders(7), orders(7)
    assert a == b
    assert len({tuple(o) for o in a}) > 1  # a fresh order each epoch
    assert orders(8) != a


def test_minibatches_are_the_seeded_permutation_in_order():
    """The epoch's single gather yields the same minibatches as indexing the rollout with each slice
    of ``randperm`` from the seeded generator (the order checkpoints and earlier runs rely on)."""
    sampler = RecurrentMinibatchSampler(N, T, envs_per_minibatch=4, seed=3)
    generator = torch.Generator()
    generator.manual_seed(3)
    batch = _batch()
    for _ in range(2):
        order = torch.randperm(N, generator=generator)
        mbs = list(sampler.epoch(batch))
        assert [mb[OBS][:, 0, 0].long().tolist() for mb in mbs] == [order[:4].tolist(), order[4:].tolist()]
        for mb, rows in zip(mbs, (order[:4], order[4:])):
            assert torch.equal(mb[HIDDEN_H], batch[HIDDEN_H][rows])


def test_chunks_start_from_their_stored_state():
    sampler = RecurrentMinibatchSampler(N, T, envs_per_minibatch=2, chunk_len=4, seed=0)
    mbs = list(sampler.epoch(_batch()))
    chunks = sum(mb.batch_size[0] for mb in mbs)
    assert chunks == N * T // 4
    for mb in mbs:
        assert mb.batch_size[1] == 4 and mb[MASK].shape == (mb.batch_size[0], 4, 1) and mb[MASK].all()
        env, start = mb[OBS][:, 0, 0].long(), mb[OBS][:, 0, 1].long()
        # first step of each chunk carries the state stored at that (env, t) during collection
        assert torch.equal(mb[HIDDEN_H][:, 0, 0, 0], (env * 100 + start).float())
        assert set(start.tolist()) <= {0, 4}


@pytest.mark.parametrize("chunk_len", [3, 0, 9])
def test_chunk_len_must_divide_the_window(chunk_len):
    with pytest.raises(ValueError, match="chunk_len"):
        RecurrentMinibatchSampler(N, T, envs_per_minibatch=2, chunk_len=chunk_len)


def test_envs_per_minibatch_range():
    with pytest.raises(ValueError, match=r"envs_per_minibatch=7 out of range \[1, 6\]"):
        RecurrentMinibatchSampler(N, T, envs_per_minibatch=7)
