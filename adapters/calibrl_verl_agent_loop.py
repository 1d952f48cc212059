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
  - each call goes to one of base_urls (sticky per episode) and, when no
    replica answered (connection refused or reset, timeout, 502/503/504),
    is sent again to the next replica with bounded backoff; every turn
    carries the conversation so far, from which any replica rebuilds the
    episode (docs/serve.md). 4xx answers are not retried.

Use with recipe/calibrl_agent_loop (agent loop config, data preparation,
launch script); put this file and calibrl_client.py on PYTHONPATH.
"""

import asyncio
import logging
import random
import time
import zlib
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

from calibrl_client import CalibrlError, Client, episode_kwargs, turn_text

logger = logging.getLogger(__file__)

# The agent_name of calibrl's rows; recipe/calibrl_agent_loop's config
# registers the same name.
AGENT_NAME = "calibrl_user"

# Statuses that mean no replica answered (a proxy in front of dead ones):
# the request is sent again, to another replica.
RETRY_STATUSES = (502, 503, 504)


class Replicas:
    """The serve replicas an episode may use: calls stick to one, and move
    to the next when it does not answer, after 25, 50, 100, ... ms (with
    jitter), up to `tries` attempts in all. A request the server answered
    with a 4xx is never sent again. retries counts the extra attempts."""

    def __init__(self, base_urls, token_env="CALIBRL_TOKEN", tries=6, backoff_s=0.025, timeout=300):
        if not base_urls:
            raise ValueError("calibrl: no base_url: set base_url or base_urls in the agent loop config")
        self.clients = [Client(u, token_env=token_env, timeout=timeout) for u in base_urls]
        self.tries, self.backoff_s = max(1, int(tries)), float(backoff_s)
        self.retries = 0

    def call(self, start, method, *args, **kwargs):
        """Runs Client.method on replica `start` (mod n), failing over;
        returns (result, index of the replica that answered)."""
        last = None
        for attempt in range(self.tries):
            i = (start + attempt) % len(self.clients)
            if attempt:
                self.retries += 1
                time.sleep(self.backoff_s * (1 << (attempt - 1)) * (0.5 + random.random()))
            try:
                return getattr(self.clients[i], method)(*args, **kwargs), i
            except CalibrlError as e:
                if e.status not in RETRY_STATUSES:
                    raise
                last = e
            except OSError as e:  # refused, reset, timed out: no answer
                last = e
        raise ConnectionError(f"calibrl: {method}: no replica answered after {self.tries} tries: {last}") from last


def _as_list(v):
    if v is None:
        return []
    if isinstance(v, str):
        return [u.strip() for u in v.split(",") if u.strip()]
    return [str(u) for u in v]


@register(AGENT_NAME)
class CalibrlAgentLoop(AgentLoopBase):
    """One calibrl episode per row: the policy against calibrl's user.

    Constructor keywords (the agent loop config entry's keys): base_url or
    base_urls (a list or comma-separated string of `calibrl serve`
    addresses), user (one of serve --users; a row's own user wins),
    token_env (the variable holding the bearer token), tries and
    backoff_s (the failover above)."""

    def __init__(self, *args, base_url=None, base_urls=None, user="human", token_env="CALIBRL_TOKEN", tries=6, backoff_s=0.025,
                 timeout=300, name=None, **kwargs):
        # name: the config entry's own key, which instantiate passes too.
        super().__init__(*args, **kwargs)
        urls = _as_list(base_urls) or _as_list(base_url) or ["http://127.0.0.1:8080"]
        self.replicas = Replicas(urls, token_env=token_env, tries=tries, backoff_s=backoff_s, timeout=timeout)
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
        home = zlib.crc32(repr(sorted(ep_kwargs.items())).encode()) % len(self.replicas.clients)
        retries_before = self.replicas.retries

        created, home = await asyncio.to_thread(self.replicas.call, home, "create", user, **ep_kwargs)
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
                r, home = await asyncio.to_thread(self.replicas.call, home, "turn", episode_id, text, messages)
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
            "calibrl_turns": assistant_turns, "calibrl_retries": self.replicas.retries - retries_before,
        })
        return output

    def _release(self, home, episode_id):
        try:
            self.replicas.clients[home].delete(episode_id)
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
