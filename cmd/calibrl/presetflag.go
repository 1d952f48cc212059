package main

import "github.com/calibrl/calibrl/preset"

// presetTask reads --preset for the task a command plays: the named
// preset as that task runs it (preset.For), and the task's name at the
// preset's level (preset.TaskName) with --data put in (resolveData). Every
// command that takes --preset goes through it, so that train-policy,
// train-sim and reproduce at one preset play the same task.
func presetTask(presetName string, taskName, data *string) (preset.Preset, error) {
	p, err := preset.Get(presetName)
	if err != nil {
		return preset.Preset{}, err
	}
	p = p.For(*taskName)
	*taskName = p.TaskName(*taskName) // the level goes before the data
	if err := resolveData(taskName, data); err != nil {
		return preset.Preset{}, err
	}
	return p, nil
}
