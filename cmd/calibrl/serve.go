package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/checkpoint"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/secretenv"
	"github.com/calibrl/calibrl/serve"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/task/level"
)

func newServeCmd() *cobra.Command {
	var (
		cfg      = serve.DefaultConfig()
		tokenEnv string
		rf       remoteFlags
		simDir   string
		simName  string
		simSeed  uint64
		data     string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve environments (and the calibrated simulator) over HTTP for GPU trainers",
		Long: `serve runs calibrl's environments as an HTTP service, so trainers such as
verl, TRL, OpenRLHF or SkyRL can drive them:

  POST /v1/episodes              {"task","split","seed","user"} -> {"id","observation"}
  POST /v1/episodes/{id}/turns   {"message","messages"} -> {"reply","done","reward","info"}
  GET  /v1/episodes/{id}         the transcript (never the oracle context)
  POST /v1/chat/completions      OpenAI-compatible, backed by the --sim checkpoint,
                                 in the format export --kind sim writes and
                                 remote:MODEL users send: system: the role-play
                                 prompt; user: the agent's turns; assistant: the
                                 simulator's, as {"message","end","satisfied"}
  GET  /v1/models                the --sim model (--sim-name)
  GET  /healthz, /openapi.yaml

and OpenEnv's environment interface (docs/openenv.md), on the same episodes:

  GET  /ws                       OpenEnv's WebSocket session (EnvClient):
                                 {"type":"reset","data":{"task","seed",...}},
                                 {"type":"step","data":{"message"}}, state, close
  POST /reset, POST /step, GET /state, GET /schema, GET /health, GET /metadata

The simulator's own context (and the task's check on each delivered
answer, for a simulator trained with it) is rebuilt inside the server, so
--user remote:NAME --remote-url http://HOST/v1 plays the same simulator as
--user learned:DIR: a conversation longer than the simulator's context
loses its oldest turns after the opening, as in process, and a request
without max_tokens takes the simulator's turn bound. max_tokens,
temperature, top_p and seed are honoured; other sampling fields are
refused with 400 naming the field. A stream sends the turn as it is
sampled.

The reward comes on the final turn (the user ended, or the turn limit:
--max-turns, else the task level's, N at hN). Users clients may ask for
are listed with --users; remote:MODEL users talk to OpenAI-compatible
endpoints (--remote-config / --remote-url).

Several replicas may serve one trainer, and a replica may restart: a turn
that carries the conversation so far ("messages", verl's message list) is
answered by any replica, which rebuilds the episode from its id by replaying
the agent's turns (a remote:MODEL user's from the user's messages the
client sends: docs/serve.md). Run every replica with the same flags.

Binding beyond loopback requires a bearer token, read from the environment
variable --token-env names. SIGINT/SIGTERM stop accepting and let turns in
flight finish.`,
		Example: `  calibrl serve --addr 127.0.0.1:8080
  CALIBRL_TOKEN=$(openssl rand -hex 16) calibrl serve --addr 0.0.0.0:8080 --token-env CALIBRL_TOKEN --users human,naive,remote:qwen --remote-url http://gpu0:8000/v1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tokenEnv != "" {
				token, err := secretenv.Read(tokenEnv)
				if err != nil {
					return fmt.Errorf("--token-env: %w", err)
				}
				cfg.Token = token
			}
			reg, err := rf.registry()
			if err != nil {
				return err
			}
			users := func(t task.Task, name string) (dialog.User, error) {
				if spec.IsRemote(name) {
					if reg == nil {
						return nil, fmt.Errorf("user %q: no remote endpoints configured", name)
					}
					return spec.RemoteUser(reg, name)
				}
				return spec.User(t, name)
			}
			// Build every listed user once now, so a typo fails at start
			// rather than on a client's first request.
			if names := task.Names(); len(names) > 0 {
				t, err := task.Lookup(names[0])
				if err != nil {
					return err
				}
				for _, u := range cfg.Users {
					if _, err := users(t, u); err != nil {
						return fmt.Errorf("--users: %w", err)
					}
				}
			}
			tasks, err := servedTasks(data)
			if err != nil {
				return err
			}
			opts := serve.Options{Task: tasks, User: users, Logger: slog.Default()}
			if simDir != "" {
				sim, err := loadServedSim(simDir, simSeed)
				if err != nil {
					return fmt.Errorf("--sim: %w", err)
				}
				opts.Chat, opts.ChatName = sim, simName
			}
			s, err := serve.New(cfg, opts)
			if err != nil {
				return err
			}
			err = s.Run(cmd.Context())
			if reg != nil {
				for model, st := range reg.Stats() {
					slog.Info("remote usage", "model", model, "requests", st.Requests, "retries", st.Retries, "errors", st.Errors,
						"prompt_tokens", st.PromptTokens, "completion_tokens", st.CompletionTokens)
				}
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address; beyond loopback a token is required")
	fl.StringVar(&tokenEnv, "token-env", "", "environment variable holding the bearer token clients must send")
	fl.StringSliceVar(&cfg.Users, "users", cfg.Users, "users clients may ask for: human, naive, learned:DIR, remote:MODEL")
	fl.IntVar(&cfg.MaxTurns, "max-turns", cfg.MaxTurns, "agent turns after which an episode ends, and the most a request may ask (default the task level's: N at hN, else "+strconv.Itoa(level.DefaultMaxTurns)+")")
	fl.IntVar(&cfg.MaxEpisodes, "max-episodes", cfg.MaxEpisodes, "episodes held at once; finished ones are dropped first when full")
	fl.DurationVar(&cfg.EpisodeTTL, "episode-ttl", cfg.EpisodeTTL, "idle time after which an episode expires")
	fl.Int64Var(&cfg.MaxBodyBytes, "max-body", cfg.MaxBodyBytes, "request body limit in bytes")
	fl.IntVar(&cfg.MaxEnvironments, "max-environments", cfg.MaxEnvironments, "environments (task with its users, by canonical task name) cached at once; least recently used unplayed ones are evicted, 429 when all are in use")
	fl.Int64Var(&cfg.MaxEpisodeBytes, "max-episode-bytes", cfg.MaxEpisodeBytes, "message bytes one episode may hold; a turn past it gets 413")
	fl.Int64Var(&cfg.MaxHeldBytes, "max-held-bytes", cfg.MaxHeldBytes, "message bytes all held episodes may hold together; a new episode or turn past it gets 429")
	fl.DurationVar(&cfg.WriteTimeout, "write-timeout", cfg.WriteTimeout, "bound on one request's handling and reply (a turn may wait on a remote user)")
	fl.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "how long shutdown waits for requests in flight")
	fl.DurationVar(&cfg.WSIdleTimeout, "ws-idle-timeout", cfg.WSIdleTimeout, "close an OpenEnv WebSocket session (/ws) that sends nothing for this long, freeing its place among --openenv-sessions (its unfinished episode is dropped)")
	fl.IntVar(&cfg.OpenEnvSessions, "openenv-sessions", cfg.OpenEnvSessions, "OpenEnv WebSocket sessions (/ws) open at once: one per rollout a trainer runs in parallel (OpenEnv's own server allows 1)")
	fl.StringVar(&cfg.OpenEnvTask, "openenv-task", cfg.OpenEnvTask, "task an OpenEnv reset that names none plays")
	fl.StringVar(&simDir, "sim", "", "calibrated simulator checkpoint (train-sim) backing /v1/chat/completions")
	fl.StringVar(&simName, "sim-name", "calibrl-sim", "model name of the --sim simulator: /v1/models lists it, requests must name it (remote:NAME)")
	fl.Uint64Var(&simSeed, "seed", 1, "seed of the simulator's sampling for requests without a seed")
	fl.StringVar(&data, "data", "", "data clients may name in a task, by its content (TASK:data=sha256:HEX, whatever path the exporter had it at), "+dataFormat+"; without it they may name none")
	rf.register(cmd)
	return cmd
}

// servedTasks builds the tasks clients name, refusing any data but the
// one --data allows: a client must not make the server read its files.
func servedTasks(data string) (func(string) (task.Task, error), error) {
	held := map[string]task.Data{} // family -> the data --data holds for it
	if data != "" {
		var errs []error
		for _, f := range task.Names() {
			d, err := task.UseData(f, data)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			held[f] = d
		}
		if len(held) == 0 {
			return nil, fmt.Errorf("--data: %w", errors.Join(errs...))
		}
	}
	return func(name string) (task.Task, error) {
		n, err := task.ParseName(name)
		if err != nil {
			return nil, err
		}
		if !n.Data.IsZero() {
			d, ok := held[n.Family]
			switch {
			case !ok:
				return nil, fmt.Errorf("task %q: this server serves no data (start it with --data)", name)
			case n.Data.SHA256 == "":
				return nil, fmt.Errorf("task %q: name the data by its content (data=sha256:%s), not by a path", name, d.SHA256)
			case n.Data.SHA256 != d.SHA256:
				return nil, fmt.Errorf("task %q: this server serves only the data with sha256 %s", name, d.SHA256)
			}
			// The hash names the data; a path the client sent (old names
			// carry one) is never read.
			n.Data = task.Data{SHA256: d.SHA256}
		}
		return task.Build(n)
	}, nil
}

// loadServedSim loads a train-sim checkpoint for /v1/chat/completions,
// judged by the task its calibrl.json names (the check it was trained
// with comes from that task).
func loadServedSim(dir string, seed uint64) (*serve.Simulator, error) {
	meta, err := checkpoint.Read(dir)
	if err != nil {
		return nil, err
	}
	if meta.Role != checkpoint.RoleSimulator {
		return nil, fmt.Errorf("%s is a %s model, not a user simulator", dir, meta.Role)
	}
	t, err := task.Lookup(meta.Task)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", dir, checkpoint.MetaFile, err)
	}
	u, err := spec.LearnedUser(t, dir) // conditioned as calibrl.json says it was trained
	if err != nil {
		return nil, err
	}
	return serve.NewSimulator(u, t, seed), nil
}
