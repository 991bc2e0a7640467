#!/usr/bin/env bash
# Creates benchmarks/.venv-peers with the peer libraries (sb3-contrib, Stable-Baselines3), kept out of
# the project's own environment: they are benchmark peers, never runtime dependencies.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .venv-peers
. .venv-peers/bin/activate
pip install -q torch==2.13.0
pip install -q "stable-baselines3==2.9.2" "sb3-contrib==2.9.2" gymnasium tqdm rich "popgym>=1.0.7"
python -c "import sb3_contrib, stable_baselines3; print('peers:', 'sb3', stable_baselines3.__version__, 'sb3-contrib', sb3_contrib.__version__)"
