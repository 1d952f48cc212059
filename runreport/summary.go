package runreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// Figures are one evaluation's headline numbers as summary.json writes
// them (reproduce.Figures). The report reads them by their JSON names,
// so that it needs no import of the package that writes them.
type Figures struct {
	Success     *float64   `json:"success"`
	BLEU        *float64   `json:"bleu"`
	CI95        [2]float64 `json:"ci95"`
	Turns       float64    `json:"turns"`
	Tokens      float64    `json:"tokens"`
	NoDelivery  *float64   `json:"no_delivery"`
	TrainReward *float64   `json:"train_reward"`
	RealReward  float64    `json:"real_reward"`
	Gap         *float64   `json:"gap"`
}

// Value is the headline figure: BLEU where the task has it, else success
// (NaN when the row has neither).
func (f Figures) Value() float64 {
	switch {
	case f.BLEU != nil:
		return *f.BLEU
	case f.Success != nil:
		return *f.Success
	}
	return math.NaN()
}

// HumanMonitor is the reward-hacking monitor's human-proxy reward
// (training-user reward − gap), or nil for an arm without a monitor.
func (f Figures) HumanMonitor() *float64 {
	if f.TrainReward == nil || f.Gap == nil {
		return nil
	}
	v := *f.TrainReward - *f.Gap
	return &v
}

// SeedRow is one RL seed's figures.
type SeedRow struct {
	Seed   int    `json:"seed"`
	RLSeed uint64 `json:"rl_seed"`
	Figures
}

// Comparison is one of the paper's claims ("A > B") measured on paired
// evaluations.
type Comparison struct {
	Claim      string     `json:"claim"`
	Than       string     `json:"than"`
	Paper      string     `json:"paper"`
	Difference float64    `json:"difference"`
	CI95       [2]float64 `json:"ci95"`
	Seeds      []float64  `json:"seeds"`
	Holds      bool       `json:"holds"`
}

// Row is one arm's line of summary.json.
type Row struct {
	Arm string `json:"arm"`
	// Decoding is how the policies played ("sampled", "greedy"); "" in
	// runs made before reproduce evaluated more than one way.
	Decoding string `json:"decoding"`
	Figures
	Seeds       []SeedRow    `json:"seeds"`
	Comparisons []Comparison `json:"comparisons"`
}

// Set is one evaluation of every arm: the run's primary evaluation, or a
// secondary one (another decoding, such as greedy) that summary.json
// holds beside it.
type Set struct {
	// Name is "" for the primary set, else the JSON key it was found
	// under ("greedy").
	Name string
	// Notes are the set's scalar fields other than its rows ("decoding":
	// "sampling, T=1"), as "key: value".
	Notes []string
	Rows  []Row
}

// Decoding is the set's decoding as its rows name it, or "".
func (s Set) Decoding() string {
	if len(s.Rows) == 0 {
		return ""
	}
	return s.Rows[0].Decoding
}

// BLEU reports whether the set's headline figure is BLEU.
func (s Set) BLEU() bool { return len(s.Rows) > 0 && s.Rows[0].BLEU != nil }

// primaryKeys are the names an object-shaped summary.json may give its
// primary rows, first match wins.
var primaryKeys = []string{"rows", "arms", "primary", "sampled", "sampling"}

// decodeSets reads summary.json. Today it is an array of rows; a run may
// add secondary evaluations either as an object field of each row
// ({"arm": …, "greedy": {"success": …, "seeds": […], "comparisons": […]}})
// or by making the file an object whose fields are arrays of rows
// ({"rows": […], "greedy": […]}) or objects holding such an array. Every
// shape yields the primary set first and the others in key order.
func decodeSets(data []byte) ([]Set, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("empty")
	}
	if data[0] == '[' {
		return rowSets("", nil, data)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	primary := ""
	for _, k := range primaryKeys {
		if isRows(obj[k]) {
			primary = k
			break
		}
	}
	if primary == "" {
		for _, k := range sortedKeys(obj) {
			if isRows(obj[k]) {
				primary = k
				break
			}
		}
	}
	if primary == "" {
		return nil, fmt.Errorf("no array of arm rows")
	}
	sets, err := rowSets("", notesOf(obj), obj[primary])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", primary, err)
	}
	for _, k := range sortedKeys(obj) {
		if k == primary {
			continue
		}
		v := obj[k]
		if isRows(v) {
			more, err := rowSets(k, nil, v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			sets = append(sets, more...)
			continue
		}
		var inner map[string]json.RawMessage
		if json.Unmarshal(v, &inner) != nil {
			continue
		}
		for _, ik := range append(append([]string{}, primaryKeys...), sortedKeys(inner)...) {
			if isRows(inner[ik]) {
				more, err := rowSets(k, notesOf(inner), inner[ik])
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", k, ik, err)
				}
				sets = append(sets, more...)
				break
			}
		}
	}
	return sets, nil
}

// rowSets decodes an array of rows as the set named name, followed by the
// sets its rows carry as object fields (one per field name).
func rowSets(name string, notes []string, data []byte) ([]Set, error) {
	var rows []Row
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, err
	}
	var raws []map[string]json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, err
	}
	sets := []Set{{Name: name, Notes: notes, Rows: rows}}
	byName := map[string]int{}
	for i, raw := range raws {
		for _, k := range sortedKeys(raw) {
			if !isFigures(raw[k]) {
				continue
			}
			var sub Row
			if err := json.Unmarshal(raw[k], &sub); err != nil {
				return nil, fmt.Errorf("%s.%s: %w", rows[i].Arm, k, err)
			}
			sub.Arm = rows[i].Arm
			full := k
			if name != "" {
				full = name + "." + k
			}
			j, ok := byName[full]
			if !ok {
				j = len(sets)
				byName[full] = j
				sets = append(sets, Set{Name: full})
			}
			sets[j].Rows = append(sets[j].Rows, sub)
		}
	}
	return sets, nil
}

// isRows reports whether v is a non-empty array of objects with an "arm".
func isRows(v json.RawMessage) bool {
	var rows []map[string]json.RawMessage
	if len(v) == 0 || json.Unmarshal(v, &rows) != nil || len(rows) == 0 {
		return false
	}
	_, ok := rows[0]["arm"]
	return ok
}

// isFigures reports whether v is an object with a headline figure.
func isFigures(v json.RawMessage) bool {
	var obj map[string]json.RawMessage
	if len(v) == 0 || v[0] != '{' || json.Unmarshal(v, &obj) != nil {
		return false
	}
	_, s := obj["success"]
	_, b := obj["bleu"]
	return s || b
}

// notesOf lists obj's string, number and boolean fields as "key: value".
func notesOf(obj map[string]json.RawMessage) []string {
	var out []string
	for _, k := range sortedKeys(obj) {
		var v any
		if json.Unmarshal(obj[k], &v) != nil {
			continue
		}
		switch v := v.(type) {
		case string, float64, bool:
			out = append(out, fmt.Sprintf("%s: %v", k, v))
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
