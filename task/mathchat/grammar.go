package mathchat

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"regexp"
	"strings"
)

// The problem language is a small set of sentence patterns. Each pattern is
// a template with word slots ({name}, {items}, ...), at most one number slot
// and optional alternatives ("[Then|Next,]"). The generator renders
// patterns into sentences and the solver (used by the scripted agents)
// matches sentences back against the same templates, so the two can never
// disagree about what a sentence means.
//
// Word slots:
//
//	{name} {name2} {name3}  a first name from names
//	{items} {item}          plural and singular of the first item noun
//	{items2} {item2}        the same for a second item noun
//	{thing}                 a priced object from things
//
// Number slots (a pattern has at most one; it carries the fact's value):
//
//	{n}    a count ("4")
//	{$}    money ("$3", "$2.50")
//	{%}    a percent ("25%")
//	{frac} a proper fraction ("2/5")

var (
	names  = []string{"Ann", "Ben", "Cara", "Dan", "Eva", "Finn", "Gina", "Hugo", "Ivy", "Jack", "Kim", "Leo", "Mia", "Nick", "Olga", "Paul", "Rosa", "Sam", "Tara", "Will"}
	items  = []noun{{"apple", "apples"}, {"pen", "pens"}, {"marble", "marbles"}, {"sticker", "stickers"}, {"book", "books"}, {"cookie", "cookies"}, {"card", "cards"}, {"shell", "shells"}, {"egg", "eggs"}, {"balloon", "balloons"}, {"pencil", "pencils"}, {"cupcake", "cupcakes"}}
	things = []string{"bike", "lamp", "jacket", "game", "chair", "radio", "watch", "backpack"}
)

type noun struct{ one, many string }

// numKind is the kind of a pattern's number slot.
type numKind int

const (
	numNone numKind = iota
	numCount
	numMoney
	numPercent
	numFrac
)

// pattern is one sentence shape of the problem language.
type pattern struct {
	id     string
	family string // the family whose solver reads it; "" for shared
	// forms are the full statements; the generator picks one at random.
	forms []string
	// vague states the sentence with its number withheld ("some apples"),
	// so a reader can tell a number is missing.
	vague string
	// ask is how a careful assistant asks for the number.
	ask string
	// cues are word stems, besides the slot words, that mark a question
	// as being about this fact.
	cues     []string
	num      numKind
	question bool // the problem's question sentence
	distract bool // a distractor: never needed for the answer

	compiled  []form
	compVague *form
}

// form is a compiled template.
type form struct {
	re    *regexp.Regexp
	slots []string // slot name per capture group
}

var (
	slotRe = regexp.MustCompile(`\{[a-z$%0-9]+\}|\[[^\]]*\]`)
	// slotExpr is the regular expression each slot matches.
	slotExpr = map[string]string{
		"{name}": alt(names), "{name2}": alt(names), "{name3}": alt(names),
		"{items}": alt(plurals()), "{item}": alt(singulars()),
		"{items2}": alt(plurals()), "{item2}": alt(singulars()),
		"{thing}": alt(things),
		"{n}":     `(\d+(?:/\d+)?)`, "{$}": `\$((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d\d)?)`,
		"{%}": `(\d+(?:\.\d+)?)%`, "{frac}": `(\d+/\d+)`,
	}
)

func alt(ws []string) string { return "(" + strings.Join(ws, "|") + ")" }

func plurals() []string {
	var out []string
	for _, it := range items {
		out = append(out, it.many)
	}
	return out
}

func singulars() []string {
	var out []string
	for _, it := range items {
		out = append(out, it.one)
	}
	return out
}

// compile turns a template into an anchored regular expression. A
// sentence may end with any of . ? ! and spacing is loose.
func compile(tpl string) (form, error) {
	var b strings.Builder
	var slots []string
	b.WriteString(`^\s*`)
	last := 0
	for _, m := range slotRe.FindAllStringIndex(tpl, -1) {
		b.WriteString(literal(tpl[last:m[0]]))
		tok := tpl[m[0]:m[1]]
		if tok[0] == '[' {
			var alts []string
			for _, a := range strings.Split(tok[1:len(tok)-1], "|") {
				alts = append(alts, literal(a))
			}
			b.WriteString("(?:" + strings.Join(alts, "|") + ")")
		} else {
			expr, ok := slotExpr[tok]
			if !ok {
				return form{}, fmt.Errorf("template %q: unknown slot %s", tpl, tok)
			}
			b.WriteString(expr)
			slots = append(slots, tok[1:len(tok)-1])
		}
		last = m[1]
	}
	b.WriteString(literal(strings.TrimRight(tpl[last:], ".?!")))
	b.WriteString(`\s*[.?!]*\s*$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return form{}, fmt.Errorf("template %q: %w", tpl, err)
	}
	return form{re: re, slots: slots}, nil
}

// literal escapes template text, letting any run of spaces match loosely.
func literal(s string) string {
	parts := strings.Fields(s)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	out := strings.Join(parts, `\s+`)
	if strings.HasPrefix(s, " ") && out != "" {
		out = `\s+` + out
	} else if strings.HasPrefix(s, " ") {
		out = `\s+`
	}
	if strings.HasSuffix(s, " ") && strings.TrimSpace(s) != "" {
		out += `\s+`
	}
	return out
}

// match reads a sentence with one compiled form. It returns the word slots
// (items normalized to their plural) and the number text, if any.
func (f *form) match(s string) (map[string]string, string, bool) {
	m := f.re.FindStringSubmatch(s)
	if m == nil {
		return nil, "", false
	}
	slots := map[string]string{}
	num := ""
	for i, name := range f.slots {
		v := m[i+1]
		switch name {
		case "n", "$", "%", "frac":
			num = v
			continue
		case "item":
			v, name = pluralOf(v), "items"
		case "item2":
			v, name = pluralOf(v), "items2"
		}
		if old, ok := slots[name]; ok && old != v {
			return nil, "", false // {item} and {items} must agree
		}
		slots[name] = v
	}
	return slots, num, true
}

func pluralOf(one string) string {
	for _, it := range items {
		if it.one == one {
			return it.many
		}
	}
	return one
}

func singularOf(many string) string {
	for _, it := range items {
		if it.many == many {
			return it.one
		}
	}
	return many
}

// render fills a template. Alternatives are chosen with rng (the first
// one when rng is nil).
func render(tpl string, slots map[string]string, val *big.Rat, rng *rand.Rand) string {
	return slotRe.ReplaceAllStringFunc(tpl, func(tok string) string {
		if tok[0] == '[' {
			alts := strings.Split(tok[1:len(tok)-1], "|")
			if rng == nil {
				return alts[0]
			}
			return alts[rng.IntN(len(alts))]
		}
		switch tok {
		case "{item}":
			return singularOf(slots["items"])
		case "{item2}":
			return singularOf(slots["items2"])
		case "{n}":
			return FormatRat(val)
		case "{frac}":
			return val.RatString()
		case "{$}":
			return FormatMoney(val)
		case "{%}":
			return FormatRat(val) + "%"
		}
		return slots[tok[1:len(tok)-1]]
	})
}

// splitSentences cuts text after each ".", "?" or "!" that ends a word
// (followed by space or the end), so "$2.50" and "2.5" stay whole.
func splitSentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '.' && c != '?' && c != '!' {
			continue
		}
		if i+1 < len(text) && text[i+1] != ' ' && text[i+1] != '\n' && text[i+1] != '.' && text[i+1] != '?' && text[i+1] != '!' {
			continue
		}
		// Swallow a run of terminators ("...", "?!").
		j := i + 1
		for j < len(text) && (text[j] == '.' || text[j] == '?' || text[j] == '!') {
			j++
		}
		if s := strings.TrimSpace(text[start:j]); s != "" {
			out = append(out, s)
		}
		start, i = j, j-1
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}
