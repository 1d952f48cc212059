// Package serve exposes calibrl over HTTP so GPU trainers can drive it:
// an environment API (create an episode, send the agent's turns, read the
// transcript; reward on the final turn) that a verl Interaction or an
// OpenEnv-style client wraps thinly, and an OpenAI-compatible
// /v1/chat/completions endpoint backed by a chat model (the calibrated
// user simulator), so any trainer can use calibrl's simulator as its user.
//
// The API is described in openapi.yaml, served at /openapi.yaml. Errors
// use OpenAI's shape: {"error": {"message": ..., "type": ...}}.
//
// Safety: request bodies are bounded, the server has read, write and idle
// timeouts, idle episodes expire and live episodes are capped, the
// environments cached and the message bytes held (per episode and in
// all) are bounded, a bearer token is required whenever the address is
// not loopback, every episode has its own lock (concurrent turns on one episode are serialised, other
// episodes are untouched), and shutdown lets in-flight turns finish.
package serve

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/task"
)

//go:embed openapi.yaml
var openAPI []byte

// Config is how the server listens and what it allows.
type Config struct {
	// Addr is the listen address. Default "127.0.0.1:8080".
	Addr string
	// Token, when set, must be sent as "Authorization: Bearer TOKEN" on
	// every request but /healthz and /openapi.yaml. Required when Addr is
	// not a loopback address.
	Token string
	// MaxBodyBytes bounds request bodies. Default 1 MiB.
	MaxBodyBytes int64
	// EpisodeTTL is how long an episode lives after its last request.
	// Default 30m.
	EpisodeTTL time.Duration
	// MaxEpisodes caps episodes held at once (live and finished ones not
	// yet expired). When full, the least recently used finished episode is
	// dropped; if none is finished, new episodes are refused with 429.
	// Default 10000.
	MaxEpisodes int
	// MaxTurns ends an episode after this many agent turns, and bounds
	// the max_turns a request may ask. Default 0: each episode's task
	// level's limit (task.Name.MaxTurns: N at hN, else
	// level.DefaultMaxTurns), the one every command plays by default.
	MaxTurns int
	// ReadTimeout, WriteTimeout and IdleTimeout bound connections.
	// Defaults 30s, 5m (a turn may wait on a remote user), 2m.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// ShutdownTimeout bounds how long shutdown waits for in-flight
	// requests. Default 1m.
	ShutdownTimeout time.Duration
	// MaxEnvironments caps the environments (a task with its users, a
	// learned user's model included) cached at once, by canonical task
	// name: the least recently used one no episode plays in is evicted;
	// when every one is in use, an episode of another task is refused
	// with 429 (code environments_exceeded). Default 64.
	MaxEnvironments int
	// MaxEpisodeBytes bounds the message text one episode holds (its
	// opening, the agent's turns, the user's replies, the environment's
	// notes): a turn whose message would take it past the bound is
	// refused with 413 (code episode_bytes_exceeded); the user's reply,
	// bounded by the user, may go past it by one reply. Default 8 MiB.
	MaxEpisodeBytes int64
	// MaxHeldBytes bounds the message text all held episodes hold
	// together: a new episode or a turn that would take the server past
	// it is refused with 429 (code server_bytes_exceeded) until episodes
	// finish and are deleted or expire. The agent's message is checked
	// before the turn; the user's reply, bounded by the user, is counted
	// after it. Default 1 GiB.
	MaxHeldBytes int64
	// Users lists the user specs clients may ask for (spec.User names:
	// "human", "naive", "learned:DIR", "remote:MODEL"). Clients choose
	// among them; they never make the server load an arbitrary path.
	// Default human and naive.
	Users []string
	// OpenEnvSessions caps OpenEnv WebSocket sessions (/ws) open at once:
	// a trainer running G rollouts in parallel holds G. OpenEnv's own
	// server defaults to 1, which serialises parallel GRPO. Default 256.
	OpenEnvSessions int
	// WSIdleTimeout closes an OpenEnv WebSocket session (/ws) that sends
	// no message for this long, freeing its place among OpenEnvSessions;
	// its unfinished episode is dropped with it. A trainer's client sends
	// its next step within a turn's generation; one that stalls or
	// trickles would otherwise hold a place for the whole EpisodeTTL.
	// Default 5m.
	WSIdleTimeout time.Duration
	// OpenEnvTask is the task an OpenEnv reset that names none plays.
	// Default "mathchat".
	OpenEnvTask string
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{
		Addr:            "127.0.0.1:8080",
		MaxBodyBytes:    1 << 20,
		EpisodeTTL:      30 * time.Minute,
		MaxEpisodes:     10000,
		ReadTimeout:     30 * time.Second,
		WriteTimeout:    5 * time.Minute,
		IdleTimeout:     2 * time.Minute,
		ShutdownTimeout: time.Minute,
		MaxEnvironments: 64,
		MaxEpisodeBytes: 8 << 20,
		MaxHeldBytes:    1 << 30,
		Users:           []string{dialog.Human.String(), dialog.Naive.String()},
		OpenEnvSessions: 256,
		WSIdleTimeout:   5 * time.Minute,
		OpenEnvTask:     "mathchat",
	}
}

// Validate reports a configuration the server must not run with.
func (c Config) Validate() error {
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("serve: address %q: %w", c.Addr, err)
	}
	if c.Token == "" && !isLoopback(host) {
		return fmt.Errorf("serve: address %q is not loopback: set a bearer token (--token-env) before exposing the server", c.Addr)
	}
	if c.MaxBodyBytes <= 0 || c.EpisodeTTL <= 0 || c.MaxEpisodes <= 0 {
		return errors.New("serve: body limit, episode TTL and episode cap must be positive")
	}
	if c.MaxTurns < 0 {
		return fmt.Errorf("serve: turn limit %d is negative (0 is each task level's)", c.MaxTurns)
	}
	if c.MaxEnvironments <= 0 || c.MaxEpisodeBytes <= 0 || c.MaxHeldBytes <= 0 {
		return fmt.Errorf("serve: environment cap (%d), episode byte bound (%d) and server byte bound (%d) must be positive", c.MaxEnvironments, c.MaxEpisodeBytes, c.MaxHeldBytes)
	}
	if c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.IdleTimeout <= 0 || c.ShutdownTimeout <= 0 || c.WSIdleTimeout <= 0 {
		return errors.New("serve: timeouts must be positive")
	}
	if c.OpenEnvSessions <= 0 {
		return errors.New("serve: the OpenEnv session cap must be positive")
	}
	if len(c.Users) == 0 {
		return errors.New("serve: no users allowed (want at least one of human, naive, learned:DIR, remote:MODEL)")
	}
	return nil
}

// isLoopback reports whether host names only the local machine. An empty
// host (":8080") listens on every interface, so it is not loopback.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Options are the server's collaborators; zero fields take defaults.
type Options struct {
	// Task builds a task by name. Default task.Lookup.
	Task func(name string) (task.Task, error)
	// User builds a user by spec name for a task. Default spec.User.
	User func(t task.Task, name string) (dialog.User, error)
	// Chat backs /v1/chat/completions. Nil: the endpoint answers 404
	// model_not_found, naming --sim.
	Chat ChatModel
	// ChatName is the model's name: the one /v1/models lists and requests
	// must name. Default "calibrl-sim".
	ChatName string
	// Logger receives events. Default slog.Default().
	Logger *slog.Logger
	// Now is the clock, for expiry. Default time.Now.
	Now func() time.Time
}

// Server is the HTTP service. Create it with New.
type Server struct {
	cfg   Config
	opt   Options
	log   *slog.Logger
	store *store
	envs  *envCache
	bytes *budget
	mux   *http.ServeMux
	// openenv is the OpenEnv surface's own state (openenv.go).
	openenv openEnv
	// started is when the server was built: the models' "created".
	started time.Time
	// recovered counts episodes rebuilt here from their id, replayed the
	// agent turns replayed to rebuild or catch them up (/healthz).
	recovered, replayed atomic.Int64
}

// New builds a server. Its handler is ready at once; Run listens.
func New(cfg Config, opt Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opt.Task == nil {
		opt.Task = task.Lookup
	}
	if opt.User == nil {
		opt.User = spec.User
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.ChatName == "" {
		opt.ChatName = "calibrl-sim"
	}
	s := &Server{cfg: cfg, opt: opt, log: opt.Logger, started: opt.Now()}
	s.envs = newEnvCache(opt.Task, opt.User, cfg.MaxEnvironments)
	s.bytes = &budget{max: cfg.MaxHeldBytes}
	s.store = newStore(cfg.EpisodeTTL, cfg.MaxEpisodes, opt.Now, s.dropEpisode)
	s.openenv.stop = make(chan struct{})
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(openAPI)
	})
	mux.HandleFunc("POST /v1/episodes", s.auth(s.createEpisode))
	mux.HandleFunc("GET /v1/episodes/{id}", s.auth(s.getEpisode))
	mux.HandleFunc("DELETE /v1/episodes/{id}", s.auth(s.deleteEpisode))
	mux.HandleFunc("POST /v1/episodes/{id}/turns", s.auth(s.turn))
	mux.HandleFunc("POST /v1/chat/completions", s.auth(s.chat))
	mux.HandleFunc("GET /v1/models", s.auth(s.models))
	mux.HandleFunc("GET /v1/models/{model...}", s.auth(s.model))
	s.openEnvRoutes(mux)
	mux.HandleFunc("/", s.notFound)
	s.mux = mux
}

// Handler is the server's HTTP handler, for tests and embedding.
func (s *Server) Handler() http.Handler { return s.mux }

// notFound answers unknown routes, and known paths with the wrong method,
// in the JSON error shape.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		r2 := r.Clone(r.Context())
		r2.Method = m
		if _, pattern := s.mux.Handler(r2); pattern != "/" {
			writeError(w, http.StatusMethodNotAllowed, errInvalid, fmt.Sprintf("method %s not allowed on %s", r.Method, r.URL.Path))
			return
		}
	}
	writeError(w, http.StatusNotFound, errNotFound, fmt.Sprintf("no route %s %s (see /openapi.yaml)", r.Method, r.URL.Path))
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "episodes": s.store.len(), "chat": s.opt.Chat != nil,
		"recovered": s.recovered.Load(), "replayed_turns": s.replayed.Load(),
		"environments": s.envs.len(), "held_bytes": s.bytes.total()})
}

// dropEpisode gives back what an episode held: its bytes and its use of
// the environment. It runs once per episode (the store's drop hook, or a
// creation that failed before the store took the episode).
func (s *Server) dropEpisode(e *episode) {
	s.bytes.release(e)
	if e.env != nil {
		s.envs.release(e.env)
	}
}

// Run listens on the configured address and serves until ctx ends, then
// shuts down gracefully: it stops accepting, lets in-flight requests (a
// turn in progress) finish within ShutdownTimeout, and returns.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve is Run on a listener the caller opened.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: min(s.cfg.ReadTimeout, 10*time.Second),
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	sweepCtx, stopSweep := context.WithCancel(context.Background())
	defer stopSweep()
	go s.store.sweepEvery(sweepCtx, max(s.cfg.EpisodeTTL/4, time.Second))

	// OpenEnv's WebSocket sessions are hijacked connections, which
	// Shutdown neither closes nor waits for: they are told to stop, finish
	// the message in hand, and are waited for below.
	srv.RegisterOnShutdown(s.openenv.shutdown)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.log.Info("serving", "addr", ln.Addr().String(), "auth", s.cfg.Token != "", "chat", s.opt.Chat != nil,
		"episode_ttl", s.cfg.EpisodeTTL, "max_episodes", s.cfg.MaxEpisodes,
		"max_environments", s.cfg.MaxEnvironments, "max_episode_bytes", s.cfg.MaxEpisodeBytes, "max_held_bytes", s.cfg.MaxHeldBytes)
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing in-flight requests", "timeout", s.cfg.ShutdownTimeout)
	shutCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		srv.Close()
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	if err := s.openenv.wait(shutCtx); err != nil {
		return fmt.Errorf("serve: shutdown: OpenEnv sessions: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	s.log.Info("stopped")
	return nil
}
