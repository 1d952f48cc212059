package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/calibrl/calibrl/task"
)

// dataUsage documents --data on every command that takes --task;
// dataFormat is its part on the files' format, which serve's --data
// shares.
const dataUsage = "your own data instead of the generated instances: " + dataFormat + "; " +
	"logs, checkpoints and exports record it in the task name by its content (TASK:data=sha256:HEX), never by its path: give --data again (a copy anywhere) to reuse them"

const dataFormat = "for mathchat a GSM8K-format folder (train.jsonl, test.jsonl) or file, " +
	"for docedit a folder of .txt files, a .txt file or a JSONL corpus of {\"id\",\"title\",\"text\"}"

func addDataFlag(f *pflag.FlagSet, p *string) { f.StringVar(p, "data", "", dataUsage) }

// resolveData puts --data into the task name (task.WithData); the name is
// left as it is without --data. Calling it twice is harmless.
func resolveData(name *string, data *string) error {
	if *data == "" {
		return nil
	}
	n, err := task.WithData(*name, *data)
	if err != nil {
		return fmt.Errorf("--data: %w", err)
	}
	*name, *data = n, ""
	return nil
}

// dataTag is a short, path-safe tag of --data for default folder names.
func dataTag(data string) string {
	if data == "" {
		return ""
	}
	return "-" + filepath.Base(filepath.Clean(data))
}
