package task

func registry() map[string]constructor {
	return map[string]constructor{}
}
