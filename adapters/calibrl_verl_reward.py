"""The reward of a calibrl episode for verl before 0.8: custom_reward_function.

Used with calibrl_verl_v07.py (verl's interactions). On verl 0.8 and later
calibrl_verl_agent_loop.py reports the episode's reward itself
(AgentLoopOutput.reward_score) and needs no reward function.

Written against verl at b178a3c (volcengine/verl). verl scores a rollout
after it ends, with custom_reward_function.{path,name} loaded by
verl/trainer/ppo/reward.py get_custom_reward_fn, and called by the reward
loop (verl/experimental/reward_loop/reward_manager/naive.py
NaiveRewardManager.run_single; reward_model.use_reward_loop, on by default)
as compute_score(data_source=..., solution_str=..., ground_truth=...,
extra_info=...). The reward loop merges the agent loop's extra fields
into extra_info, so extra_info["turn_scores"] holds what CalibrlInteraction
returned each turn: 0 until the episode ends, then the task's reward. Their
sum is the episode's reward, the one `calibrl eval` reports for the same
conversation.

Rows whose data_source does not start with "calibrl/" go to verl's own
default_compute_score, so a calibrl dataset mixes with others; verl's
default scorer alone raises NotImplementedError on calibrl's rows, which
is why this function must be configured (recipe/calibrl_verl_v07 does it).
"""

DATA_SOURCE_PREFIX = "calibrl/"  # export.DataSourcePrefix


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    if not str(data_source).startswith(DATA_SOURCE_PREFIX):
        from verl.utils.reward_score import default_compute_score

        return default_compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)
    scores = (extra_info or {}).get("turn_scores")
    if scores is None:
        raise ValueError(
            f"calibrl: no turn_scores in extra_info for {data_source}: the reward needs verl's reward loop "
            "(reward_model.use_reward_loop=True) and the calibrl interaction (multi_turn.interaction_config_path)"
        )
    return float(sum(float(s) for s in scores))
