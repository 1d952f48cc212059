package support

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Goal kinds: what a user wants done.
const (
	goalCancel = "cancel" // cancel one of their orders
	goalDate   = "date"   // move one of their bookings to another date
	goalEmail  = "email"  // change the email on their account
)

// goal is one change a user wants made.
type goal struct {
	Kind string `json:"kind"`
	// ID is the row to change: an order, a booking, or the account.
	ID string `json:"id"`
	// Value is the new date or email ("" for a cancel).
	Value string `json:"value,omitempty"`
}

// call is the one call that makes the goal's change.
func (g goal) call() call {
	switch g.Kind {
	case goalCancel:
		return call{Verb: "cancel", Kind: kindOrder, ID: g.ID}
	case goalDate:
		return call{Verb: "change", Kind: kindBooking, ID: g.ID, Field: "date", Value: g.Value}
	}
	return call{Verb: "change", Kind: kindAccount, ID: g.ID, Field: "email", Value: g.Value}
}

// met reports whether c makes the goal's change.
func (g goal) met(c call) bool {
	w := g.call()
	return c.Verb == w.Verb && c.Kind == w.Kind && c.ID == w.ID && c.Field == w.Field && c.Value == w.Value
}

// plan is a user's goals and, for a user who changes their mind, the goal
// they open with and drop once the agent has their account.
type plan struct {
	Account string `json:"account"`
	Goals   []goal `json:"goals"`
	// Dropped, when set, is the goal the opening asks for in place of
	// Goals[0]; the user replaces it with Goals[0] after giving the
	// account id.
	Dropped *goal `json:"dropped,omitempty"`
}

// phrase says what a user wants for n goals of kind, as the opening and
// the scripted agents (readGoals) write it: "cancel an order", "cancel 2
// orders".
func phrase(kind string, n int) string {
	count := func(one, noun string) string {
		if n == 1 {
			return one + " " + noun
		}
		return strconv.Itoa(n) + " " + noun + "s"
	}
	switch kind {
	case goalCancel:
		return "cancel " + count("an", "order")
	case goalDate:
		return "change the date of " + count("a", "booking")
	}
	return "update the email on my account"
}

// request says every goal's kind, in the goals' order: "cancel an order
// and change the date of a booking".
func request(goals []goal) string {
	var parts []string
	for i := 0; i < len(goals); {
		j := i
		for j < len(goals) && goals[j].Kind == goals[i].Kind {
			j++
		}
		parts = append(parts, phrase(goals[i].Kind, j-i))
		i = j
	}
	return strings.Join(parts, " and ")
}

// spelled states a goal whole, every id and value in it: the user's
// instruction.
func spelled(g goal, acct string) string {
	switch g.Kind {
	case goalCancel:
		return "cancel order " + g.ID
	case goalDate:
		return fmt.Sprintf("change the date of booking %s to %s", g.ID, g.Value)
	}
	return fmt.Sprintf("update the email on account %s to %s", acct, g.Value)
}

// goalRE reads request's phrases and spelled's ("cancel order O-5520").
var goalRE = regexp.MustCompile(`cancel (an|\d+|order) (?:orders?|o-\d+)|change the date of (a|\d+|booking) (?:bookings?|b-\d+)|update the email on (?:my account|account a-\d+)`)

// readGoals reads the goal kinds a user's message asks for, in order, by
// the phrases request writes: what a scripted agent takes from an
// opening.
func readGoals(msg string) []string {
	var kinds []string
	for _, m := range goalRE.FindAllStringSubmatch(strings.ToLower(msg), -1) {
		kind, n := goalEmail, "1"
		switch {
		case strings.HasPrefix(m[0], "cancel"):
			kind, n = goalCancel, m[1]
		case strings.HasPrefix(m[0], "change"):
			kind, n = goalDate, m[2]
		}
		k, err := strconv.Atoi(n)
		if err != nil || k < 1 {
			k = 1
		}
		for range min(k, 16) {
			kinds = append(kinds, kind)
		}
	}
	return kinds
}
