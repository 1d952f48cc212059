"""calibrl's simulated user as a verl agent loop (verl 0.8 and later).

verl 0.8 deleted verl/interactions (verl-project/verl PR #6074), so the
BaseInteraction adapter (calibrl_verl_v07.py) no longer
loads there. In today's verl a simulated user is an agent loop: a subclass
of AgentLoopBase, registered under a name and picked per dataset row by the
row's agent_name. Written against verl-project/verl at 1dda039b9c63
(2026-08-22, version 0.10.0.dev), checked also for the APIs of v0.8.0 and
v0.9.0:

  - verl/experimental/agent_loop/agent_loop.py: AgentLoopWorker looks up
    the row's agent_name in _agent_loop_registry (filled by @register and
    by actor_rollout_ref.rollout.agent.agent_loop_config_path), builds one
    loop per row with hydra.utils.instantiate (the config entry's other
    keys become constructor keywords: base_url, user, ...), and awaits
    run(sampling_params, **row) with the row's dataset columns;
  - the loop returns AgentLoopOutput: prompt_ids, response_ids (every
    token after the prompt), response_mask (1 for the policy's tokens, 0
    for everything else), num_turns, reward_score, extra_fields. The worker
    pads the prompt left to rollout.prompt_length and the response right to
    rollout.response_length (it does not cut: a longer list breaks the
    batch) and, when every row has a reward_score, puts it on the last
    response token (rm_scores), which the trainer trains on;
  - the policy speaks through server_manager.generate(request_id,
    prompt_ids=..., sampling_params=...), token ids in and out; the
    conversation is kept as token ids (Continuous Token: the builder's
    merge of assistant tokens and of appended user messages, v0.9 and
    later; apply_chat_template with remove_system_prompt in v0.8).

What this loop does, per row of `calibrl export --kind prompts` (its
extra_info.interaction_kwargs open the same episode on `calibrl serve`):
  - opens the episode, then alternates: the policy's turn (its token ids
    kept as generated, mask 1; the text decoded once and sent to the
    service), the user's reply (tokenised once, appended with mask 0).
    The service decides when the episode ends (the user ends it, or its
    turn limit); verl's multi_turn.max_*_turns are the tool loop's and do
    not apply here;
  - the score is the episode's reward from the service (reward_score);
    extra_fields carries turn_scores (the per-turn rewards, as verl's tool
    loop reports them), calibrl_success and calibrl_turns;
  - an episode that outgrows rollout.response_length is cut: the policy
    trains on what fits and scores 0 (calibrl_cut true), since the service
    never saw the conversation's end;
  - each call goes to one of base_url's replicas (sticky per episode)
    and, when no replica answered, is sent again to the next with bounded
    backoff: calibrl_client.Client.call, the failover every adapter uses
    (its attempts, backoff and max_backoff are this loop's config keys);
    every turn carries the conversation so far, from which any replica
    rebuilds the episode (docs/serve.md).

Use with recipe/calibrl_agent_loop (agent loop config, data preparation,
launch script); put this file and calibrl_client.py on PYTHONPATH.
"""

import asyncio
import logging
import time
import zlib
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, _agent_loop_registry, register

from calibrl_client import CalibrlError, Client, episode_kwargs, turn_text

logger = logging.getLogger(__file__)

# The agent_name of calibrl's rows; recipe/calibrl_agent_loop's config
# registers the same name.
AGENT_NAME = "calibrl_user"

# Config keys of an earlier version of this loop, now Client's names: an
# old agent.yaml is refused rather than its settings silently dropped
# (AgentLoopBase takes **kwargs).
RENAMED = {"base_urls": "base_url", "tries": "attempts", "backoff_s": "backoff"}


def _register(name):
    """verl's @register, except that it keeps an entry the agent loop
    config already put under the name. AgentLoopWorker fills the registry
    from agent_loop_config_path first; this module is imported later, by
    the first row's instantiate, and a plain @register would then replace
    the config's entry with a bare {"_target_"}: every later rollout of the
    worker would run with the defaults (base_url 127.0.0.1:8080, user
    human) instead of agent.yaml's."""
    configured = _agent_loop_registry.get(name)

    def decorator(cls):
        cls = register(name)(cls)
        if configured is not None:
            _agent_loop_registry[name] = configured
        return cls

    return decorator


@_register(AGENT_NAME)
class CalibrlAgentLoop(AgentLoopBase):
    """One calibrl episode per row: the policy against calibrl's user.

    Constructor keywords (the agent loop config entry's keys), those of
    calibrl_client.Client: base_url (every `calibrl serve` replica, a list
    or one comma-separated string, as CALIBRL_URL), token_env (the
    variable holding the bearer token), timeout, attempts, backoff and
    max_backoff (the failover above); and user (one of serve --users; a
    row's own user wins)."""

    def __init__(self, *args, base_url="http://127.0.0.1:8080", user="human", token_env="CALIBRL_TOKEN", timeout=300,
                 attempts=8, backoff=0.05, max_backoff=2.0, name=None, **kwargs):
        # name: the config entry's own key, which instantiate passes too.
        for old, new in RENAMED.items():
            if old in kwargs:
                raise ValueError(f"calibrl agent loop config: {old!r} is now {new!r} (calibrl_client.Client's name); rename it in agent.yaml")
        super().__init__(*args, **kwargs)
        self.client = Client(base_url, token_env=token_env, timeout=timeout, attempts=int(attempts), backoff=float(backoff),
                             max_backoff=float(max_backoff))
        self.user = user
        self.prompt_length = self.rollout_config.prompt_length
        self.response_length = self.rollout_config.response_length

    async def run(self, sampling_params: dict[str, Any], **kwargs) -> AgentLoopOutput:
        messages = [dict(m) for m in kwargs["raw_prompt"]]
        row = kwargs.get("interaction_kwargs") or (kwargs.get("extra_info") or {}).get("interaction_kwargs") or {}
        ep_kwargs = episode_kwargs(dict(row))
        ep_kwargs.pop("name", None)
        user = ep_kwargs.pop("user", None) or self.user
        # Sticky per episode, spread by the episode's own identity (no dice).
        home = zlib.crc32(repr(sorted(ep_kwargs.items())).encode()) % len(self.client.base_urls)
        # This episode's calls sent again, apart from Client.retries, which
        # counts those of every caller sharing the client.
        tally = {"retries": 0}

        created, home = await asyncio.to_thread(self.client.call, "POST", "/v1/episodes", Client._create_body(user, ep_kwargs), home, tally)
        episode_id = created["id"]
        request_id = uuid4().hex
        metrics = {"generate_sequences": 0.0, "tool_calls": 0.0}
        prompt_ids = await self._initial_tokens(messages)
        tokens = list(prompt_ids)  # the whole conversation so far, as token ids
        mask, logprobs = [], []
        turn_scores, assistant_turns, user_turns = [], 0, 0
        done = cut = False
        info = {}
        try:
            while True:
                budget = self.response_length - len(mask)
                params = dict(sampling_params)
                params["max_tokens"] = min(int(params.get("max_tokens") or budget), budget)
                t0 = time.perf_counter()
                out = await self.server_manager.generate(request_id=request_id, prompt_ids=tokens, sampling_params=params)
                metrics["generate_sequences"] += time.perf_counter() - t0
                assistant_turns += 1
                tokens, mask, logprobs = await self._append_assistant(tokens, out, mask, logprobs)
                if getattr(out, "stop_reason", None) == "length" or len(mask) > self.response_length or len(out.token_ids) >= budget:
                    cut = True  # the turn did not end inside the budget
                    break
                text = self.tokenizer.decode(out.token_ids, skip_special_tokens=True)
                messages.append({"role": "assistant", "content": text})
                t0 = time.perf_counter()
                r, home = await asyncio.to_thread(self.client.call, "POST", f"/v1/episodes/{episode_id}/turns",
                                                  Client._turn_body(text, messages), home, tally)
                metrics["tool_calls"] += time.perf_counter() - t0
                turn_scores.append(float(r["reward"]))
                info = r.get("info") or {}
                if r["done"]:
                    done = True
                    break
                previous = list(messages)
                messages.append({"role": "user", "content": turn_text(r)})
                tokens, mask, logprobs = await self._append_user(previous, messages, tokens, mask, logprobs)
                user_turns += 1
                if len(mask) >= self.response_length:
                    cut = True  # no room left for the policy's next turn
                    break
        finally:
            # Ended, cut or failed: free the episode on the replica that
            # last answered (copies elsewhere expire, docs/serve.md).
            await asyncio.to_thread(self._release, home, episode_id)

        n_prompt = len(tokens) - len(mask)
        response_ids = tokens[n_prompt:]
        output = AgentLoopOutput(
            prompt_ids=tokens[:n_prompt],
            response_ids=response_ids[: self.response_length],
            response_mask=mask[: self.response_length],
            response_logprobs=logprobs[: self.response_length] if logprobs else None,
            reward_score=0.0 if cut else float(sum(turn_scores)),
            num_turns=assistant_turns + user_turns + 1,
            metrics=metrics,
            extra_fields={},
        )
        output.extra_fields.update({
            "turn_scores": turn_scores, "tool_rewards": [], "calibrl_cut": cut,
            "calibrl_success": float(bool(info.get("success"))) if done else 0.0,
            "calibrl_turns": assistant_turns, "calibrl_retries": tally["retries"],
        })
        return output

    def _release(self, home, episode_id):
        try:
            self.client.delete(episode_id, home)
        except (CalibrlError, OSError) as e:  # it expires on its own (serve --episode-ttl)
            logger.info("calibrl: release %s: %s", episode_id, e)

    # --- token ids: verl's Continuous Token when present (0.9 and later),
    # else v0.8's apply_chat_template ------------------------------------

    async def _initial_tokens(self, messages):
        if hasattr(self, "ct_build_initial_tokens"):
            return list(await self.ct_build_initial_tokens(messages))
        return list(await self.apply_chat_template(messages))

    async def _append_assistant(self, tokens, out, mask, logprobs):
        """The policy's tokens as generated, mask 1. logprobs is [] until
        the server returns log probabilities (verl's own bookkeeping)."""
        lp = list(out.log_probs) if getattr(out, "log_probs", None) else None
        if hasattr(self, "ct_merge_assistant_token"):
            merged, mask, new_lp = await self.ct_merge_assistant_token(
                tokens, list(out.token_ids), mask, logprobs if (logprobs or lp) else None, assistant_logprobs=lp)
            return list(merged.token_ids), list(mask), list(new_lp) if new_lp is not None else logprobs
        tokens = tokens + list(out.token_ids)
        mask = mask + [1] * len(out.token_ids)
        if lp is not None:
            logprobs = logprobs + lp
        return tokens, mask, logprobs

    async def _append_user(self, previous, messages, tokens, mask, logprobs):
        """The user's reply, tokenised once and appended, mask 0."""
        if hasattr(self, "ct_merge_non_assistant_msg"):
            merged, mask, new_lp = await self.ct_merge_non_assistant_msg(previous, messages, tokens, mask, logprobs or None)
            return list(merged.token_ids), list(mask), (list(new_lp or []) if logprobs else logprobs)
        ids = list(await self.apply_chat_template(messages[len(previous):], remove_system_prompt=True))
        if logprobs:
            logprobs = logprobs + [0.0] * len(ids)
        return tokens + ids, mask + [0] * len(ids), logprobs
