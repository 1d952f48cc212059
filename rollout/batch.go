package rollout

import (
	"context"
	"fmt"
	"sync"

	"github.com/calibrl/calibrl/dialog"
)

// This file asks many conversations' players at once: in one batch when
// the player is backed by a model that answers many conversations faster
// together (dialog.BatchOpener, dialog.BatchAgent, dialog.BatchUser), else
// one session at a time on at most workers goroutines (1: in order). The
// answers come back in the order of the sessions either way. A session's
// error names its episode, or for Openings and Replies its index in
// sessions.

// Openings has each session's user write its opening.
func Openings(ctx context.Context, user dialog.User, sessions []dialog.UserSession, workers int) ([]string, error) {
	return openings(ctx, user, sessions, workers, conversation)
}

// Replies has each session's user answer the last agent turn of its
// history, histories[i] being sessions[i]'s conversation so far: ends[i] reports that sessions[i] ended the conversation.
func Replies(ctx context.Context, user dialog.User, sessions []dialog.UserSession, histories [][]dialog.Message, workers int) (texts []string, ends []bool, err error) {
	return replies(ctx, user, sessions, histories, workers, conversation)
}

// OpenAll has every episode's user open it.
func OpenAll(ctx context.Context, user dialog.User, eps []*Live, workers int) error {
	sessions := make([]dialog.UserSession, len(eps))
	for i, l := range eps {
		sessions[i] = l.User
	}
	texts, err := openings(ctx, user, sessions, workers, episodeOf(eps))
	if err != nil {
		return err
	}
	for i, l := range eps {
		l.Opened(texts[i])
	}
	return nil
}

// ActAll has every episode's agent take its turn, each followed by the
// environment's note.
func ActAll(ctx context.Context, agent dialog.Agent, eps []*Live, workers int) error {
	sessions := make([]dialog.AgentSession, len(eps))
	histories := make([][]dialog.Message, len(eps))
	for i, l := range eps {
		sessions[i], histories[i] = l.Agent, l.Ep.Messages
	}
	texts, err := actions(ctx, agent, sessions, histories, workers, episodeOf(eps))
	if err != nil {
		return err
	}
	for i, l := range eps {
		l.Said(texts[i])
	}
	return nil
}

// ReplyAll has every episode's user answer its last agent turn.
func ReplyAll(ctx context.Context, user dialog.User, eps []*Live, workers int) error {
	sessions := make([]dialog.UserSession, len(eps))
	histories := make([][]dialog.Message, len(eps))
	for i, l := range eps {
		sessions[i], histories[i] = l.User, l.Ep.Messages
	}
	texts, ends, err := replies(ctx, user, sessions, histories, workers, episodeOf(eps))
	if err != nil {
		return err
	}
	for i, l := range eps {
		l.Heard(texts[i], ends[i])
	}
	return nil
}

// conversation and episodeOf name the i-th conversation in errors.
func conversation(i int) string { return fmt.Sprintf("conversation %d", i) }

func episodeOf(eps []*Live) func(int) string {
	return func(i int) string { return "episode " + eps[i].Ep.ID }
}

func openings(ctx context.Context, user dialog.User, sessions []dialog.UserSession, workers int, name func(int) string) ([]string, error) {
	if b, ok := user.(dialog.BatchOpener); ok {
		texts, err := b.OpenBatch(ctx, sessions)
		if err != nil {
			return nil, fmt.Errorf("rollout: user: %w", err)
		}
		if len(texts) != len(sessions) {
			return nil, fmt.Errorf("rollout: user opened %d of %d conversations", len(texts), len(sessions))
		}
		return texts, nil
	}
	texts := make([]string, len(sessions))
	err := parallel(ctx, workers, len(sessions), name, func(ctx context.Context, i int) error {
		text, err := sessions[i].Open(ctx)
		if err != nil {
			return fmt.Errorf("user: %w", err)
		}
		texts[i] = text
		return nil
	})
	if err != nil {
		return nil, err
	}
	return texts, nil
}

func actions(ctx context.Context, agent dialog.Agent, sessions []dialog.AgentSession, histories [][]dialog.Message, workers int, name func(int) string) ([]string, error) {
	if b, ok := agent.(dialog.BatchAgent); ok {
		texts, err := b.ActBatch(ctx, sessions, histories)
		if err != nil {
			return nil, fmt.Errorf("rollout: agent: %w", err)
		}
		if len(texts) != len(sessions) {
			return nil, fmt.Errorf("rollout: agent answered %d of %d conversations", len(texts), len(sessions))
		}
		return texts, nil
	}
	texts := make([]string, len(sessions))
	err := parallel(ctx, workers, len(sessions), name, func(ctx context.Context, i int) error {
		text, err := sessions[i].Act(ctx, histories[i])
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		texts[i] = text
		return nil
	})
	if err != nil {
		return nil, err
	}
	return texts, nil
}

func replies(ctx context.Context, user dialog.User, sessions []dialog.UserSession, histories [][]dialog.Message, workers int, name func(int) string) ([]string, []bool, error) {
	if b, ok := user.(dialog.BatchUser); ok {
		texts, ends, err := b.ReplyBatch(ctx, sessions, histories)
		if err != nil {
			return nil, nil, fmt.Errorf("rollout: user: %w", err)
		}
		if len(texts) != len(sessions) || len(ends) != len(sessions) {
			return nil, nil, fmt.Errorf("rollout: user answered %d of %d conversations", len(texts), len(sessions))
		}
		return texts, ends, nil
	}
	texts := make([]string, len(sessions))
	ends := make([]bool, len(sessions))
	err := parallel(ctx, workers, len(sessions), name, func(ctx context.Context, i int) error {
		text, end, err := sessions[i].Reply(ctx, histories[i])
		if err != nil {
			return fmt.Errorf("user: %w", err)
		}
		texts[i], ends[i] = text, end
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return texts, ends, nil
}

// parallel runs f on 0..n-1 with at most workers at once (at least one)
// and returns the first error, naming its conversation.
func parallel(ctx context.Context, workers, n int, name func(int) string, f func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	next := make(chan int)
	for w := 0; w < min(max(workers, 1), n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(ctx, i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("rollout: %s: %w", name(i), err)
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
