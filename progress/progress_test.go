package progress

import "testing"

func TestNilFuncDrops(t *testing.T) {
	var f Func
	f.Emit(Event{Stage: "base"}) // must not panic
	var got []Event
	f = func(e Event) { got = append(got, e) }
	f.Emit(Event{Stage: "base", Index: 1, Of: 2})
	if len(got) != 1 || got[0].Stage != "base" || got[0].Of != 2 {
		t.Fatalf("events %+v", got)
	}
}
