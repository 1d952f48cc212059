package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/task"
)

// episode is one served conversation. mu serialises its turns; the store's
// lock is never held while mu is, so a slow turn blocks only its episode.
type episode struct {
	id      string
	created time.Time
	used    atomic.Int64 // unix nanoseconds of the last request
	closed  atomic.Bool  // set when done, for the store's eviction choice

	key  episodeKey // what the id carries: the episode opened again
	mu   sync.Mutex
	task task.Task
	live *rollout.Live
}

// errFull is returned when the store is at its cap with no finished
// episode to drop.
var errFull = errors.New("too many live episodes")

type store struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu sync.Mutex
	m  map[string]*episode
}

func newStore(ttl time.Duration, maxEpisodes int, now func() time.Time) *store {
	return &store{ttl: ttl, max: maxEpisodes, now: now, m: map[string]*episode{}}
}

func newID() string {
	var b [16]byte
	rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return "ep_" + hex.EncodeToString(b[:])
}

// add stores e under its id, making room if the store is full, and
// returns it; when an episode is already held under that id (two turns
// of one episode recovering it at once), that one is returned instead.
func (s *store) add(e *episode) (*episode, error) {
	now := s.now()
	e.created = now
	e.used.Store(now.UnixNano())
	s.mu.Lock()
	defer s.mu.Unlock()
	if held, ok := s.m[e.id]; ok {
		held.used.Store(now.UnixNano())
		return held, nil
	}
	if len(s.m) >= s.max {
		s.sweepLocked(now)
	}
	if len(s.m) >= s.max {
		var oldest *episode
		for _, x := range s.m {
			if x.closed.Load() && (oldest == nil || x.used.Load() < oldest.used.Load()) {
				oldest = x
			}
		}
		if oldest == nil {
			return nil, errFull
		}
		delete(s.m, oldest.id)
	}
	s.m[e.id] = e
	return e, nil
}

// get returns the episode and marks it used; expired episodes are gone.
func (s *store) get(id string) (*episode, bool) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[id]
	if !ok {
		return nil, false
	}
	if now.Sub(time.Unix(0, e.used.Load())) > s.ttl {
		delete(s.m, id)
		return nil, false
	}
	e.used.Store(now.UnixNano())
	return e, true
}

func (s *store) remove(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[id]
	delete(s.m, id)
	return ok
}

func (s *store) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

func (s *store) sweepLocked(now time.Time) int {
	n := 0
	for id, e := range s.m {
		if now.Sub(time.Unix(0, e.used.Load())) > s.ttl {
			delete(s.m, id)
			n++
		}
	}
	return n
}

// sweepEvery drops expired episodes every period until ctx ends.
func (s *store) sweepEvery(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.mu.Lock()
			s.sweepLocked(s.now())
			s.mu.Unlock()
		}
	}
}

// envCache builds each task once and each (task, user) once: tasks may
// load data, and users are shared by their sessions.
type envCache struct {
	newTask func(string) (task.Task, error)
	newUser func(task.Task, string) (dialog.User, error)

	mu    sync.Mutex
	tasks map[string]task.Task
	users map[[2]string]dialog.User
}

func newEnvCache(t func(string) (task.Task, error), u func(task.Task, string) (dialog.User, error)) *envCache {
	return &envCache{newTask: t, newUser: u, tasks: map[string]task.Task{}, users: map[[2]string]dialog.User{}}
}

func (c *envCache) get(taskName, userName string) (task.Task, dialog.User, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tasks[taskName]
	if !ok {
		var err error
		if t, err = c.newTask(taskName); err != nil {
			return nil, nil, err
		}
		c.tasks[taskName] = t
	}
	key := [2]string{taskName, userName}
	u, ok := c.users[key]
	if !ok {
		var err error
		if u, err = c.newUser(t, userName); err != nil {
			return nil, nil, err
		}
		c.users[key] = u
	}
	return t, u, nil
}
