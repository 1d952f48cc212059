package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/export"
	"github.com/calibrl/calibrl/serve"
)

func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	n := 0
	for sc.Scan() {
		var row map[string]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("%s line %d: %v", path, n+1, err)
		}
		n++
	}
	return n
}

func TestExportKindsAndFormats(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.jsonl")
	mustRun(t, "collect", "--task", "mathchat", "-n", "12", "--seed", "2", "--out", logs)
	for _, kind := range []string{"sim", "policy", "rollouts", "prompts"} {
		out := filepath.Join(dir, kind+".jsonl")
		mustRun(t, "export", "--logs", logs, "--kind", kind, "--format", "chat-jsonl", "--out", out)
		n := countLines(t, out)
		if kind != "rollouts" && n != 12 {
			t.Errorf("%s: got %d rows, want 12 (one per episode)", kind, n)
		}
		if kind == "rollouts" && n < 12 {
			t.Errorf("rollouts: got %d rows, want at least one per episode", n)
		}
		pq := filepath.Join(dir, kind+".parquet")
		mustRun(t, "export", "--logs", logs, "--kind", kind, "--format", "parquet", "--out", pq)
		if head, _ := os.ReadFile(pq); len(head) < 8 || string(head[:4]) != "PAR1" {
			t.Errorf("%s: %s is not a Parquet file", kind, pq)
		}
	}
	if _, err := run(t, "export", "--logs", logs, "--kind", "dpo", "--out", filepath.Join(dir, "x")); err == nil {
		t.Error("export accepted an unknown kind")
	}
}

// TestEvalWithRemoteAgentAndUser plays remote:MODEL on both sides against
// an in-process OpenAI-compatible server found through OPENAI_BASE_URL.
func TestEvalWithRemoteAgentAndUser(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role, Content string
			} `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		text := "The answer is 5."
		if strings.Contains(req.Messages[0].Content, "role-playing") {
			text = `{"message": "can you help with my homework?", "end": false}`
			if len(req.Messages) > 3 {
				text = `{"message": "ok, thanks", "end": true, "satisfied": false}`
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "x", "object": "chat.completion", "created": 0, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}},
			"usage":   map[string]any{"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
		})
	}))
	defer srv.Close()
	t.Setenv("CALIBRL_REMOTE_CONFIG", "")
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	out := mustRun(t, "eval", "--task", "mathchat", "--agent", "remote:fake", "--user", "remote:fake", "-n", "4", "--json")
	var s struct {
		Episodes int                `json:"episodes"`
		Turns    float64            `json:"turns"`
		Ends     map[string]int     `json:"ends"`
		Usage    map[string]float64 `json:"usage"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s.Episodes != 4 || s.Turns != 1 || s.Ends["user_ended"] != 4 {
		t.Errorf("got %+v, want 4 episodes of one turn ended by the user", s)
	}
	// One agent turn per episode; the user opens and replies once each.
	if s.Usage["remote/agent/requests"] != 4 || s.Usage["remote/user/requests"] < 8 {
		t.Errorf("usage %v: want 4 agent requests and at least 8 user requests accounted", s.Usage)
	}
}

func TestServeRefusesOpenAddressWithoutToken(t *testing.T) {
	_, err := run(t, "serve", "--addr", "0.0.0.0:0")
	if err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("got %v, want a refusal asking for a token", err)
	}
	t.Setenv("CALIBRL_TEST_EMPTY_TOKEN", "")
	if _, err := run(t, "serve", "--addr", "127.0.0.1:0", "--token-env", "CALIBRL_TEST_EMPTY_TOKEN"); err == nil {
		t.Error("serve started with an empty token variable")
	}
}

// TestServeReplaysLoggedEpisodes opens each logged episode on the service
// from its exported prompt row and replays the agent's turns: the served
// human proxy must say exactly what the logged one said, and score the
// same reward, so training through the service is training on the same
// environment as offline.
func TestServeReplaysLoggedEpisodes(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.jsonl")
	// The easy level and a turn limit other than the server's: the rows
	// must name both, or the server opens other problems.
	mustRun(t, "collect", "--task", "mathchat:easy", "-n", "6", "--seed", "4", "--max-turns", "4", "--agent", "scripted:careful,sloppy", "--out", logs)
	prompts := filepath.Join(dir, "prompts.jsonl")
	mustRun(t, "export", "--logs", logs, "--kind", "prompts", "--out", prompts)
	eps, err := dialog.LoadEpisodes(logs)
	if err != nil {
		t.Fatal(err)
	}
	rows := readPromptRows(t, prompts)
	s, err := serve.New(serve.DefaultConfig(), serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	post := func(path string, body, out any) {
		t.Helper()
		data, _ := json.Marshal(body)
		resp, err := http.Post(ts.URL+path, "application/json", bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST %s: status %d", path, resp.StatusCode)
		}
		json.NewDecoder(resp.Body).Decode(out)
	}
	for i, ep := range eps {
		row := rows[i]
		kw := row.ExtraInfo.InteractionKwargs
		if kw.Task != "mathchat:easy" || kw.MaxTurns != 4 {
			t.Fatalf("row %d: interaction_kwargs %+v, want task mathchat:easy and max_turns 4", i, kw)
		}
		// Open the episode as an adapter does: the row's interaction_kwargs
		// as they are, without name, plus the user.
		var body map[string]any
		data, _ := json.Marshal(kw)
		json.Unmarshal(data, &body)
		delete(body, "name")
		body["user"] = "human"
		var created serve.CreateResponse
		post("/v1/episodes", body, &created)
		if got, want := created.Observation.Messages[0].Content, row.Prompt[len(row.Prompt)-1].Content; got != want {
			t.Fatalf("row %d: served opening %q, the row's prompt %q", i, got, want)
		}
		if got, want := created.Observation.Messages[0].Content, ep.Messages[0].Content; got != want {
			t.Fatalf("episode %s: served opening %q, logged %q", ep.ID, got, want)
		}
		// The row's ground truth is the served episode's: answering it
		// solves the episode (a fresh one, the same row).
		var probe serve.CreateResponse
		post("/v1/episodes", body, &probe)
		var solved serve.TurnResponse
		post("/v1/episodes/"+probe.ID+"/turns", serve.TurnRequest{Message: "The answer is " + row.RewardModel.GroundTruth + "."}, &solved)
		if !solved.Done || solved.Reward != 1 {
			t.Fatalf("row %d: answering the row's ground truth %q: %+v, want done with reward 1", i, row.RewardModel.GroundTruth, solved)
		}
		var last serve.TurnResponse
		for j := 1; j < len(ep.Messages); j++ {
			m := ep.Messages[j]
			if m.Role != dialog.RoleAssistant {
				continue
			}
			post("/v1/episodes/"+created.ID+"/turns", serve.TurnRequest{Message: m.Content}, &last)
			if j+1 < len(ep.Messages) && last.Reply != ep.Messages[j+1].Content {
				t.Fatalf("episode %s turn %d: served reply %q, logged %q", ep.ID, j, last.Reply, ep.Messages[j+1].Content)
			}
		}
		if !last.Done || last.Reward != ep.Reward || last.Info.MaxTurns != 4 {
			t.Errorf("episode %s: served done %v reward %v under %d turns, logged reward %v (%s) under 4", ep.ID, last.Done, last.Reward, last.Info.MaxTurns, ep.Reward, ep.End)
		}
		var tr serve.Transcript
		get(t, ts.URL+"/v1/episodes/"+created.ID, &tr)
		if tr.Task != "mathchat:easy" || tr.MaxTurns != 4 || uint64(tr.EpisodeSeed) != ep.Seed {
			t.Errorf("episode %s: transcript names task %q, %d turns, seed %d: want what replays it", ep.ID, tr.Task, tr.MaxTurns, tr.EpisodeSeed)
		}
	}
}

func get(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

func readPromptRows(t *testing.T, path string) []export.PromptRow {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []export.PromptRow
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r export.PromptRow
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	return rows
}

// TestServeTokenEnvNeverShowsTheToken pastes a token where its variable's
// name belongs: the refusal must not print it.
func TestServeTokenEnvNeverShowsTheToken(t *testing.T) {
	for _, token := range []string{"3f9a1c0e5b7d2468ace13579bdf02468", "a3f9a1c0e5b7d2468ace13579bdf0246", "TOKENWITHOUTLOWERCASE12345"} {
		_, err := run(t, "serve", "--addr", "127.0.0.1:0", "--token-env", token)
		if err == nil {
			t.Fatalf("serve started with --token-env naming an unset variable")
		}
		if strings.Contains(err.Error(), token) {
			t.Errorf("--token-env TOKEN: the error shows the token: %v", err)
		}
	}
}
