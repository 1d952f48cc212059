package serve

import (
	"sync"

	"github.com/calibrl/calibrl/dialog"
)

// budget bounds the message bytes the server's episodes hold together
// (Config.MaxHeldBytes). Each episode's share is charged as its messages
// grow and given back once when it leaves the store, so the total is what
// the live store holds.
type budget struct {
	max int64

	mu   sync.Mutex
	held int64
}

// reserve charges n more bytes to e, refusing (false) when the server
// would then hold more than max. An episode already dropped is not
// charged: its bytes go with it.
func (b *budget) reserve(e *episode, n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e.dropped {
		return true
	}
	if b.held+n > b.max {
		return false
	}
	b.held += n
	e.charged += n
	return true
}

// settle sets e's charge to what its messages hold now, once a turn's
// real growth is known (the user's reply; a turn undone gives its
// reservation back; a replay rebuilt the conversation).
func (b *budget) settle(e *episode, holds int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !e.dropped {
		b.held += holds - e.charged
		e.charged = holds
	}
}

// release gives back everything e was charged; later charges are ignored.
func (b *budget) release(e *episode) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !e.dropped {
		e.dropped = true
		b.held -= e.charged
		e.charged = 0
	}
}

// total is the bytes held now.
func (b *budget) total() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// messageBytes is what a conversation's messages hold: their text.
func messageBytes(msgs []dialog.Message) int64 {
	var n int64
	for _, m := range msgs {
		n += int64(len(m.Content))
	}
	return n
}
