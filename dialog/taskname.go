package dialog

import "sync"

// A task's Name is its family ("mathchat"), but a task is built from a
// longer name that also picks its level and options ("mathchat:easy"), and
// only that name rebuilds the same instances: the same index of
// "mathchat" and "mathchat:easy" are different problems. The registry
// records the name each task value was built from, so whoever writes
// episodes of it (the rollout, the server, the exporters) writes the name
// that replays them.
var taskNames sync.Map // task value -> string

// Named is anything with a family name, as tasks are.
type Named interface{ Name() string }

// SetTaskName records that t was built from name. t must be comparable
// (tasks are pointers).
func SetTaskName(t Named, name string) { taskNames.Store(t, name) }

// TaskName is the name t was built from (SetTaskName), or its Name when
// none was recorded.
func TaskName(t Named) string {
	if n, ok := taskNames.Load(t); ok {
		return n.(string)
	}
	return t.Name()
}
