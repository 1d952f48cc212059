package mathchat

import (
	"math/big"
	"regexp"
	"strings"
)

// numberExpr matches one written number: an optional sign and currency
// sign, digits with optional thousands separators (groups of exactly three
// after a comma), an optional decimal part, an optional fraction ("3/4") or
// mixed-number tail ("2 1/2"), and an optional percent sign or word.
const numberExpr = `(-\s*)?(\$\s*)?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s+\d+/\d+|\s*/\s*\d+)?|\.\d+)(\s*(?:%|percent\b))?`

var (
	numberRe     = regexp.MustCompile(numberExpr)
	wholeNumRe   = regexp.MustCompile(`^\s*` + numberExpr + `\s*$`)
	latexFracRe  = regexp.MustCompile(`\\[dt]?frac\s*\{\s*([^{}]*?)\s*\}\s*\{\s*([^{}]*?)\s*\}`)
	latexSpaceRe = regexp.MustCompile(`\\[,!;: ]`)
)

// Number is one number as written in a text.
type Number struct {
	// Text is the matched text ("$1,200.50", "25%").
	Text string
	// Value is the number's exact value; for a percent it is the number
	// before the sign ("25%" has Value 25).
	Value *big.Rat
	// Percent reports a trailing "%" or "percent".
	Percent bool
	// Start and End are byte offsets of Text in the normalized string.
	Start, End int
}

// normalizeMath rewrites the LaTeX and typographic forms of numbers that
// answers commonly carry into the plain forms numberExpr reads:
// \frac{a}{b} → a/b, \$ → $, \% → %, {,} → ",", the Unicode minus → "-".
func normalizeMath(s string) string {
	s = latexFracRe.ReplaceAllString(s, "$1/$2")
	s = latexSpaceRe.ReplaceAllString(s, " ")
	r := strings.NewReplacer(`\$`, "$", `\%`, "%", "{,}", ",", "−", "-", "\u00a0", " ", `\left`, "", `\right`, "")
	return r.Replace(s)
}

// parseBody converts the numeric part of a match (no sign, currency or
// percent) into a rational. It accepts "1,200", "2.5", ".5", "3/4",
// "3 / 4" and "2 1/2".
func parseBody(body string) (*big.Rat, bool) {
	body = strings.ReplaceAll(body, ",", "")
	whole := ""
	frac := ""
	if i := strings.IndexByte(body, '/'); i >= 0 {
		// Either "a/b" or "w a/b": split off a whole part at the last space
		// before the numerator.
		num := strings.TrimSpace(body[:i])
		den := strings.TrimSpace(body[i+1:])
		if j := strings.LastIndexAny(num, " \t\n"); j >= 0 {
			whole = strings.TrimSpace(num[:j])
			num = strings.TrimSpace(num[j+1:])
		}
		frac = num + "/" + den
	} else {
		whole = body
	}
	v := new(big.Rat)
	if whole != "" {
		if len(whole) > 400 {
			return nil, false // keep hostile inputs cheap
		}
		if _, ok := v.SetString(whole); !ok {
			return nil, false
		}
	}
	if frac != "" {
		if len(frac) > 400 {
			return nil, false
		}
		f, ok := new(big.Rat).SetString(frac)
		if !ok {
			return nil, false // includes a zero denominator
		}
		v.Add(v, f)
	}
	return v, true
}

// numberFromMatch builds a Number from numberRe submatch indices.
func numberFromMatch(s string, m []int) (Number, bool) {
	body := s[m[6]:m[7]]
	v, ok := parseBody(body)
	if !ok {
		return Number{}, false
	}
	if m[2] >= 0 {
		v.Neg(v)
	}
	return Number{Text: strings.TrimSpace(s[m[0]:m[1]]), Value: v, Percent: m[8] >= 0, Start: m[0], End: m[1]}, true
}

// Numbers returns every number written in s, in order.
func Numbers(s string) []Number {
	s = normalizeMath(s)
	var out []Number
	for _, m := range numberRe.FindAllStringSubmatchIndex(s, -1) {
		// A hyphen glued to a preceding word is a dash ("5-year-old",
		// "x-5"), not a sign.
		if m[2] >= 0 && m[2] > 0 && isWordByte(s[m[2]-1]) {
			m[0], m[2], m[3] = m[4], -1, -1
			if m[0] < 0 {
				m[0] = m[6]
			}
		}
		if n, ok := numberFromMatch(s, m); ok {
			out = append(out, n)
		}
	}
	return out
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// ParseNumber reads s as exactly one number (surrounding space allowed):
// "17", "-3", "$1,200.50", "2.5", "3/4", "2 1/2", "25%", "\frac{1}{2}".
func ParseNumber(s string) (Number, bool) {
	s = normalizeMath(s)
	m := wholeNumRe.FindStringSubmatchIndex(s)
	if m == nil {
		return Number{}, false
	}
	return numberFromMatch(s, m)
}

// FormatRat writes r the way the tasks print numbers: an integer as
// digits ("17"), a terminating decimal with at most two places as a decimal
// ("2.5"), anything else as a reduced fraction ("7/3"). ParseNumber reads
// every form back to the same value.
func FormatRat(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	h := new(big.Rat).Mul(r, big.NewRat(100, 1))
	if h.IsInt() {
		return r.FloatString(2 - trailingZeros(h.Num()))
	}
	return r.String()
}

// trailingZeros counts the decimal places FloatString(2) would pad with
// zeros (0 or 1) for a value whose hundredfold is an integer.
func trailingZeros(hundredths *big.Int) int {
	m := new(big.Int).Mod(new(big.Int).Abs(hundredths), big.NewInt(10))
	if m.Sign() == 0 {
		return 1
	}
	return 0
}

// FormatMixed writes r as a mixed number ("2 1/2") when it is not an
// integer and exceeds one in size, else as FormatRat would with fractions.
func FormatMixed(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	a := new(big.Rat).Abs(r)
	whole := new(big.Int).Quo(a.Num(), a.Denom())
	if whole.Sign() == 0 {
		return r.String()
	}
	rest := new(big.Rat).Sub(a, new(big.Rat).SetInt(whole))
	sign := ""
	if r.Sign() < 0 {
		sign = "-"
	}
	return sign + whole.String() + " " + rest.String()
}

// FormatMoney writes r as dollars with thousands separators and cents when
// it is not a whole number of dollars ("$1,200.50"); it rounds to cents.
func FormatMoney(r *big.Rat) string {
	sign := ""
	a := new(big.Rat).Abs(r)
	if r.Sign() < 0 {
		sign = "-"
	}
	s := a.FloatString(2)
	if a.IsInt() {
		s = a.Num().String()
	}
	intPart, dec, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if dec != "" {
		b.WriteString("." + dec)
	}
	return sign + "$" + b.String()
}
