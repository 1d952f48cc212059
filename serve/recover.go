package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// An episode is recoverable: its id carries its key (episodeid.go), and a
// turn may carry the conversation the client holds (TurnRequest.Messages,
// the message list a trainer such as verl passes on every turn). A replica
// that does not hold the episode (another replica opened it, or this one
// restarted) opens it again from the key and replays the agent's earlier
// turns through the same step as a live turn; a replica that holds it at
// another turn (it answered the turns before the last few, which went
// elsewhere) plays the missing turns, or starts over when its copy is
// ahead of the client (a turn answered whose reply the client never got).
// The user's replies on replay are checked against the client's, so an
// episode is never silently continued as another one.

// HistoryMessage is one message of the conversation a client sends with a
// turn: OpenAI's chat shape, content a string or text parts. Other fields
// (tool_calls, name) are ignored: they do not change the episode.
type HistoryMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// UnmarshalJSON reads role and content and ignores the rest.
func (m *HistoryMessage) UnmarshalJSON(b []byte) error {
	var c chatMessage
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	text, err := c.text()
	if err != nil {
		return err
	}
	*m = HistoryMessage{Role: c.Role, Content: text}
	return nil
}

// history is a client's conversation as the recovery reads it.
type history struct {
	turns []string // the agent's earlier turns, in order
	users []string // the user's opening and replies; empty if not sent
}

// splitHistory reads the conversation sent with the agent's turn current.
// System, developer and tool messages are the client's own (the system
// prompt, the environment's notes as it shows them) and are skipped. When
// the conversation ends with an agent turn, that is current itself (verl's
// list does), and it is not an earlier turn. User messages, when there are
// any, must be the opening and one reply per earlier turn, alternating with
// the agent's turns: they are what the replay is checked against.
func splitHistory(msgs []HistoryMessage, current string) (history, error) {
	var h history
	last := ""
	for i, m := range msgs {
		switch m.Role {
		case "system", "developer", "tool":
			continue
		case "assistant":
			if last == "assistant" {
				return h, fmt.Errorf("messages[%d]: two agent turns in a row with no user message between", i)
			}
			h.turns = append(h.turns, m.Content)
		case "user":
			if last == "user" {
				return h, fmt.Errorf("messages[%d]: two user messages in a row: send the environment's notes as system messages or inside the user's message", i)
			}
			h.users = append(h.users, m.Content)
		default:
			return h, fmt.Errorf("messages[%d]: role %q: want system, developer, tool, user or assistant", i, m.Role)
		}
		last = m.Role
	}
	if last == "assistant" {
		if n := len(h.turns); h.turns[n-1] != current {
			return h, errors.New("messages ends with an agent turn that is not message: send the conversation before message, or ending with it")
		}
		h.turns = h.turns[:len(h.turns)-1]
	}
	if len(h.users) > 0 && len(h.users) != len(h.turns)+1 {
		return h, fmt.Errorf("messages has %d user messages and %d earlier agent turns: want the user's opening and one reply per turn (or no user messages)", len(h.users), len(h.turns))
	}
	return h, nil
}

// replyError is a failed turn as the client is told it.
type replyError struct {
	status                    int
	typ, code, param, message string
}

func (e *replyError) Error() string { return e.message }

func (e *replyError) write(w http.ResponseWriter) {
	writeErrorCode(w, e.status, e.typ, e.code, e.param, e.message)
}

// Error codes of recovery, for clients to act on.
const (
	// codeNotHeld: this replica does not hold the episode; send the turn
	// again with messages and it is rebuilt.
	codeNotHeld = "episode_not_held"
	// codeNotRecoverable: the episode is not held here and the turn's
	// messages cannot rebuild it: its user cannot be replayed (a remote
	// model) or it opened with the client's opening, and messages holds no
	// user messages; send them.
	codeNotRecoverable = "episode_not_recoverable"
	// codeMismatch: the replay does not give the conversation the client
	// sent.
	codeMismatch = "history_mismatch"
)

// recoverEpisode opens the episode id names again from the client's
// conversation h and stores it (or returns the copy another request
// stored meanwhile): at its first turn, for catchUp to replay, when its
// user can be replayed; at the conversation's last turn, rebuilt from h
// (fromMessages), when it cannot.
func (s *Server) recoverEpisode(ctx context.Context, id string, h history) (*episode, *replyError) {
	k, err := parseEpisodeID(id)
	if err != nil {
		return nil, &replyError{http.StatusNotFound, errNotFound, "", "", fmt.Sprintf("no episode %q (unknown, expired or deleted)", id)}
	}
	if ke := s.check(k); ke != nil {
		return nil, &replyError{http.StatusBadRequest, errInvalid, "", "", fmt.Sprintf("episode %s cannot be opened on this replica: %s (serve every replica with the same flags)", id, ke.Message)}
	}
	var e *episode
	var rerr *replyError
	switch {
	case !replayable(k.User):
		e, rerr = s.fromMessages(ctx, k, h)
	case k.Given:
		if len(h.users) == 0 {
			return nil, &replyError{http.StatusNotFound, errNotFound, codeNotRecoverable, "messages", fmt.Sprintf("episode %s is not held here and opened with the client's opening: send messages with the user's messages (the opening first) and it is rebuilt", id)}
		}
		e, rerr = s.openCharged(ctx, k, &h.users[0])
	default:
		e, rerr = s.openCharged(ctx, k, nil)
	}
	if rerr != nil {
		return nil, rerr
	}
	held, err := s.store.add(e)
	if err != nil || held != e {
		s.dropUnstored(e)
	}
	if err != nil {
		return nil, &replyError{http.StatusTooManyRequests, errCapacity, "", "", fmt.Sprintf("%v (cap %d): cannot recover episode %s here", err, s.cfg.MaxEpisodes, id)}
	}
	if held == e {
		s.recovered.Add(1)
		s.log.Debug("episode recovered", "id", id, "task", k.Task, "user", k.User)
	}
	return held, nil
}

// resumer is a user session that can continue an episode another
// replica began: its next request is the one the first session would
// have made after asks requests (remote.User's sessions seed each request
// by its number).
type resumer interface {
	ResumeAt(asks int)
}

// fromMessages rebuilds the episode k names from the client's
// conversation h, for a user whose replies a replay cannot reproduce (a
// remote model): the user's opening and replies are the client's, the
// environment's notes are the environment's own (a pure function of the
// conversation), and the user's session continues as the first one
// would have (resumer). The client is the trainer holding the episode's
// token: it has the user's words from the server that said them.
func (s *Server) fromMessages(ctx context.Context, k episodeKey, h history) (*episode, *replyError) {
	if len(h.users) == 0 {
		return nil, &replyError{http.StatusNotFound, errNotFound, codeNotRecoverable, "messages", fmt.Sprintf(
			"episode %s is not held here and its user %s is a remote model, whose replies a replay cannot reproduce: send messages with the user's messages (the opening and each reply), from which it is rebuilt", k.id(), k.User)}
	}
	e, rerr := s.openCharged(ctx, k, &h.users[0])
	if rerr != nil {
		return nil, rerr
	}
	env := dialog.EnvironmentOf(e.task)
	for i, text := range h.turns {
		if e.live.Done() {
			s.dropUnstored(e)
			return nil, &replyError{http.StatusConflict, errConflict, codeMismatch, "messages", fmt.Sprintf("messages has %d agent turns before message, but episode %s ends after turn %d (%s)", len(h.turns), k.id(), i, e.live.Ep.End)}
		}
		note := e.live.Said(text)
		e.live.Heard(replyIn(env, &e.live.Ep, note, h.users[i+1]), false)
	}
	asks := len(h.turns)
	if !k.Given {
		asks++ // the user's session asked for the opening too
	}
	if r, ok := e.live.User.(resumer); ok {
		r.ResumeAt(asks)
	}
	s.bytes.settle(e, messageBytes(e.live.Ep.Messages))
	return e, nil
}

// replyIn is the user's reply in u, a user message as a client holds it:
// the reply alone, or with the environment's notes around it joined to it
// by a blank line (the note on the agent's turn before, the note on the
// reply after: one message for a trainer that takes one string back, as
// turn_text in adapters/calibrl_client.py writes it). ep ends with the
// agent's turn and note, its note on it ("" for none).
func replyIn(env dialog.Environment, ep *dialog.Episode, note, u string) string {
	if note != "" {
		u = strings.TrimPrefix(u, note+"\n\n")
	}
	if env == nil {
		return u
	}
	for p := strings.LastIndex(u, "\n\n"); p >= 0; p = strings.LastIndex(u[:p], "\n\n") {
		msgs := append(slices.Clip(ep.Messages), dialog.Message{Role: dialog.RoleUser, Content: u[:p]})
		if env.Respond(&ep.View, msgs) == u[p+2:] {
			return u[:p]
		}
	}
	return u
}

// catchUp brings e, whose lock the caller holds, to the client's
// conversation h: it plays the agent turns e has not seen, starting over
// when e's turns are not a prefix of h's, then checks the user's side.
// An episode whose user cannot be replayed is rebuilt from h instead
// (fromMessages) when its turns are not h's.
func (s *Server) catchUp(ctx context.Context, e *episode, h history) (replayed int, _ *replyError) {
	held := agentTurns(e.live.Ep.Messages)
	if !replayable(e.key.User) {
		if slices.Equal(held, h.turns) {
			return 0, nil
		}
		fresh, rerr := s.fromMessages(ctx, e.key, h)
		if rerr != nil {
			return 0, rerr
		}
		e.task, e.live = fresh.task, fresh.live
		s.dropUnstored(fresh)
		e.live.Ep.ID = e.id
		e.closed.Store(false)
		s.replayed.Add(int64(len(h.turns)))
		return len(h.turns), nil
	}
	if len(held) > len(h.turns) || !slices.Equal(held, h.turns[:len(held)]) {
		var opening *string
		if e.key.Given {
			opening = &e.live.Ep.Messages[0].Content
		}
		fresh, rerr := s.open(ctx, e.key, opening)
		if rerr != nil {
			return 0, rerr
		}
		e.task, e.live = fresh.task, fresh.live
		// e's use of its environment keeps it cached, so fresh opened in
		// the same one: fresh's own use goes with it (the caller settles
		// e's bytes).
		s.dropUnstored(fresh)
		e.live.Ep.ID = e.id
		e.closed.Store(false)
		held = nil
	}
	for i, text := range h.turns[len(held):] {
		if e.live.Done() {
			return replayed, &replyError{http.StatusConflict, errConflict, codeMismatch, "messages", fmt.Sprintf("messages has %d agent turns before message, but episode %s ended after turn %d (%s)", len(h.turns), e.id, len(held)+i, e.live.Ep.End)}
		}
		if _, err := e.step(ctx, text); err != nil {
			s.log.Warn("replay failed", "id", e.id, "turn", len(held)+i+1, "err", err)
			return replayed, &replyError{http.StatusBadGateway, errServer, "", "", fmt.Sprintf("replaying turn %d: user could not reply: %v", len(held)+i+1, err)}
		}
		replayed++
	}
	s.replayed.Add(int64(replayed))
	if len(h.users) == 0 {
		return replayed, nil
	}
	mine := userSays(e.live.Ep.Messages)
	for i, u := range h.users {
		if i == 0 {
			// The opening the client holds may be its dataset's (verl
			// shows the row's prompt, exported from logs another user
			// opened): the replies are the server's own words.
			continue
		}
		if i >= len(mine) || !slices.Contains(mine[i], strings.Join(strings.Fields(string([]rune(u))), " ")) {
			want := "(none)"
			if i < len(mine) {
				want = fmt.Sprintf("%.80q", mine[i][0])
			}
			return replayed, &replyError{http.StatusConflict, errConflict, codeMismatch, "messages", fmt.Sprintf("user message %d of messages is not what the user says at that point of episode %s (%s): the conversation is another episode's, or this replica's user differs from the one that answered (serve every replica with the same --users and checkpoints)", i, e.id, want)}
		}
	}
	return replayed, nil
}

// userSays lists, for each user message of a transcript, the forms a
// client may hold it in, whitespace collapsed: the message alone (the
// environment's notes sent as system messages, or not at all), or with
// the notes around it joined to it (the note on the agent turn before, the
// note on the reply after: one message for a trainer that takes one string
// back, as verl does).
func userSays(msgs []dialog.Message) [][]string {
	norm := func(parts []dialog.Message) string {
		var words []string
		for _, m := range parts {
			// The client read it from JSON, which has each byte that is
			// not UTF-8 (a model's byte tokens may leave some) as U+FFFD:
			// so does a conversion to runes.
			words = append(words, strings.Fields(string([]rune(m.Content)))...)
		}
		return strings.Join(words, " ")
	}
	var out [][]string
	for j, m := range msgs {
		if m.Role != dialog.RoleUser {
			continue
		}
		lo, hi := j, j+1
		for lo > 0 && msgs[lo-1].Role == dialog.RoleSystem {
			lo--
		}
		for hi < len(msgs) && msgs[hi].Role == dialog.RoleSystem {
			hi++
		}
		out = append(out, []string{norm(msgs[j : j+1]), norm(msgs[lo : j+1]), norm(msgs[j:hi]), norm(msgs[lo:hi])})
	}
	return out
}

// agentTurns is the agent's turns of a transcript.
func agentTurns(msgs []dialog.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == dialog.RoleAssistant {
			out = append(out, m.Content)
		}
	}
	return out
}
