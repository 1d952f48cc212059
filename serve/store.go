package serve

import (
	"container/list"
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
	// clientID is the episode_id an OpenEnv reset gave (guarded by mu).
	clientID string

	// env is the cached environment the episode plays in; the store's
	// drop hook releases it, and the episode's bytes, once.
	env      *envEntry
	dropOnce sync.Once
	// charged and dropped are the budget's (guarded by its lock).
	charged int64
	dropped bool
}

// errFull is returned when the store is at its cap with no finished
// episode to drop.
var errFull = errors.New("too many live episodes")

type store struct {
	ttl time.Duration
	max int
	now func() time.Time
	// drop is called once for each episode that leaves the store
	// (expired, evicted or deleted), outside the store's lock.
	drop func(*episode)

	mu sync.Mutex
	m  map[string]*episode
}

func newStore(ttl time.Duration, maxEpisodes int, now func() time.Time, drop func(*episode)) *store {
	return &store{ttl: ttl, max: maxEpisodes, now: now, drop: drop, m: map[string]*episode{}}
}

// dropAll runs the drop hook on episodes that left the store.
func (s *store) dropAll(eps []*episode) {
	for _, e := range eps {
		e.dropOnce.Do(func() { s.drop(e) })
	}
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
	var gone []*episode
	defer func() { s.dropAll(gone) }()
	defer s.mu.Unlock()
	if held, ok := s.m[e.id]; ok {
		held.used.Store(now.UnixNano())
		return held, nil
	}
	if len(s.m) >= s.max {
		gone = s.sweepLocked(now)
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
		gone = append(gone, oldest)
	}
	s.m[e.id] = e
	return e, nil
}

// get returns the episode and marks it used; expired episodes are gone.
func (s *store) get(id string) (*episode, bool) {
	now := s.now()
	s.mu.Lock()
	e, ok := s.m[id]
	if !ok {
		s.mu.Unlock()
		return nil, false
	}
	if now.Sub(time.Unix(0, e.used.Load())) > s.ttl {
		delete(s.m, id)
		s.mu.Unlock()
		s.dropAll([]*episode{e})
		return nil, false
	}
	e.used.Store(now.UnixNano())
	s.mu.Unlock()
	return e, true
}

func (s *store) remove(id string) bool {
	s.mu.Lock()
	e, ok := s.m[id]
	delete(s.m, id)
	s.mu.Unlock()
	if ok {
		s.dropAll([]*episode{e})
	}
	return ok
}

func (s *store) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// sweepLocked removes the expired episodes and returns them, for dropAll
// once the lock is released.
func (s *store) sweepLocked(now time.Time) []*episode {
	var gone []*episode
	for id, e := range s.m {
		if now.Sub(time.Unix(0, e.used.Load())) > s.ttl {
			delete(s.m, id)
			gone = append(gone, e)
		}
	}
	return gone
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
			gone := s.sweepLocked(s.now())
			s.mu.Unlock()
			s.dropAll(gone)
		}
	}
}

// envCache builds each task once and each (task, user) once: tasks may
// load data, and users are shared by their sessions (a learned user holds
// its model). Tasks are keyed by their canonical name (task.Canonical), so
// "mathchat:h1" and "mathchat:h01" are one entry, and at most max entries
// are held: the least recently used one no episode plays in is evicted to
// make room, and when every entry is in use a new task is refused
// (errEnvsFull). An entry holds at most one user per served user name.
type envCache struct {
	newTask func(string) (task.Task, error)
	newUser func(task.Task, string) (dialog.User, error)
	max     int

	mu  sync.Mutex
	m   map[string]*envEntry
	lru *list.List // of *envEntry, most recently used first
}

// envEntry is one cached task with its users; refs counts the episodes
// that play in it (envCache.release).
type envEntry struct {
	key   string
	task  task.Task
	users map[string]dialog.User
	refs  int
	elem  *list.Element
}

// errEnvsFull is returned when the cache is full of environments in use.
var errEnvsFull = errors.New("too many distinct tasks in use")

func newEnvCache(t func(string) (task.Task, error), u func(task.Task, string) (dialog.User, error), maxEnvs int) *envCache {
	return &envCache{newTask: t, newUser: u, max: maxEnvs, m: map[string]*envEntry{}, lru: list.New()}
}

// get returns the environment of taskName with its user userName, counted
// as in use until release.
func (c *envCache) get(taskName, userName string) (*envEntry, dialog.User, error) {
	key, err := task.Canonical(taskName)
	if err != nil {
		key = taskName // not a registry name: newTask judges it (and it is not cached unless it builds)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	en, ok := c.m[key]
	if !ok {
		if len(c.m) >= c.max && !c.evictLocked() {
			return nil, nil, errEnvsFull
		}
		t, err := c.newTask(key)
		if err != nil {
			return nil, nil, err
		}
		en = &envEntry{key: key, task: t, users: map[string]dialog.User{}}
		en.elem = c.lru.PushFront(en)
		c.m[key] = en
	} else {
		c.lru.MoveToFront(en.elem)
	}
	u, ok := en.users[userName]
	if !ok {
		if u, err = c.newUser(en.task, userName); err != nil {
			return nil, nil, err
		}
		en.users[userName] = u
	}
	en.refs++
	return en, u, nil
}

// evictLocked drops the least recently used entry not in use, reporting
// whether there was one.
func (c *envCache) evictLocked() bool {
	for el := c.lru.Back(); el != nil; el = el.Prev() {
		if en := el.Value.(*envEntry); en.refs == 0 {
			c.lru.Remove(el)
			delete(c.m, en.key)
			return true
		}
	}
	return false
}

// release ends one use of en (an episode that played in it is gone).
func (c *envCache) release(en *envEntry) {
	c.mu.Lock()
	en.refs--
	c.mu.Unlock()
}

// len is the number of environments cached.
func (c *envCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
