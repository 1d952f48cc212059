package support

import "github.com/calibrl/calibrl/task/level"

// Level returns the configuration of a level (package level names them):
// the defaults for "" (one goal, a quarter of users with two, a quarter
// who change their mind; four-digit ids), for "easy" one goal on an
// account of two orders and one booking with three-digit ids, and for
// "hN" the easy account grown to hold goals(N) changes, cancels and date
// changes in turn, so that the careful agent needs about N turns.
func Level(name string) (Config, error) {
	l, err := level.Parse(name)
	if err != nil {
		return Config{}, err
	}
	cfg := DefaultConfig()
	if l.Small {
		cfg.Digits, cfg.Orders, cfg.Bookings = 3, 2, 1
		cfg.TwoGoals, cfg.Switch = 0, 0
	}
	if h := l.Horizon; h > 0 {
		n := goals(h)
		cfg.Goals = n
		// Two thirds of orders can still be cancelled: room for the
		// cancels with one to spare, and a booking per date change.
		cfg.Orders, cfg.Bookings = min(2*((n+1)/2)+1, 16), min(n/2+1, 16)
	}
	return cfg, nil
}

// goals is how many changes a user of the hH level wants: the careful
// agent spends two turns on the account (ask, look up and ask on), then
// about 1.5 a goal (a cancel's id, a date change's booking and date, each
// change run in the turn that asks for the next); a quarter of the turns
// are left for what goes wrong.
func goals(h int) int { return min(max((2*(3*h/4-2)+1)/3, 1), MaxGoals) }
