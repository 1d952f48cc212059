package task

import (
	"github.com/calibrl/calibrl/task/docedit"
	"github.com/calibrl/calibrl/task/mathchat"
)

func registry() map[string]constructor {
	return map[string]constructor{
		"docedit": func() (Task, error) {
			t, err := docedit.New(docedit.DefaultConfig())
			if err != nil {
				return nil, err
			}
			return t, nil
		},
		"mathchat": func() (Task, error) {
			t, err := mathchat.New(mathchat.DefaultConfig())
			if err != nil {
				return nil, err
			}
			return t, nil
		},
	}
}
