package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// OpenEnv's WebSocket session protocol (OpenEnv's WSResetMessage and the
// others in src/openenv/core/env_server/types.py): the client sends
// {"type": "reset"|"step"|"state"|"close", "data": {...}}, the server
// answers each with {"type": "observation"|"state"|"error", "data": {...}};
// an error's data is {"message", "code"} with OpenEnv's codes.
const (
	wsInvalidJSON     = "INVALID_JSON"
	wsUnknownType     = "UNKNOWN_TYPE"
	wsValidationError = "VALIDATION_ERROR"
	wsExecutionError  = "EXECUTION_ERROR"
	wsCapacity        = "CAPACITY_REACHED"
)

type wsMessage struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

type wsReply struct {
	Type string `json:"type"`
	Data any    `json:"data"`
}

// openEnvSession is GET /ws: one connection is one session, playing one
// episode at a time (a reset starts the next). Sessions are capped by
// OpenEnvSessions; one over the cap is answered CAPACITY_REACHED and
// closed, as OpenEnv's server does. A message is bounded by MaxBodyBytes,
// its handling by WriteTimeout, and a session that sends nothing for
// WSIdleTimeout is closed (status 1008, "idle"), as is every session at shutdown once its message in hand is
// answered. An episode the session leaves unfinished is dropped with it.
func (s *Server) openEnvSession(w http.ResponseWriter, r *http.Request) {
	// The server's read and write deadlines were set for one request; the
	// session sets its own per message.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})
	rc.SetWriteDeadline(time.Time{})
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		s.log.Debug("websocket accept failed", "err", err)
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(s.cfg.MaxBodyBytes)
	ctx := r.Context()
	if n := s.openenv.sessions.Add(1); n > int64(s.cfg.OpenEnvSessions) {
		s.openenv.sessions.Add(-1)
		s.wsSend(ctx, c, wsReply{Type: "error", Data: map[string]any{
			"message":         fmt.Sprintf("too many sessions: this server holds %d at once (--openenv-sessions)", s.cfg.OpenEnvSessions),
			"code":            wsCapacity,
			"active_sessions": s.cfg.OpenEnvSessions, "max_sessions": s.cfg.OpenEnvSessions,
		}})
		c.Close(websocket.StatusTryAgainLater, "capacity reached")
		return
	}
	defer s.openenv.sessions.Add(-1)
	s.openenv.live.Add(1)
	defer s.openenv.live.Done()
	// Waiting for the next message stops at shutdown (which closes the
	// connection); a message in hand is answered first.
	idle, stopIdle := context.WithCancel(ctx)
	defer stopIdle()
	go func() {
		select {
		case <-s.openenv.stop:
			stopIdle()
		case <-idle.Done():
		}
	}()
	var cur *episode
	defer func() { s.dropUnfinished(cur) }()
	for {
		// A session silent for WSIdleTimeout is closed with a close frame
		// the client can read (a read context's expiry would only drop
		// the connection).
		timer := time.AfterFunc(s.cfg.WSIdleTimeout, func() {
			s.log.Debug("websocket session idle: closed", "idle", s.cfg.WSIdleTimeout)
			c.Close(websocket.StatusPolicyViolation, "idle for "+s.cfg.WSIdleTimeout.String())
		})
		_, raw, err := c.Read(idle)
		timer.Stop()
		if err != nil {
			if websocket.CloseStatus(err) == -1 && !errors.Is(err, context.Canceled) {
				s.log.Debug("websocket session ended", "err", err)
			}
			return
		}
		var msg wsMessage
		if err := json.Unmarshal(raw, &msg); err != nil {
			s.wsError(ctx, c, wsInvalidJSON, "invalid JSON: "+err.Error())
			continue
		}
		if msg.Type == "close" {
			c.Close(websocket.StatusNormalClosure, "")
			return
		}
		opCtx, cancel := context.WithTimeout(ctx, s.cfg.WriteTimeout)
		reply, ok := s.wsHandle(opCtx, c, &cur, msg)
		cancel()
		if ok && !s.wsSend(ctx, c, reply) {
			return
		}
	}
}

// wsHandle answers one message; false when it already answered an error.
func (s *Server) wsHandle(ctx context.Context, c *websocket.Conn, cur **episode, msg wsMessage) (wsReply, bool) {
	switch msg.Type {
	case "reset":
		data := msg.Data
		if string(data) == "null" {
			data = nil
		}
		e, res, f := s.openEnvReset(ctx, data)
		if f != nil {
			s.wsFailure(ctx, c, f)
			return wsReply{}, false
		}
		s.dropUnfinished(*cur)
		*cur = e
		return wsReply{Type: "observation", Data: res}, true
	case "step":
		if *cur == nil {
			s.wsError(ctx, c, wsExecutionError, "step before reset: send {\"type\": \"reset\"} first")
			return wsReply{}, false
		}
		res, f := s.openEnvStep(ctx, *cur, msg.Data)
		if f != nil {
			s.wsFailure(ctx, c, f)
			return wsReply{}, false
		}
		return wsReply{Type: "observation", Data: res}, true
	case "state":
		if *cur == nil {
			return wsReply{Type: "state", Data: map[string]any{"episode_id": nil, "step_count": 0}}, true
		}
		return wsReply{Type: "state", Data: openEnvState(*cur)}, true
	default:
		s.wsError(ctx, c, wsUnknownType, fmt.Sprintf("unknown message type %q (want reset, step, state or close)", msg.Type))
		return wsReply{}, false
	}
}

// dropUnfinished removes an episode its session left before the end; a
// finished one stays readable at /v1/episodes/{id} until it expires.
func (s *Server) dropUnfinished(e *episode) {
	if e != nil && !e.closed.Load() {
		s.store.remove(e.id)
	}
}

func (s *Server) wsFailure(ctx context.Context, c *websocket.Conn, f *replyError) {
	code := wsExecutionError
	if f.status == http.StatusBadRequest || f.status == http.StatusUnprocessableEntity || f.status == http.StatusConflict {
		code = wsValidationError
	}
	if f.status == http.StatusTooManyRequests {
		code = wsCapacity
	}
	s.wsError(ctx, c, code, f.message)
}

func (s *Server) wsError(ctx context.Context, c *websocket.Conn, code, msg string) {
	s.wsSend(ctx, c, wsReply{Type: "error", Data: map[string]string{"message": msg, "code": code}})
}

// wsSend writes one reply within WriteTimeout; false if the client is gone.
func (s *Server) wsSend(ctx context.Context, c *websocket.Conn, v wsReply) bool {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(wsReply{Type: "error", Data: map[string]string{"message": "encode reply: " + err.Error(), "code": wsExecutionError}})
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.WriteTimeout)
	defer cancel()
	return c.Write(ctx, websocket.MessageText, b) == nil
}
