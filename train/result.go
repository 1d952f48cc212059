package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The names GRPO, Static, RFT and StaticRFT run under (newRLRun's
// algo): the namespace of their logged config ("grpo/config") and the
// base of their result file.
const (
	algoGRPO      = "grpo"
	algoStatic    = "static"
	algoRFT       = "rft"
	algoStaticRFT = "static_rft"
)

// rlAlgos are all of them.
var rlAlgos = []string{algoGRPO, algoStatic, algoRFT, algoStaticRFT}

// resultFile is where a finished RL run of algo writes its RLResult,
// beside the final model.
func resultFile(algo string) string { return algo + "_result.json" }

// readRLResult reads the result a finished run of algo wrote in dir.
func readRLResult(dir, algo string) (RLResult, error) {
	path := filepath.Join(dir, resultFile(algo))
	data, err := os.ReadFile(path)
	if err != nil {
		return RLResult{}, fmt.Errorf("rl result: %w", err)
	}
	var res RLResult
	if err := json.Unmarshal(data, &res); err != nil {
		return RLResult{}, fmt.Errorf("rl result: %s: %w", path, err)
	}
	return res, nil
}

// ReadRLResult reads the RLResult that a finished GRPO, static, RFT or
// static RFT run wrote beside its final model in dir (all four return
// the same).
func ReadRLResult(dir string) (RLResult, error) {
	for _, algo := range rlAlgos {
		res, err := readRLResult(dir, algo)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		return res, err
	}
	return RLResult{}, fmt.Errorf("rl result: %s holds no finished GRPO, static or RFT run: %w", dir, fs.ErrNotExist)
}
