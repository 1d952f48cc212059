package serve

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// OpenEnv's clients (huggingface/OpenEnv at 385de5e:
// src/openenv/core/env_client.py sends reset's keyword arguments as the
// message's data; env_server/types.py's ResetRequest has seed, a Python
// int of any size, and episode_id, a string of at most 255 characters)
// reset with episode_id and with seeds as JSON numbers above 2^53, as
// `calibrl eval` logs them; a step without the required message is
// refused naming the field, over HTTP and over the WebSocket session.
func TestOpenEnvResetAndStepAsClientsSendThem(t *testing.T) {
	_, ts := newTestServer(t, func(c *Config, _ *Options) { c.OpenEnvTask = "guess" })
	const big = "18446744073709551557" // above 2^53: a float64 rounds it

	reset := func(body string) (int, OpenEnvResult, map[string]any) {
		var res OpenEnvResult
		var raw map[string]any
		code := call(t, ts.Client(), "POST", ts.URL+"/reset", "", body, &raw)
		b, _ := json.Marshal(raw)
		json.Unmarshal(b, &res)
		return code, res, raw
	}

	t.Run("seed as a number above 2^53", func(t *testing.T) {
		code, num, raw := reset(`{"episode_seed": ` + big + `}`)
		if code != 200 {
			t.Fatalf("episode_seed %s as a number: got %d %v, want 200", big, code, raw)
		}
		code, str, _ := reset(`{"episode_seed": "` + big + `"}`)
		if code != 200 {
			t.Fatalf("episode_seed as a string: got %d", code)
		}
		if got := num.Observation.EpisodeSeed; strconv.FormatUint(uint64(got), 10) != big || got != str.Observation.EpisodeSeed || num.Observation.Reply != str.Observation.Reply {
			t.Fatalf("number: seed %d opening %q; string: seed %d opening %q; want the same episode, seed %s", got, num.Observation.Reply, str.Observation.EpisodeSeed, str.Observation.Reply, big)
		}
		if code, _, raw := reset(`{"seed": ` + big + `}`); code != 200 {
			t.Fatalf("seed %s as a number: got %d %v, want 200", big, code, raw)
		}
		for _, bad := range []string{`-1`, `1.5`, `18446744073709551616`} {
			if code, _, raw := reset(`{"seed": ` + bad + `}`); code != 400 || !strings.Contains(strings.ToLower(raw["error"].(map[string]any)["message"].(string)), "seed") {
				t.Errorf("seed %s: got %d %v, want 400 naming seed", bad, code, raw)
			}
		}
	})

	t.Run("episode_id", func(t *testing.T) {
		code, res, raw := reset(`{"seed": 3, "episode_id": "run-7/episode-001"}`)
		if code != 200 || res.Observation.ClientEpisodeID != "run-7/episode-001" {
			t.Fatalf("reset with episode_id: got %d %v, want 200 echoing it as client_episode_id", code, raw)
		}
		var st OpenEnvState
		if code := call(t, ts.Client(), "GET", ts.URL+"/state?episode_id="+res.Observation.EpisodeID, "", nil, &st); code != 200 || st.ClientEpisodeID != "run-7/episode-001" {
			t.Fatalf("state: %d %+v, want client_episode_id run-7/episode-001", code, st)
		}
		code, _, raw = reset(`{"episode_id": "` + strings.Repeat("x", 256) + `"}`)
		if msg, _ := raw["error"].(map[string]any)["message"].(string); code != 422 || !strings.Contains(msg, "episode_id") || !strings.Contains(msg, "255") {
			t.Fatalf("episode_id of 256 characters: got %d %v, want 422 naming episode_id and 255", code, raw)
		}
	})

	t.Run("step without message", func(t *testing.T) {
		_, res, _ := reset(`{"seed": 4}`)
		var raw map[string]any
		code := call(t, ts.Client(), "POST", ts.URL+"/step", "", `{"episode_id": "`+res.Observation.EpisodeID+`", "action": {}}`, &raw)
		e, _ := raw["error"].(map[string]any)
		if code != 422 || e["param"] != "message" || !strings.Contains(e["message"].(string), `"message"`) {
			t.Fatalf("HTTP step with action {}: got %d %v, want 422 with param message", code, raw)
		}
		var st OpenEnvState
		call(t, ts.Client(), "GET", ts.URL+"/state?episode_id="+res.Observation.EpisodeID, "", nil, &st)
		if st.StepCount != 0 {
			t.Fatalf("the refused step was played: step_count %d", st.StepCount)
		}
		// An empty message is a message: played, not refused.
		if code := call(t, ts.Client(), "POST", ts.URL+"/step", "", `{"episode_id": "`+res.Observation.EpisodeID+`", "action": {"message": ""}}`, nil); code != 200 {
			t.Fatalf("step with an empty message: got %d, want 200", code)
		}

		ws, err := dialOpenEnv(t, ts.URL, "")
		if err != nil {
			t.Fatal(err)
		}
		ws.result("reset", json.RawMessage(`{"seed": `+big+`, "episode_id": "ws-1"}`))
		typ, data := ws.send("step", map[string]any{})
		if typ != "error" || !strings.Contains(string(data), `\"message\"`) || !strings.Contains(string(data), "VALIDATION_ERROR") {
			t.Fatalf("WebSocket step {}: got %s %s, want a validation error naming message", typ, data)
		}
		typ, data = ws.send("state", nil)
		var wst OpenEnvState
		if json.Unmarshal(data, &wst); typ != "state" || wst.ClientEpisodeID != "ws-1" || wst.StepCount != 0 {
			t.Fatalf("WebSocket state: %s %s, want client_episode_id ws-1 and no step played", typ, data)
		}
	})
}
