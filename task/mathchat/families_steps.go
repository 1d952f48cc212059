package mathchat

import (
	"math/big"
	"strings"
)

// This file holds the families whose answer combines several quantities:
// linear equations and the multi-step GSM-style stories (shopping, ages,
// remainders), and the distractor sentences every family may carry.

var linearFamily = &family{
	name: "linear",
	patterns: []*pattern{
		{id: "lin.think", family: "linear", forms: []string{"{name} thinks of a number."}},
		{id: "lin.mul", family: "linear", forms: []string{"{name} multiplies it by {n}."}, vague: "{name} multiplies it by some number.",
			ask: "What number does {name} multiply it by?", cues: []string{"multiply", "multiplies", "times"}, num: numCount},
		{id: "lin.add", family: "linear", forms: []string{"Then {name} adds {n}."}, vague: "Then {name} adds some number.",
			ask: "What number does {name} add?", cues: []string{"add", "plus"}, num: numCount},
		{id: "lin.end", family: "linear", forms: []string{"{name} ends up with {n}."}, vague: "{name} ends up with some number.",
			ask: "What number does {name} end up with?", cues: []string{"end", "up", "with"}, num: numCount},
		{id: "lin.q_think", family: "linear", question: true, forms: []string{"What number did {name} think of?"}},
		{id: "lin.times", family: "linear", forms: []string{"{name} has {n} times as many {items} as {name2}."}, vague: "{name} has several times as many {items} as {name2}.",
			ask: "How many times as many {items} as {name2} does {name} have?", cues: []string{"times", "as"}, num: numCount},
		{id: "lin.together", family: "linear", forms: []string{"Together they have {n} {items}."}, vague: "Together they have some {items}.",
			ask: "How many {items} do they have together?", cues: []string{"together", "they"}, num: numCount},
		{id: "lin.q_share", family: "linear", question: true, forms: []string{"How many {items} does {name} have?"}},
		{id: "lin.saved", family: "linear", forms: []string{"{name} has {$} saved."}, vague: "{name} has some money saved.",
			ask: "How much money does {name} have saved?", cues: []string{"saved", "have", "money"}, num: numMoney},
		{id: "lin.week", family: "linear", forms: []string{"{name} saves {$} each week."}, vague: "{name} saves some money each week.",
			ask: "How much does {name} save each week?", cues: []string{"save", "each", "week"}, num: numMoney},
		{id: "lin.goal", family: "linear", forms: []string{"{name} wants to have {$}."}, vague: "{name} wants to have a certain amount of money.",
			ask: "How much money does {name} want to have in the end?", cues: []string{"want", "amount", "end", "money"}, num: numMoney},
		{id: "lin.q_weeks", family: "linear", question: true, forms: []string{"How many weeks does {name} need to save?"}},
	},
	generate: func(g *gen) *problem {
		p := &problem{}
		name := g.name()
		switch g.rng.IntN(3) {
		case 0:
			x, a, b := g.intn(2, g.max()), g.intn(2, 9), g.intn(2, g.max())
			end := new(big.Rat).Add(new(big.Rat).Mul(x, a), b)
			p.stmts = append(p.stmts, g.st("lin.think", nil, "name", name), g.st("lin.mul", a, "name", name),
				g.st("lin.add", b, "name", name), g.st("lin.end", end, "name", name))
			p.question = g.st("lin.q_think", nil, "name", name)
		case 1:
			other, it := g.name(), g.item()
			x, k := g.intn(2, g.max()), g.intn(2, 5)
			total := new(big.Rat).Mul(x, new(big.Rat).Add(k, big.NewRat(1, 1)))
			p.stmts = append(p.stmts, g.st("lin.times", k, "name", other, "items", it, "name2", name),
				g.st("lin.together", total, "items", it))
			p.question = g.st("lin.q_share", nil, "name", name, "items", it)
		default:
			saved, week, weeks := g.intn(2, g.max()), g.intn(2, g.max()), g.intn(2, 9)
			goal := new(big.Rat).Add(saved, new(big.Rat).Mul(week, weeks))
			p.stmts = append(p.stmts, g.st("lin.saved", saved, "name", name), g.st("lin.week", week, "name", name),
				g.st("lin.goal", goal, "name", name))
			p.question = g.st("lin.q_weeks", nil, "name", name)
		}
		return p
	},
	solve: func(c *calc, p *problem) *big.Rat {
		switch p.question.pat.id {
		case "lin.q_think":
			return c.div(c.sub(p.v(c, "lin.end"), p.v(c, "lin.add")), p.v(c, "lin.mul"))
		case "lin.q_share":
			parts := c.add(p.v(c, "lin.times"), big.NewRat(1, 1))
			return c.div(p.v(c, "lin.together"), parts)
		default:
			return c.div(c.sub(p.v(c, "lin.goal"), p.v(c, "lin.saved")), p.v(c, "lin.week"))
		}
	},
}

var shoppingFamily = &family{
	name: "shopping",
	patterns: []*pattern{
		{id: "shop.buy", family: "shopping", forms: []string{"{name} buys {n} {items}."}, vague: "{name} buys some {items}.",
			ask: "How many {items} does {name} buy?", cues: []string{"buy", "many"}, num: numCount},
		{id: "shop.each", family: "shopping", forms: []string{"Each {item} costs {$}."}, vague: "The {items} cost some money each.",
			ask: "How much does one {item} cost?", cues: []string{"cost", "much", "one", "each", "price"}, num: numMoney},
		{id: "shop.bill", family: "shopping", forms: []string{"{name} pays with a {$} bill."}, vague: "{name} pays with one bill.",
			ask: "How much is the bill {name} pays with?", cues: []string{"bill", "pay", "pays"}, num: numMoney},
		{id: "shop.q_total", family: "shopping", question: true, forms: []string{"How much does {name} spend in total?"}},
		{id: "shop.q_change", family: "shopping", question: true, forms: []string{"How much change does {name} get back?"}},
	},
	generate: func(g *gen) *problem {
		p := &problem{}
		name := g.name()
		kinds := g.cfg.shoppingItems()
		total := new(big.Rat)
		// Past three kinds (the horizon levels) the counts and prices are
		// drawn distinct, from a count range that grows with the kinds:
		// a withheld number must appear nowhere else in the text (hide),
		// which a dozen draws from 2..9 would almost never allow. Three
		// kinds or fewer draw as they always have.
		used := map[int64]bool{}
		draw := func(lo, hi int) *big.Rat {
			if kinds <= 3 {
				return g.intn(lo, hi)
			}
			for {
				v := g.intn(lo, hi)
				if k := v.Num().Int64(); !used[k] || len(used) > hi-lo {
					used[k] = true
					return v
				}
			}
		}
		maxCount := 9
		if kinds > 3 {
			maxCount = max(9, 2*kinds+1)
		}
		for range kinds {
			it := g.item()
			n, price := draw(2, maxCount), draw(1, g.max())
			total.Add(total, new(big.Rat).Mul(n, price))
			p.stmts = append(p.stmts, g.st("shop.buy", n, "name", name, "items", it), g.st("shop.each", price, "items", it))
		}
		p.question = g.st("shop.q_total", nil, "name", name)
		if g.rng.IntN(2) == 0 {
			for _, bill := range []int64{10, 20, 50, 100, 200, 500} {
				if total.Cmp(big.NewRat(bill, 1)) < 0 {
					p.stmts = append(p.stmts, g.st("shop.bill", big.NewRat(bill, 1), "name", name))
					p.question = g.st("shop.q_change", nil, "name", name)
					break
				}
			}
		}
		return p
	},
	solve: func(c *calc, p *problem) *big.Rat {
		// Pair each purchase with its item's price, in text order.
		var total *big.Rat
		for _, s := range p.stmts {
			if s.pat.id != "shop.buy" {
				continue
			}
			var price *big.Rat
			for _, e := range p.stmts {
				if e.pat.id == "shop.each" && e.slots["items"] == s.slots["items"] {
					price = e.val
				}
			}
			if price == nil || s.val == nil {
				c.err = ErrMissing
				return new(big.Rat)
			}
			cost := c.mul(s.val, price)
			if total == nil {
				total = cost
			} else {
				total = c.add(total, cost)
			}
		}
		if total == nil {
			c.err = ErrMissing
			return new(big.Rat)
		}
		if p.question.pat.id == "shop.q_change" {
			return c.sub(p.v(c, "shop.bill"), total)
		}
		return total
	},
}

var agesFamily = &family{
	name: "ages",
	patterns: []*pattern{
		{id: "age.base", family: "ages", forms: []string{"{name} is {n} years old."}, vague: "{name} is a certain number of years old.",
			ask: "How old is {name}?", cues: []string{"old", "age"}, num: numCount},
		{id: "age.older", family: "ages", forms: []string{"{name} is {n} years older than {name2}."}, vague: "{name} is a few years older than {name2}.",
			ask: "How many years older than {name2} is {name}?", cues: []string{"older", "years"}, num: numCount},
		{id: "age.younger", family: "ages", forms: []string{"{name} is {n} years younger than {name2}."}, vague: "{name} is a few years younger than {name2}.",
			ask: "How many years younger than {name2} is {name}?", cues: []string{"younger", "years"}, num: numCount},
		{id: "age.times", family: "ages", forms: []string{"{name} is {n} times as old as {name2}."}, vague: "{name} is several times as old as {name2}.",
			ask: "How many times as old as {name2} is {name}?", cues: []string{"times", "as"}, num: numCount},
		{id: "age.q", family: "ages", question: true, forms: []string{"How old is {name} [now|today]?"}},
	},
	generate: func(g *gen) *problem {
		p := &problem{}
		prev := g.name()
		age := g.intn(2, 12)
		p.stmts = append(p.stmts, g.st("age.base", age, "name", prev))
		usedTimes := false
		for range max(1, min(g.cfg.Steps, 5)) {
			next := g.name()
			switch r := g.rng.IntN(3); {
			case r == 0 && !usedTimes:
				usedTimes = true
				k := g.intn(2, 3)
				age = new(big.Rat).Mul(age, k)
				p.stmts = append(p.stmts, g.st("age.times", k, "name", next, "name2", prev))
			case r == 1:
				d := g.intn(2, g.max())
				age = new(big.Rat).Sub(age, d)
				p.stmts = append(p.stmts, g.st("age.younger", d, "name", next, "name2", prev))
			default:
				d := g.intn(2, g.max())
				age = new(big.Rat).Add(age, d)
				p.stmts = append(p.stmts, g.st("age.older", d, "name", next, "name2", prev))
			}
			prev = next
		}
		p.question = g.st("age.q", nil, "name", prev)
		return p
	},
	solve: func(c *calc, p *problem) *big.Rat {
		ages := map[string]*big.Rat{}
		for _, s := range p.stmts {
			if s.pat.id == "age.base" {
				ages[s.slots["name"]] = s.val
				continue
			}
			base, ok := ages[s.slots["name2"]]
			if !ok {
				continue
			}
			switch s.pat.id {
			case "age.older":
				ages[s.slots["name"]] = c.add(base, s.val)
			case "age.younger":
				ages[s.slots["name"]] = c.sub(base, s.val)
			case "age.times":
				ages[s.slots["name"]] = c.mul(base, s.val)
			}
		}
		v, ok := ages[p.question.slots["name"]]
		if !ok {
			c.err = ErrMissing
			return new(big.Rat)
		}
		return v
	},
}

var remainderFamily = &family{
	name: "remainder",
	patterns: []*pattern{
		hasPat,
		{id: "rem.more", family: "remainder", forms: []string{"{name} gets {n} more {items}."}, vague: "{name} gets some more {items}.",
			ask: "How many more {items} does {name} get?", cues: []string{"get", "gets", "more"}, num: numCount},
		{id: "rem.bags", family: "remainder", forms: []string{"{name} puts the {items} into bags of {n}."}, vague: "{name} puts the {items} into bags of the same size.",
			ask: "How many {items} go in each bag?", cues: []string{"bag", "each", "go", "put"}, num: numCount},
		{id: "rem.q_left", family: "remainder", question: true, forms: []string{"How many {items} are left over?"}},
		{id: "rem.q_full", family: "remainder", question: true, forms: []string{"How many full bags does {name} make?"}},
	},
	generate: func(g *gen) *problem {
		p := &problem{}
		name, it := g.name(), g.item()
		p.stmts = append(p.stmts, g.st("has", g.intn(g.max(), 5*g.max()), "name", name, "items", it))
		if g.cfg.Steps >= 3 {
			p.stmts = append(p.stmts, g.st("rem.more", g.intn(2, g.max()), "name", name, "items", it))
		}
		p.stmts = append(p.stmts, g.st("rem.bags", g.intn(3, 9), "name", name, "items", it))
		if g.rng.IntN(2) == 0 {
			p.question = g.st("rem.q_left", nil, "items", it)
		} else {
			p.question = g.st("rem.q_full", nil, "name", name)
		}
		return p
	},
	solve: func(c *calc, p *problem) *big.Rat {
		total := p.v(c, "has")
		if p.first("rem.more") != nil {
			total = c.add(total, p.v(c, "rem.more"))
		}
		q, r := c.divmod(total, p.v(c, "rem.bags"))
		if p.question.pat.id == "rem.q_full" {
			return q
		}
		return r
	},
}

// distractors are true but useless sentences; the solver reads and skips
// them. Their words stay apart from every family's cues.
var distractors = []*pattern{
	{id: "dis.dog", distract: true, forms: []string{"{name} has a dog that is {n} years old."}, num: numCount, cues: []string{"dog"}},
	{id: "dis.pages", distract: true, forms: []string{"{name} read {n} pages yesterday."}, num: numCount, cues: []string{"pages", "read"}},
	{id: "dis.degrees", distract: true, forms: []string{"It is {n} degrees outside."}, num: numCount, cues: []string{"degrees", "outside"}},
	{id: "dis.class", distract: true, forms: []string{"{name}'s class has {n} students."}, num: numCount, cues: []string{"class", "students"}},
	{id: "dis.park", distract: true, forms: []string{"The park is {n} blocks from {name}'s house."}, num: numCount, cues: []string{"park", "blocks"}},
}

// lowerFirst lower-cases the first letter of s unless it starts a name.
func lowerFirst(s string) string {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return s
	}
	first := fields[0]
	for _, n := range names {
		if strings.HasPrefix(first, n) {
			return s
		}
	}
	return strings.ToLower(s[:1]) + s[1:]
}
