package mathchat

import "math/big"

// This file holds the families whose answer is one chain of operations:
// arithmetic chains, rates and unit conversion, percentages, and ratios
// and fractions. families_steps.go holds the multi-step GSM-style ones.

// allFamilies lists every family in registry order.
func allFamilies() []*family {
	return []*family{chainFamily, ratesFamily, percentFamily, ratioFamily, linearFamily, shoppingFamily, agesFamily, remainderFamily}
}

// FamilyNames lists the generator's families in registry order.
func FamilyNames() []string {
	var out []string
	for _, f := range allFamilies() {
		out = append(out, f.name)
	}
	return out
}

const then = "[Then|Next,|After that,] "

// hasPat is shared by the families that start from a count someone has.
var hasPat = &pattern{id: "has", forms: []string{"{name} has {n} {items}."}, vague: "{name} has some {items}.",
	ask: "How many {items} did {name} have at first?", cues: []string{"has", "have", "first", "start"}, num: numCount}

var chainSteps = []*pattern{
	{id: "chain.find", family: "chain", forms: []string{then + "{name} finds {n} more {items}."}, vague: then + "{name} finds some more {items}.",
		ask: "How many more {items} did {name} find?", cues: []string{"find", "found"}, num: numCount},
	{id: "chain.buy", family: "chain", forms: []string{then + "{name} buys {n} more {items}."}, vague: then + "{name} buys some more {items}.",
		ask: "How many more {items} did {name} buy?", cues: []string{"buy", "bought"}, num: numCount},
	{id: "chain.give", family: "chain", forms: []string{then + "{name} gives {n} {items} to a friend."}, vague: then + "{name} gives some {items} to a friend.",
		ask: "How many {items} did {name} give to the friend?", cues: []string{"give", "gave", "friend"}, num: numCount},
	{id: "chain.lose", family: "chain", forms: []string{then + "{name} loses {n} {items}."}, vague: then + "{name} loses some {items}.",
		ask: "How many {items} did {name} lose?", cues: []string{"lose", "lost"}, num: numCount},
	{id: "chain.times", family: "chain", forms: []string{then + "{name} makes the pile of {items} {n} times as big."}, vague: then + "{name} makes the pile of {items} a few times as big.",
		ask: "How many times as big did {name} make the pile of {items}?", cues: []string{"times", "big", "pile"}, num: numCount},
	{id: "chain.split", family: "chain", forms: []string{then + "{name} splits the {items} into {n} equal groups and keeps one group."}, vague: then + "{name} splits the {items} into some equal groups and keeps one group.",
		ask: "How many equal groups did {name} split the {items} into?", cues: []string{"groups", "equal", "split"}, num: numCount},
}

var chainFamily = &family{
	name: "chain",
	patterns: append([]*pattern{hasPat,
		{id: "chain.q", family: "chain", question: true, forms: []string{"How many {items} does {name} have [now|in the end]?"}}}, chainSteps...),
	generate: func(g *gen) *problem {
		name, it := g.name(), g.item()
		cur := g.intn(2, g.max())
		p := &problem{stmts: []*stmt{g.st("has", cur, "name", name, "items", it)}}
		steps := min(g.cfg.Steps, len(chainSteps))
		for _, i := range g.rng.Perm(len(chainSteps))[:steps] {
			pat := chainSteps[i]
			var v *big.Rat
			switch pat.id {
			case "chain.find", "chain.buy":
				v = g.intn(2, g.max())
				cur = new(big.Rat).Add(cur, v)
			case "chain.give", "chain.lose":
				v = g.intn(2, int(cur.Num().Int64())-1)
				cur = new(big.Rat).Sub(cur, v)
			case "chain.times":
				v = g.intn(2, 3)
				cur = new(big.Rat).Mul(cur, v)
			case "chain.split":
				v = g.intn(2, 5)
				cur = new(big.Rat).Quo(cur, v)
			}
			p.stmts = append(p.stmts, g.st(pat.id, v, "name", name, "items", it))
		}
		p.question = g.st("chain.q", nil, "name", name, "items", it)
		return p
	},
	solve: func(c *calc, p *problem) *big.Rat {
		var cur *big.Rat
		for _, s := range p.stmts {
			if s.pat.id == "has" {
				cur = s.val
				continue
			}
			if cur == nil {
				continue
			}
			switch s.pat.id {
			case "chain.find", "chain.buy":
				cur = c.add(cur, s.val)
			case "chain.give", "chain.lose":
				cur = c.sub(cur, s.val)
			case "chain.times":
				cur = c.mul(cur, s.val)
			case "chain.split":
				cur = c.div(cur, s.val)
			}
		}
		if cur == nil {
			c.err = ErrMissing
			return new(big.Rat)
		}
		return cur
	},
}

var ratesFamily = &family{
	name: "rates",
	patterns: []*pattern{
		{id: "rate.speed", family: "rates", forms: []string{"{name} drives at {n} km per hour."}, vague: "{name} drives at a steady speed.",
			ask: "How fast does {name} drive, in km per hour?", cues: []string{"fast", "speed", "km", "drive"}, num: numCount},
		{id: "rate.hours", family: "rates", forms: []string{"{name} drives for {n} hours."}, vague: "{name} drives for a few hours.",
			ask: "How many hours does {name} drive for?", cues: []string{"hours", "long", "drive"}, num: numCount},
		{id: "rate.minutes", family: "rates", forms: []string{"{name} drives for {n} minutes."}, vague: "{name} drives for some minutes.",
			ask: "How many minutes does {name} drive for?", cues: []string{"minutes", "long", "drive"}, num: numCount},
		{id: "rate.q_dist", family: "rates", question: true, forms: []string{"How many km does {name} drive?"}},
		{id: "rate.wage", family: "rates", forms: []string{"{name} earns {$} per hour."}, vague: "{name} earns some money per hour.",
			ask: "How much does {name} earn per hour?", cues: []string{"earn", "per", "hour", "much"}, num: numMoney},
		{id: "rate.workday", family: "rates", forms: []string{"{name} works {n} hours a day."}, vague: "{name} works a few hours a day.",
			ask: "How many hours a day does {name} work?", cues: []string{"hours", "day", "work"}, num: numCount},
		{id: "rate.days", family: "rates", forms: []string{"{name} works for {n} days in total."}, vague: "{name} works for some days in total.",
			ask: "How many days in total does {name} work?", cues: []string{"days", "total", "work"}, num: numCount},
		{id: "rate.q_pay", family: "rates", question: true, forms: []string{"How much money does {name} earn in all?"}},
		{id: "rate.make", family: "rates", forms: []string{"A machine makes {n} {items} per minute."}, vague: "A machine makes some {items} per minute.",
			ask: "How many {items} does the machine make per minute?", cues: []string{"machine", "make", "minute", "per"}, num: numCount},
		{id: "rate.run", family: "rates", forms: []string{"The machine runs for {n} hours."}, vague: "The machine runs for a few hours.",
			ask: "How many hours does the machine run for?", cues: []string{"run", "hours", "machine"}, num: numCount},
		{id: "rate.q_make", family: "rates", question: true, forms: []string{"How many {items} does the machine make in all?"}},
		{id: "rate.tank", family: "rates", forms: []string{"A tank holds {n} liters of water."}, vague: "A tank holds some liters of water.",
			ask: "How many liters does the tank hold?", cues: []string{"tank", "hold", "liters"}, num: numCount},
		{id: "rate.pump", family: "rates", forms: []string{"A pump adds {n} liters of water per minute."}, vague: "A pump adds some liters of water per minute.",
			ask: "How many liters per minute does the pump add?", cues: []string{"pump", "add", "minute", "per"}, num: numCount},
		{id: "rate.q_fill", family: "rates", question: true, forms: []string{"How many minutes does it take to fill the tank?"}},
	},
	generate: func(g *gen) *problem {
		name := g.name()
		p := &problem{}
		switch g.rng.IntN(4) {
		case 0:
			p.stmts = append(p.stmts, g.st("rate.speed", g.mul(g.intn(2, g.max()), 5), "name", name))
			if g.cfg.Steps >= 3 && g.rng.IntN(2) == 0 {
				p.stmts = append(p.stmts, g.st("rate.minutes", g.mul(g.intn(2, 36), 5), "name", name))
			} else {
				p.stmts = append(p.stmts, g.st("rate.hours", g.intn(2, 9), "name", name))
			}
			p.question = g.st("rate.q_dist", nil, "name", name)
		case 1:
			p.stmts = append(p.stmts, g.st("rate.wage", g.intn(2, g.max()), "name", name),
				g.st("rate.workday", g.intn(2, 9), "name", name))
			if g.cfg.Steps >= 2 {
				p.stmts = append(p.stmts, g.st("rate.days", g.intn(2, 7), "name", name))
			}
			p.question = g.st("rate.q_pay", nil, "name", name)
		case 2:
			it := g.item()
			p.stmts = append(p.stmts, g.st("rate.make", g.intn(2, g.max()), "items", it),
				g.st("rate.run", g.intn(2, 5)))
			p.question = g.st("rate.q_make", nil, "items", it)
		default:
			pump := g.intn(2, g.max())
			p.stmts = append(p.stmts, g.st("rate.tank", g.times(pump, g.intn(2, 3*g.max()))),
				g.st("rate.pump", pump))
			p.question = g.st("rate.q_fill", nil)
		}
		return p
	},
	solve: func(c *calc, p *problem) *big.Rat {
		switch p.question.pat.id {
		case "rate.q_dist":
			if p.first("rate.hours") != nil {
				return c.mul(p.v(c, "rate.speed"), p.v(c, "rate.hours"))
			}
			return c.div(c.mul(p.v(c, "rate.speed"), p.v(c, "rate.minutes")), big.NewRat(60, 1))
		case "rate.q_pay":
			v := c.mul(p.v(c, "rate.wage"), p.v(c, "rate.workday"))
			if p.first("rate.days") != nil {
				v = c.mul(v, p.v(c, "rate.days"))
			}
			return v
		case "rate.q_make":
			perHour := c.mul(p.v(c, "rate.make"), big.NewRat(60, 1))
			return c.mul(perHour, p.v(c, "rate.run"))
		default:
			return c.div(p.v(c, "rate.tank"), p.v(c, "rate.pump"))
		}
	},
}

var percentFamily = &family{
	name: "percent",
	patterns: []*pattern{
		{id: "pct.price", family: "percent", forms: []string{"A {thing} costs {$}."}, vague: "A {thing} costs some money.",
			ask: "How much does the {thing} cost?", cues: []string{"cost", "price", "much"}, num: numMoney},
		{id: "pct.off", family: "percent", forms: []string{"It is on sale for {%} off."}, vague: "It is on sale for some percent off.",
			ask: "What percent off is the sale?", cues: []string{"sale", "off", "percent", "discount"}, num: numPercent},
		{id: "pct.count", family: "percent", forms: []string{"{name} buys {n} of them."}, vague: "{name} buys a few of them.",
			ask: "How many of them does {name} buy?", cues: []string{"buy", "them", "many"}, num: numCount},
		{id: "pct.q_one", family: "percent", question: true, forms: []string{"How much does the {thing} cost on sale?"}},
		{id: "pct.q_total", family: "percent", question: true, forms: []string{"How much does {name} pay in total?"}},
		{id: "pct.box", family: "percent", forms: []string{"There are {n} {items} in a box."}, vague: "There are some {items} in a box.",
			ask: "How many {items} are in the box?", cues: []string{"box", "there"}, num: numCount},
		{id: "pct.red", family: "percent", forms: []string{"{%} of the {items} are red."}, vague: "Some of the {items} are red.",
			ask: "What percent of the {items} are red?", cues: []string{"percent", "red"}, num: numPercent},
		{id: "pct.q_red", family: "percent", question: true, forms: []string{"How many {items} are not red?"}},
		{id: "pct.points", family: "percent", forms: []string{"{name} scored {n} points last week."}, vague: "{name} scored some points last week.",
			ask: "How many points did {name} score last week?", cues: []string{"points", "last", "week", "scored"}, num: numCount},
		{id: "pct.more", family: "percent", forms: []string{"This week {name} scored {%} more points."}, vague: "This week {name} scored a certain percent more points.",
			ask: "What percent more points did {name} score this week?", cues: []string{"percent", "more", "this", "week", "points", "scored"}, num: numPercent},
		{id: "pct.q_more", family: "percent", question: true, forms: []string{"How many points did {name} score this week?"}},
	},
	generate: func(g *gen) *problem {
		p := &problem{}
		pct := g.mul(g.intn(1, 9), 10)
		if g.rng.IntN(2) == 0 {
			pct = g.mul(g.intn(1, 19), 5)
		}
		switch g.rng.IntN(3) {
		case 0:
			th := g.thing()
			p.stmts = append(p.stmts, g.st("pct.price", g.mul(g.intn(2, g.max()), 5), "thing", th), g.st("pct.off", pct))
			p.question = g.st("pct.q_one", nil, "thing", th)
			if g.cfg.Steps >= 3 {
				name := g.name()
				p.stmts = append(p.stmts, g.st("pct.count", g.intn(2, 5), "name", name))
				p.question = g.st("pct.q_total", nil, "name", name)
			}
		case 1:
			it := g.item()
			p.stmts = append(p.stmts, g.st("pct.box", g.mul(g.intn(2, g.max()), 4), "items", it), g.st("pct.red", pct, "items", it))
			p.question = g.st("pct.q_red", nil, "items", it)
		default:
			name := g.name()
			p.stmts = append(p.stmts, g.st("pct.points", g.mul(g.intn(2, g.max()), 5), "name", name), g.st("pct.more", pct, "name", name))
			p.question = g.st("pct.q_more", nil, "name", name)
		}
		return p
	},
	solve: func(c *calc, p *problem) *big.Rat {
		hundred := big.NewRat(100, 1)
		switch p.question.pat.id {
		case "pct.q_one", "pct.q_total":
			keep := c.sub(hundred, p.v(c, "pct.off"))
			sale := c.percentOf(keep, p.v(c, "pct.price"))
			if p.question.pat.id == "pct.q_total" {
				return c.mul(sale, p.v(c, "pct.count"))
			}
			return sale
		case "pct.q_red":
			notRed := c.sub(hundred, p.v(c, "pct.red"))
			return c.percentOf(notRed, p.v(c, "pct.box"))
		default:
			grow := c.add(hundred, p.v(c, "pct.more"))
			return c.percentOf(grow, p.v(c, "pct.points"))
		}
	},
}

var ratioFamily = &family{
	name: "ratio",
	patterns: []*pattern{
		{id: "ratio.flour", family: "ratio", forms: []string{"A recipe uses {n} cups of flour for each batch."}, vague: "A recipe uses some cups of flour for each batch.",
			ask: "How many cups of flour does one batch use?", cues: []string{"flour", "batch", "one", "each"}, num: numCount},
		{id: "ratio.sugar", family: "ratio", forms: []string{"It uses {n} cups of sugar for each batch."}, vague: "It uses some cups of sugar for each batch.",
			ask: "How many cups of sugar does one batch use?", cues: []string{"sugar", "batch", "one", "each"}, num: numCount},
		{id: "ratio.used", family: "ratio", forms: []string{"{name} uses {n} cups of sugar in all."}, vague: "{name} uses some cups of sugar in all.",
			ask: "How many cups of sugar does {name} use in all?", cues: []string{"sugar", "all", "use"}, num: numCount},
		{id: "ratio.q_flour", family: "ratio", question: true, forms: []string{"How many cups of flour does {name} use?"}},
		hasPat,
		{id: "ratio.give", family: "ratio", forms: []string{"{name} gives away {frac} of them."}, vague: "{name} gives away part of them.",
			ask: "What fraction of them does {name} give away?", cues: []string{"fraction", "give", "away", "part"}, num: numFrac},
		{id: "ratio.q_left", family: "ratio", question: true, forms: []string{"How many {items} does {name} have left?"}},
		{id: "ratio.scale", family: "ratio", forms: []string{"On the map, each cm stands for {n} km."}, vague: "On the map, each cm stands for some km.",
			ask: "How many km does each cm stand for on the map?", cues: []string{"km", "stand", "each", "map"}, num: numCount},
		{id: "ratio.dist", family: "ratio", forms: []string{"Two towns are {n} cm apart on the map."}, vague: "Two towns are a few cm apart on the map.",
			ask: "How many cm apart are the towns on the map?", cues: []string{"cm", "apart", "towns", "map"}, num: numCount},
		{id: "ratio.q_km", family: "ratio", question: true, forms: []string{"How many km apart are the two towns?"}},
	},
	generate: func(g *gen) *problem {
		p := &problem{}
		name := g.name()
		switch g.rng.IntN(3) {
		case 0:
			sugar := g.intn(2, 5)
			p.stmts = append(p.stmts, g.st("ratio.flour", g.intn(2, 9)), g.st("ratio.sugar", sugar),
				g.st("ratio.used", g.times(sugar, g.intn(2, g.max())), "name", name))
			p.question = g.st("ratio.q_flour", nil, "name", name)
		case 1:
			it := g.item()
			den := g.intn(2, 6)
			frac := new(big.Rat).Quo(g.intn(1, int(den.Num().Int64())-1), den)
			p.stmts = append(p.stmts, g.st("has", g.times(den, g.intn(2, g.max())), "name", name, "items", it),
				g.st("ratio.give", frac, "name", name))
			p.question = g.st("ratio.q_left", nil, "name", name, "items", it)
		default:
			p.stmts = append(p.stmts, g.st("ratio.scale", g.intn(2, g.max())), g.st("ratio.dist", g.intn(2, g.max())))
			p.question = g.st("ratio.q_km", nil)
		}
		return p
	},
	solve: func(c *calc, p *problem) *big.Rat {
		switch p.question.pat.id {
		case "ratio.q_flour":
			batches := c.div(p.v(c, "ratio.used"), p.v(c, "ratio.sugar"))
			return c.mul(batches, p.v(c, "ratio.flour"))
		case "ratio.q_left":
			has := p.v(c, "has")
			given := c.mul(has, p.v(c, "ratio.give"))
			return c.sub(has, given)
		default:
			return c.mul(p.v(c, "ratio.dist"), p.v(c, "ratio.scale"))
		}
	},
}
