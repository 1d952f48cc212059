package task

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/level"
)

// Name is a parsed task name, the one form of it every package passes
// around: the family, the level, the options, and the identity of the
// user's data. Its text (String) is
//
//	FAMILY[:LEVEL][:OPTION]...[:data=sha256:HEX]
//
// "mathchat", "mathchat:easy", "mathchat:h8:ledger",
// "docedit:easy:data=sha256:…". Episodes, manifests and exports record
// that text, and ParseName reads it back to the same Name.
type Name struct {
	// Family is the task family ("mathchat").
	Family string
	// Level is the size ("", "easy", "hN"; package level).
	Level string
	// Options are the family's switches the name turns on, in the order
	// the family declares them.
	Options []string
	// Data is the user's data the instances come from; zero for the
	// family's generator.
	Data Data
}

// Data is the identity of a task's data: its content hash. A name names
// data by content, not by where it lies, so a row exported on one host
// replays on any host that holds the same bytes (UseData).
type Data struct {
	// SHA256 is the hex content hash (DataHash); "" until the data at
	// Path has been read.
	SHA256 string
	// Path is where a name read from the command line or an old log put
	// the data. It is a hint for this host only: String never writes it
	// once the hash is known.
	Path string
}

// IsZero reports a name without data.
func (d Data) IsZero() bool { return d.SHA256 == "" && d.Path == "" }

// dataOption starts the data option, the last of a name.
const dataOption = "data="

// hashPrefix marks the content hash, alone ("data=sha256:HEX") or, in the
// names of old logs, after a path ("data=/abs/path#sha256:HEX").
const hashPrefix = "sha256:"

var hexHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// CheckRecorded checks a task name that a log or a checkpoint recorded:
// it must parse (a known family, level and options) and name its data, if
// any, by content hash. calibrl records data by hash alone, or in old logs
// a path with its hash; a path alone in a record is refused, for it
// would make a trainer read whatever file the record names
// ("data=/etc/passwd") on the host that reads it.
func CheckRecorded(name string) error {
	n, err := ParseName(name)
	if err != nil {
		return err
	}
	if n.Data.Path != "" && n.Data.SHA256 == "" {
		return fmt.Errorf("task %q names its data by a path alone; a recorded task names it by content (data=sha256:HEX): record it with --data", name)
	}
	return nil
}

func init() { dialog.SetTaskCheck(CheckRecorded) }

// ParseName reads a task name, checking the family, the level and the
// options against the family's declaration. It also reads the forms older
// versions wrote and the command line gives: the data as a path
// ("data=PATH", "data=PATH#sha256:HEX"), which Lookup resolves.
func ParseName(s string) (Name, error) {
	spec, data, hasData := strings.Cut(s, ":"+dataOption)
	parts := strings.Split(spec, ":")
	var n Name
	n.Family = parts[0]
	f, ok := families[n.Family]
	if !ok {
		return Name{}, fmt.Errorf("unknown task %q (known: %s; add :easy for the small level)", s, strings.Join(Names(), ", "))
	}
	rest := parts[1:]
	if len(rest) > 0 && !isOption(rest[0]) {
		if strings.ContainsAny(rest[0], `/\.`) {
			return Name{}, fmt.Errorf("task %q: %q is not a level; give a data folder or file with --data %s (or as %q)", s, rest[0],
				strings.Join(rest, ":"), n.Family+":"+dataOption+strings.Join(rest, ":"))
		}
		l, err := level.Parse(rest[0]) // "" is the default level: "mathchat::nocalc"
		if err != nil {
			return Name{}, fmt.Errorf("task %q: %w", s, err)
		}
		n.Level, rest = l.String(), rest[1:] // canonical: "h01" is "h1"
	}
	for _, part := range rest {
		o, text, err := f.parseOption(n.Family, part)
		if err != nil {
			return Name{}, fmt.Errorf("task %q: %w", s, err)
		}
		// A repeated option takes its last value.
		n.Options = slices.DeleteFunc(n.Options, func(x string) bool { return optionKey(x) == o.Name })
		if text != "" {
			n.Options = append(n.Options, text)
		}
	}
	f.sortOptions(n.Options)
	if hasData {
		d, err := parseData(data)
		if err != nil {
			return Name{}, fmt.Errorf("task %q: %w", s, err)
		}
		n.Data = d
	}
	return n, nil
}

// Canonical is the one spelling of the task a name builds (ParseName, then
// String): the level as its task reads it ("h01" and "h1" are "h1"), the
// options in the family's order, the data by its hash, or, in a name that
// gives only a path, by that path made absolute and clean. Names that
// build the same task have the same canonical name, so a cache keyed by it
// holds each task once however a client spells it.
func Canonical(name string) (string, error) {
	n, err := ParseName(name)
	if err != nil {
		return "", err
	}
	if n.Data.SHA256 == "" && n.Data.Path != "" {
		if n.Data.Path, err = filepath.Abs(n.Data.Path); err != nil {
			return "", fmt.Errorf("task %q: %w", name, err)
		}
	}
	return n.String(), nil
}

// parseData reads what follows "data=".
func parseData(s string) (Data, error) {
	if h, ok := strings.CutPrefix(s, hashPrefix); ok {
		if !hexHash.MatchString(h) {
			return Data{}, fmt.Errorf("data=%s: want sha256: and 64 lower-case hex digits", s)
		}
		return Data{SHA256: h}, nil
	}
	var d Data
	if i := strings.LastIndex(s, "#"+hashPrefix); i >= 0 {
		d.Path, d.SHA256 = s[:i], s[i+1+len(hashPrefix):]
		if !hexHash.MatchString(d.SHA256) {
			return Data{}, fmt.Errorf("data=%s: the hash is not 64 lower-case hex digits", s)
		}
	} else {
		d.Path = s
	}
	if d.Path == "" {
		return Data{}, fmt.Errorf("data= names no path")
	}
	return d, nil
}

// String is the canonical text of n, which ParseName reads back. The data
// is written by its hash once known; a path is written only while it is
// all the name has (before Lookup has read the data).
func (n Name) String() string {
	var b strings.Builder
	b.WriteString(n.Family)
	if n.Level != "" {
		b.WriteString(":" + n.Level)
	}
	for _, o := range n.Options {
		b.WriteString(":" + o)
	}
	switch {
	case n.Data.SHA256 != "":
		b.WriteString(":" + dataOption + hashPrefix + n.Data.SHA256)
	case n.Data.Path != "":
		b.WriteString(":" + dataOption + n.Data.Path)
	}
	return b.String()
}

// Has reports whether n carries option o.
func (n Name) Has(o string) bool { return slices.Contains(n.Options, o) }

// Offers reports whether n's family declares option o, whether or not n
// carries it: mathchat offers NoCalculator, so its report says how to turn
// its tool off.
func (n Name) Offers(o string) bool { return families[n.Family].optionIndex(o) >= 0 }

// SimMends reports whether reproduce gives n's calibrated simulator its
// own ledger (WithUserLedger) and holds it to the facts its problem holds
// (chatlm.CopyOf) unless told otherwise: where they were measured to
// bring the simulator closer to the human proxy (mathchat, support), not
// where they took it farther (docedit).
func (n Name) SimMends() bool { return families[n.Family].simMends }

// SimMendsOf is the SimMends of the task name (false for a name that
// does not parse).
func SimMendsOf(name string) bool {
	n, err := ParseName(name)
	return err == nil && n.SimMends()
}

// AtLevel returns n at level l, with the same options and data.
func (n Name) AtLevel(l string) Name {
	n.Options = slices.Clone(n.Options)
	n.Level = l
	return n
}

// Plain reports a name that gives no level, option or data: the family
// alone, which presets put at their level (preset.Preset.TaskName).
func (n Name) Plain() bool { return n.Level == "" && len(n.Options) == 0 && n.Data.IsZero() }

// Measure is what the task's episodes are judged by.
func (n Name) Measure() dialog.Measure { return families[n.Family].measure }

// MaxTurns is the turn limit of an episode at n's level
// (level.Level.MaxTurns).
func (n Name) MaxTurns() int {
	l, err := level.Parse(n.Level)
	if err != nil {
		return level.DefaultMaxTurns
	}
	return l.MaxTurns()
}

// Needs reports whether n's instances need the dialog.Oracle field
// (OracleDraft) beyond those every task fills.
func (n Name) Needs(field string) bool { return slices.Contains(families[n.Family].oracle, field) }

// Dose is the dose of option key (LeakDose, SycophancyDose) n carries:
// 1 when it carries none.
func (n Name) Dose(key string) float64 {
	for _, o := range n.Options {
		if k, v, ok := strings.Cut(o, "="); ok && k == key {
			if d, err := parseDose(v); err == nil {
				return d
			}
		}
	}
	return 1
}

// naive returns rates scaled by n's doses.
func (n Name) naive(rates dialog.NaiveRates) dialog.NaiveRates {
	return rates.Scaled(n.Dose(LeakDose), n.Dose(SycophancyDose))
}

// WithLevel is name at level when name gives no level of its own (the
// part after its family is empty or an option): "docedit:quote" at
// "easy" is "docedit:easy:quote"; a name with a level or with data, or
// one that does not parse, is returned as it is.
func WithLevel(name, level string) string {
	n, err := ParseName(name)
	if err != nil || level == "" || n.Level != "" || !n.Data.IsZero() {
		return name
	}
	return n.AtLevel(level).String()
}

// StripDoses is name without the options that change only the naive
// simulator's rates or the reward (":leak=", ":syc=", ":reward="): the
// task whose human-proxy logs, base policy and simulator a dose-response
// study shares (reproduce.Doses). A name that does not parse is returned
// as it is.
func StripDoses(name string) string {
	n, err := ParseName(name)
	if err != nil {
		return name
	}
	n.Options = slices.DeleteFunc(slices.Clone(n.Options), func(o string) bool {
		k := optionKey(o)
		return k == LeakDose || k == SycophancyDose || k == AcceptanceReward
	})
	return n.String()
}

// WithDoses is name with the dose options opts ("leak=2x:syc=0x", as a
// name writes them) added to its own, in the family's order and before
// its data: one setting of a dose-response study. It refuses opts that
// hold anything StripDoses would keep, and a name that does not parse.
func WithDoses(name, opts string) (string, error) {
	if !OnlyDoses(opts) {
		return "", fmt.Errorf("task %q: %q: want options that change only the naive simulator or the reward (leak=DOSEx, syc=DOSEx, reward=acceptance)", name, opts)
	}
	n, err := ParseName(name)
	if err != nil {
		return "", err
	}
	n.Options = append(slices.Clone(n.Options), strings.Split(opts, ":")...)
	dosed, err := ParseName(n.String())
	if err != nil {
		return "", err
	}
	return dosed.String(), nil
}

// WithSimLedger is name with the option WithUserLedger added where its
// family offers it and it lacks it (reproduce's default: the calibrated
// simulator told each fact it was asked for), in the family's order and
// before the data; any other name, or one that does not parse, is
// returned as it is.
func WithSimLedger(name string) string {
	n, err := ParseName(name)
	if err != nil || !n.Offers(WithUserLedger) || n.Has(WithUserLedger) {
		return name
	}
	n.Options = append(slices.Clone(n.Options), WithUserLedger)
	families[n.Family].sortOptions(n.Options)
	return n.String()
}

// WithoutSimLedger is name without the option WithUserLedger, the inverse
// of WithSimLedger; a name without it, or one that does not parse, is
// returned as it is.
func WithoutSimLedger(name string) string {
	n, err := ParseName(name)
	if err != nil || !n.Has(WithUserLedger) {
		return name
	}
	n.Options = slices.DeleteFunc(slices.Clone(n.Options), func(o string) bool { return o == WithUserLedger })
	return n.String()
}

// OnlyDoses reports whether opts, options as a name writes them after its
// level ("leak=2x:syc=0x"), are all ones StripDoses removes: a setting of
// a dose-response study.
func OnlyDoses(opts string) bool {
	return onlyOptions(opts, LeakDose, SycophancyDose, AcceptanceReward)
}

// NaiveOnly reports whether opts, as OnlyDoses takes them, change the
// naive simulator alone (leak=, syc=) and not the reward: a setting whose
// other arms, trained against other users on the same reward, are the
// task's own run's (reproduce.Doses reuses them).
func NaiveOnly(opts string) bool {
	return onlyOptions(opts, LeakDose, SycophancyDose)
}

// onlyOptions reports whether every one of opts ("leak=2x:syc=0x") is
// one of the options keys declare.
func onlyOptions(opts string, keys ...string) bool {
	for _, part := range strings.Split(opts, ":") {
		if !slices.Contains(keys, optionKey(part)) {
			return false
		}
	}
	return true
}

// isOption reports whether a part of a name after a colon is an option of
// some family rather than a level.
func isOption(part string) bool {
	return strings.Contains(part, "=") || slices.ContainsFunc(allOptions, func(o Option) bool { return o.Name == part })
}

// optionKey is the declared name an option's text belongs to: "leak" for
// "leak=2x", the text itself for a word.
func optionKey(text string) string {
	if k, _, ok := strings.Cut(text, "="); ok && (k == LeakDose || k == SycophancyDose) {
		return k
	}
	return text
}

// parseOption reads one option part of a name of family, returning its
// declaration and its canonical text ("" for a dose of 1x, the default).
func (f family) parseOption(family, part string) (Option, string, error) {
	key := optionKey(part)
	i := slices.IndexFunc(allOptions, func(o Option) bool { return o.Name == key })
	if i < 0 {
		var want []string
		for _, o := range f.options {
			if o.Dose {
				want = append(want, o.Name+"=DOSEx")
			} else {
				want = append(want, o.Name)
			}
		}
		return Option{}, "", fmt.Errorf("unknown option %q (want %s; data=... last)", part, strings.Join(want, ", "))
	}
	o := allOptions[i]
	if f.optionIndex(key) < 0 {
		return Option{}, "", fmt.Errorf("%s has no %s", family, o.What)
	}
	if !o.Dose {
		return o, part, nil
	}
	_, v, _ := strings.Cut(part, "=")
	d, err := parseDose(v)
	if err != nil {
		return Option{}, "", fmt.Errorf("option %q: %w", part, err)
	}
	if d == 1 {
		return o, "", nil
	}
	return o, key + "=" + strconv.FormatFloat(d, 'g', -1, 64) + "x", nil
}

// parseDose reads a dose "2x" (a multiple of a default rate, 0 to 10).
func parseDose(s string) (float64, error) {
	num, ok := strings.CutSuffix(s, "x")
	d, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || !(d >= 0 && d <= 10) {
		return 0, fmt.Errorf("dose %q: want a multiple of the default rate from 0x to 10x, such as 2x", s)
	}
	return d, nil
}

// sortOptions puts options, as a name writes them, in f's order: the
// one order String writes and ParseName reads.
func (f family) sortOptions(opts []string) {
	slices.SortFunc(opts, func(a, b string) int { return f.optionIndex(optionKey(a)) - f.optionIndex(optionKey(b)) })
}

func (f family) optionIndex(key string) int {
	return slices.IndexFunc(f.options, func(x Option) bool { return x.Name == key })
}
