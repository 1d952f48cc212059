package serve

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/task/level"
)

// episodeKey is everything that makes an episode what it is before the
// agent speaks: the task, the instance, the user and the seed its dice
// come from. The episode id carries it, so that any replica, or this one
// after a restart, can open the same episode again and replay the agent's
// turns to the state the client holds (see recover.go).
//
// The id is not signed: it carries nothing a client could not ask for in
// POST /v1/episodes, and every field is checked against the server's
// configuration when it is read back, exactly as a create request is.
type episodeKey struct {
	Task     string `json:"t"`
	Split    string `json:"s"`
	User     string `json:"u"`
	Index    int    `json:"i"`
	Sample   int    `json:"n"`
	Seed     Seed   `json:"e"`
	MaxTurns int    `json:"m"`
	// Given: the episode opened with the client's opening
	// (CreateRequest.Opening), which a recovery reads from the client's
	// messages. Left out when false, so ids of episodes the user opened
	// are those earlier versions wrote.
	Given bool `json:"g,omitempty"`
	// Nonce tells apart episodes created with the same fields (a client
	// may open the same instance twice); its value plays no part.
	Nonce string `json:"r"`
}

// idPrefix starts every episode id this version writes. Ids without it
// (random ids of older servers) name episodes that cannot be recovered.
const idPrefix = "ep1_"

// maxIDLen bounds an id read from a request path: task names are short,
// and a longer id is not one this server wrote.
const maxIDLen = 2048

// newKeyNonce returns a random nonce for a new episode.
func newKeyNonce() string {
	var b [12]byte
	rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// id encodes k as an episode id: the prefix, then k's JSON in URL-safe
// base64, so the id is one path segment.
func (k episodeKey) id() string {
	data, _ := json.Marshal(k) // a struct of strings and ints always marshals
	return idPrefix + base64.RawURLEncoding.EncodeToString(data)
}

// errNotKey is returned for ids this server did not write.
var errNotKey = errors.New("not a recoverable episode id")

// parseEpisodeID reads the key an id carries. It checks the encoding and
// the fields' shapes; whether this server serves them is check's job.
func parseEpisodeID(id string) (episodeKey, error) {
	var k episodeKey
	rest, ok := strings.CutPrefix(id, idPrefix)
	if !ok || len(id) > maxIDLen {
		return k, errNotKey
	}
	data, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return k, fmt.Errorf("%w: %v", errNotKey, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&k); err != nil {
		return k, fmt.Errorf("%w: %v", errNotKey, err)
	}
	if dec.More() {
		return k, fmt.Errorf("%w: trailing data", errNotKey)
	}
	if k.Task == "" || k.Split == "" || k.User == "" || k.Nonce == "" {
		return k, fmt.Errorf("%w: a field is missing", errNotKey)
	}
	// The id must be the one this key writes: one episode, one id.
	if k.id() != id {
		return k, fmt.Errorf("%w: not in canonical form", errNotKey)
	}
	return k, nil
}

// turnLimit is the most agent turns an episode of the named task plays,
// and what it plays when its request asks none: the server's --max-turns
// when set, else the task level's (task.Name.MaxTurns), so a served
// episode and a collected one of the same level end at the same turn. A
// name the registry does not read (a task given by Options.Task) plays
// level.DefaultMaxTurns.
func (s *Server) turnLimit(taskName string) int {
	if s.cfg.MaxTurns > 0 {
		return s.cfg.MaxTurns
	}
	if n, err := task.ParseName(taskName); err == nil {
		return n.MaxTurns()
	}
	return level.DefaultMaxTurns
}

// keyError is a key the server will not open, with the request field
// to name.
type keyError struct {
	Param, Message string
}

func (e *keyError) Error() string { return e.Message }

// check reports a key this server does not serve: the same rules for a
// create request and an id read back from a turn, so a replica with
// another configuration refuses rather than opens another episode.
func (s *Server) check(k episodeKey) *keyError {
	if k.Task == "" {
		return &keyError{"task", "no task: want {\"task\": NAME} with one of " + fmt.Sprint(task.Names())}
	}
	if n, err := task.ParseName(k.Task); err == nil && n.Data.Path != "" {
		// Paths are the server's: a client naming one would read the
		// server's files, and its errors would show the server's folders.
		return &keyError{"task", fmt.Sprintf("task %q names its data by a path: name it by content (%s:data=sha256:HEX, the hash of the data the server holds with --data)", k.Task, n.Family)}
	}
	if err := task.CheckSplit(k.Split); err != nil {
		return &keyError{"split", err.Error()}
	}
	if limit := s.turnLimit(k.Task); k.MaxTurns < 1 || k.MaxTurns > limit {
		return &keyError{"max_turns", fmt.Sprintf("max_turns %d: want 1 to %d (the server's --max-turns, else the task level's limit)", k.MaxTurns, limit)}
	}
	if k.Index < 0 || k.Sample < 0 {
		return &keyError{"index", "index and sample must not be negative"}
	}
	if !slices.Contains(s.cfg.Users, k.User) {
		return &keyError{"user", fmt.Sprintf("user %q is not served here (served: %s)", k.User, strings.Join(s.cfg.Users, ", "))}
	}
	return nil
}

// replayable reports whether an episode with user can be rebuilt by
// replaying its agent turns: scripted users and local models draw only
// from the episode's seed, so the replay gives the same replies (and the
// recovery checks that it does). A remote:MODEL user is another service's
// model: its seed is a request, not a guarantee, and a replay would send
// every past turn to it again; its episodes are rebuilt from the user's
// messages the client sends instead (fromMessages).
func replayable(user string) bool {
	kind, _, _ := strings.Cut(user, ":")
	return kind != dialog.Remote.String()
}
