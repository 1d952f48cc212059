#!/usr/bin/env bash
# GRPO on calibrl's environments through `calibrl serve`, with calibrl's
# agent loop (verl 0.8 and later). Run on the trainer host with every
# `calibrl serve` replica listed in CALIBRL_URL (comma-separated) and the
# rows of create_dataset.py at TRAIN_FILES and VAL_FILES. Extra arguments
# are Hydra overrides. See docs/scale.md.
set -euxo pipefail

RECIPE_DIR="$(cd "$(dirname "$0")" && pwd)"
ADAPTERS_DIR="$(cd "$RECIPE_DIR/../.." && pwd)"  # calibrl_verl_agent_loop.py, calibrl_client.py
export PYTHONPATH="$ADAPTERS_DIR${PYTHONPATH:+:$PYTHONPATH}"
export CALIBRL_URL=${CALIBRL_URL:-http://127.0.0.1:8080}

MODEL=${MODEL:-Qwen/Qwen2.5-0.5B-Instruct}
TRAIN_FILES=${TRAIN_FILES:-$HOME/data/calibrl/train.jsonl}
VAL_FILES=${VAL_FILES:-$HOME/data/calibrl/val.jsonl}
NGPUS=${NGPUS:-8}

python3 -m verl.trainer.main_ppo \
    --config-path="$RECIPE_DIR/config" \
    --config-name=calibrl_agent_loop_grpo \
    data.train_files="$TRAIN_FILES" \
    data.val_files="$VAL_FILES" \
    actor_rollout_ref.rollout.agent.agent_loop_config_path="$RECIPE_DIR/config/agent.yaml" \
    actor_rollout_ref.model.path="$MODEL" \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.ppo_mini_batch_size=64 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 \
    actor_rollout_ref.actor.use_kl_loss=True \
    actor_rollout_ref.actor.kl_loss_coef=0.001 \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=1 \
    actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8 \
    trainer.logger='["console"]' \
    trainer.project_name=calibrl \
    trainer.experiment_name=qwen2.5-0.5b-calibrl-agent-loop \
    trainer.n_gpus_per_node="$NGPUS" \
    trainer.nnodes=1 \
    trainer.save_freq=-1 \
    trainer.test_freq=10 \
    trainer.total_epochs=1 "$@"
