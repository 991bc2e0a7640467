#!/usr/bin/env bash
# The CUDA check, one script, under 6 minutes on a GPU machine (H100/H200 class):
#   1. the test suite with tests' device set to CUDA (TORCHRL_MEMORY_TEST_DEVICE=cuda; pipelines default to CUDA)
#   2. tensor-native env throughput at 4k / 64k / 256k envs on CUDA
#   3. end-to-end recurrent PPO on CartPoleNoVel: steps/s and time to a greedy 475 (3 seeds), default
#      config and 1024 envs
#   4. DQN steps/s on CartPole-v1 (3 seeds)
# Usage (from anywhere, in the project's venv with a CUDA build of torch): bash benchmarks/gpu_check.sh
# Writes logs and JSON under $OUT when set (else benchmarks/results/gpu/).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-benchmarks/results/gpu}"
mkdir -p "$OUT"
python -c "import torch, sys; ok = torch.cuda.is_available(); print('cuda:', ok, torch.cuda.get_device_name(0) if ok else ''); sys.exit(0 if ok else 1)" || { echo "no CUDA device: nothing to check"; exit 1; }
step() { echo "== $1 ($(date +%T))"; }

step "tests on CUDA"
TORCHRL_MEMORY_TEST_DEVICE=cuda timeout 150 python -m pytest -q -x -p no:cacheprovider tests 2>&1 | tail -15 | tee "$OUT/tests_cuda.txt"

step "native env throughput"
timeout 60 python benchmarks/env_throughput.py --device cuda --sizes 4096 65536 262144 --budget 20000000 2>&1 | tail -5 | tee "$OUT/env_throughput.txt"

step "recurrent PPO end to end"
timeout 100 python benchmarks/ppo_learning.py --env CartPoleNoVel --steps 100000 --seeds 0 1 2 --arms lstm --name gpu_ppo_CartPoleNoVel -- --device cuda 2>&1 | tail -12 | tee "$OUT/ppo_default.txt"
timeout 60 python benchmarks/ppo_learning.py --env CartPoleNoVel --steps 1000000 --seeds 0 --arms lstm --eval-every 102400 --name gpu_ppo_CartPoleNoVel_1024envs -- --device cuda --num-envs 1024 --envs-per-minibatch 256 2>&1 | tail -12 | tee "$OUT/ppo_1024envs.txt"

step "DQN"
timeout 60 python benchmarks/dqn_learning.py --env CartPole-v1 --steps 50000 --seeds 0 1 2 --name gpu_dqn_CartPole-v1 -- --device cuda 2>&1 | tail -8 | tee "$OUT/dqn.txt"

cp benchmarks/results/env_throughput_cuda.json benchmarks/results/gpu_*.json "$OUT"/ 2>/dev/null
step "done: $OUT"
