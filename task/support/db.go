package support

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
)

// The database is virtual: every row is a pure function of the task's
// seed and the row's id, and an account's row names its orders and
// bookings. So an instance's database is the account drawn for it and the
// rows it names, and the tool that answers the agent's calls (Tool) needs
// nothing but the turn it completes — the same contract as mathchat's
// calculator, whose results are a function of the turn alone. An id is a
// letter, a hyphen and Config.Digits digits ("A-3817", "O-5520"); a
// quarter of the well-formed ids exist, so a guessed id is usually not
// found and, when it is, names another customer's row.

// Kinds of row, by the letter their ids start with.
const (
	kindAccount = "account"
	kindOrder   = "order"
	kindBooking = "booking"
)

// prefixes maps a kind of row to its id letter.
var prefixes = map[string]string{kindAccount: "A", kindOrder: "O", kindBooking: "B"}

// Order statuses.
const (
	statusPlaced    = "placed"
	statusShipped   = "shipped"
	statusCancelled = "cancelled"
)

var firstNames = []string{"dana", "omar", "lena", "raj", "mia", "tom", "ines", "yuki", "sam", "eva", "noah", "ada"}
var domains = []string{"mail.com", "post.net", "inbox.org"}

// db is the rows of one task's world: its Config fixes the seed, the id
// width and how many orders and bookings an account has.
type db struct {
	seed             uint64
	digits           int
	orders, bookings int
}

// hash mixes the seed with the parts: the one source of every row field.
func (d db) hash(parts ...string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d", d.seed)
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	x := h.Sum64()
	// splitmix64's finaliser: FNV's low bits are weak for modulo.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// id writes an id of kind from a number.
func (d db) id(kind string, n uint64) string {
	lo := uint64(1)
	for range d.digits - 1 {
		lo *= 10
	}
	return fmt.Sprintf("%s-%d", prefixes[kind], lo+n%(9*lo))
}

// kindOf reads the kind of an id from its letter and checks its width.
func (d db) kindOf(id string) (string, bool) {
	letter, num, ok := strings.Cut(id, "-")
	if !ok || len(num) != d.digits || num[0] == '0' {
		return "", false
	}
	for _, c := range num {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	for k, p := range prefixes {
		if p == letter {
			return k, true
		}
	}
	return "", false
}

// exists reports whether a row of kind has this id.
func (d db) exists(kind, id string) bool {
	k, ok := d.kindOf(id)
	return ok && k == kind && d.hash("exists", id)%4 == 0
}

// account is an account row as it stands before any change.
type account struct {
	ID, Name, Email string
	Orders          []string
	Bookings        []string
}

// accountRow returns the account with id, which must exist.
func (d db) accountRow(id string) account {
	h := d.hash("account", id)
	name := firstNames[h%uint64(len(firstNames))]
	a := account{ID: id, Name: name, Email: fmt.Sprintf("%s%d@%s", name, 10+h/16%90, domains[h/4096%uint64(len(domains))])}
	a.Orders = d.owned(id, kindOrder, d.orders)
	a.Bookings = d.owned(id, kindBooking, d.bookings)
	return a
}

// owned draws the n ids of kind an account owns: existing, distinct.
func (d db) owned(acct, kind string, n int) []string {
	var ids []string
	for i := 0; len(ids) < n && i < 1000; i++ {
		id := d.id(kind, d.hash(acct, kind, fmt.Sprint(i)))
		if d.exists(kind, id) && !contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// orderStatus is an order's status before any change: a third have
// shipped and can no longer be cancelled.
func (d db) orderStatus(id string) string {
	if d.hash("order", id)%3 == 0 {
		return statusShipped
	}
	return statusPlaced
}

// bookingDate is a booking's date before any change.
func (d db) bookingDate(id string) string {
	h := d.hash("booking", id)
	return fmt.Sprintf("2026-%02d-%02d", 1+h%12, 1+h/12%28)
}

// field is one changeable field of a row: "O-5520.status",
// "B-12.date", "A-3817.email".
type field = string

// state is what the conversation changed: the new value of every field
// it set, over the rows as they were. Two states are equal when they
// changed the same fields to the same values (diff drops a change back
// to the original value).
type state map[field]string

// base returns a field's value before any change.
func (d db) base(f field) string {
	id, name, _ := strings.Cut(f, ".")
	switch name {
	case "status":
		return d.orderStatus(id)
	case "date":
		return d.bookingDate(id)
	case "email":
		return d.accountRow(id).Email
	}
	return ""
}

// get returns a field's value in s.
func (d db) get(s state, f field) string {
	if v, ok := s[f]; ok {
		return v
	}
	return d.base(f)
}

// diff is s without the changes that put a field back as it was.
func (d db) diff(s state) state {
	out := state{}
	for f, v := range s {
		if v != d.base(f) {
			out[f] = v
		}
	}
	return out
}

// describe writes a state's changes in a fixed order ("O-5520
// cancelled; B-12 date 2026-05-03"), the score's outcome.
func describe(s state) string {
	var parts []string
	for f, v := range s {
		id, name, _ := strings.Cut(f, ".")
		if name == "status" {
			parts = append(parts, id+" "+v)
		} else {
			parts = append(parts, id+" "+name+" "+v)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}
