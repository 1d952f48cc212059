package docedit

// The embedded documents are written from the sentence templates and word
// lists below, all written for this project. The vocabulary is kept small
// on purpose: the embedded policy and simulator are 1–10M-parameter
// language models that must learn to write these documents.

// kindTemplates holds each document kind's sentence templates, in the
// order a document uses them. A slot {x} takes a word from slotWords;
// {x2} takes a different word of the same list than {x}.
var kindTemplates = map[string][]string{
	"memo": {
		"The {team} meeting is on {day} at {time} in room {room}.",
		"{name} will present the new {thing} plan to the whole team.",
		"Please do not forget to bring your {item} and your {item2}.",
		"We would like each person to send their notes to {name2} by {day2}.",
		"The {place} is closed until {time2} because of the {thing2} review.",
		"It is important that we finish the {thing} report before {day}.",
		"We will order {num} new {items} for the {team} team next week.",
		"Thank you for your help with the {thing2} project this month.",
	},
	"note": {
		"{name} called about the {thing} order at {time}.",
		"Remember to buy {num} {items} and a {adj} {item} on the way home.",
		"The spare {item2} is in the {adj2} box next to the {place} door.",
		"{name2} has the keys to the {place} until {day}.",
		"Do not call {name} before {time2} on {day2}.",
		"We cannot pay the {price} dollars for the {thing2} trip yet.",
		"It is cold, so take the {color} coat and a warm hat.",
		"{name} needs the {adj} {item} back by {day}.",
	},
	"product": {
		"The {brand} {pclass} is a {adj} choice for {use}.",
		"It weighs {grams} grams and comes in {color} and {color2}.",
		"The {part} is made of {material} and is easy to clean.",
		"Each box holds one {pclass}, {num} spare {parts} and a short guide.",
		"You can charge it in {num2} hours with the {color} cable.",
		"It costs {price} dollars and ships on {day}.",
		"We will replace any {pclass} that does not work within {days} days.",
		"The {part2} stays cool even after {num2} hours of use.",
	},
	"instructions": {
		"First, open the {container} and take out the {item}.",
		"You will need {num} {items2} and a clean cloth.",
		"Next, place the {item} on a {adj} table and wait {num2} minutes.",
		"Do not touch the {part} while the {device} is on.",
		"Then press the {color} button and hold it for {secs} seconds.",
		"If the light is {color2}, the {device} is ready to use.",
		"Please call {name} if the {device} makes a loud noise.",
		"Finally, close the {container} and store it in a {adj2} place.",
	},
}

// KindNames lists the embedded document kinds.
func KindNames() []string { return []string{"memo", "note", "product", "instructions"} }

// slotWords are the words each slot draws from. Numbers are drawn as
// digits so that "change a number" corruptions are easy to state.
var slotWords = map[string][]string{
	"name":      {"Anna", "Ben", "Clara", "David", "Emma", "Frank", "Grace", "Hugo", "Ida", "Jonas", "Kate", "Leo", "Maria", "Nina", "Omar", "Paul", "Rosa", "Sam", "Tina", "Victor"},
	"day":       {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"},
	"time":      {"9 am", "10 am", "11 am", "noon", "1 pm", "2 pm", "3 pm", "4 pm", "5 pm"},
	"room":      {"2", "4", "7", "12", "15", "21", "30", "34"},
	"team":      {"sales", "design", "support", "finance", "research", "garden", "kitchen"},
	"thing":     {"budget", "travel", "website", "training", "safety", "holiday", "spring"},
	"item":      {"laptop", "notebook", "badge", "key", "charger", "umbrella", "ticket", "phone"},
	"items":     {"chairs", "desks", "lamps", "cups", "folders", "pens", "boxes", "plates"},
	"place":     {"library", "office", "kitchen", "gym", "shop", "garage"},
	"adj":       {"small", "large", "blue", "green", "old", "new", "red", "quiet", "clean"},
	"color":     {"red", "blue", "green", "black", "white", "yellow"},
	"num":       {"2", "3", "4", "5", "6", "8", "10", "12"},
	"price":     {"15", "20", "25", "30", "45", "60", "80", "95"},
	"grams":     {"150", "200", "250", "300", "400", "500", "750"},
	"days":      {"14", "30", "60", "90"},
	"secs":      {"3", "5", "10", "15"},
	"brand":     {"Nova", "Orbit", "Pico", "Luma", "Terra", "Vento"},
	"pclass":    {"lamp", "kettle", "fan", "speaker", "backpack", "clock", "bottle"},
	"use":       {"reading at night", "long trips", "small kitchens", "busy offices", "cold mornings"},
	"material":  {"steel", "wood", "plastic", "glass", "cotton"},
	"part":      {"handle", "lid", "button", "cable", "screen", "base"},
	"parts":     {"handles", "lids", "buttons", "cables", "filters", "bases"},
	"container": {"box", "case", "bag", "drawer"},
	"device":    {"machine", "heater", "printer", "blender"},
}

// synonyms are groups of words a "replace a word" corruption swaps among.
var synonyms = [][]string{
	{"present", "show", "explain"}, {"finish", "complete", "start"}, {"order", "buy", "get"},
	{"spare", "extra", "old"}, {"close", "shut", "lock"}, {"place", "put", "leave"}, {"store", "keep"},
	{"important", "vital", "useful"}, {"whole", "entire"}, {"notes", "ideas", "plans"},
	{"review", "audit", "check"}, {"loud", "strange", "odd"}, {"cool", "cold"}, {"clean", "dry"},
	{"table", "shelf", "desk"}, {"help", "support", "work"}, {"press", "push"}, {"warm", "thick"},
	{"coat", "jacket"}, {"short", "brief", "simple"}, {"easy", "quick"}, {"choice", "pick", "option"},
	{"large", "big", "huge"}, {"small", "little", "tiny"}, {"quiet", "calm"}, {"cloth", "towel"},
	{"guide", "manual"}, {"noise", "sound"}, {"trip", "visit"}, {"report", "summary"}, {"project", "plan"},
	{"meeting", "call"}, {"bring", "take"}, {"send", "give"}, {"month", "week"}, {"remember", "try"},
}

// fillerWords are inserted by the "add a word" corruption.
var fillerWords = []string{"also", "just", "really", "still", "new", "extra", "only", "very"}

// fillerPhrases are appended to a sentence by the "add a phrase" corruption.
var fillerPhrases = []string{"as soon as possible", "if you can", "for now", "this time", "as usual", "if needed"}

// extraSentences are added by the "add a sentence" corruption; none of
// them is ever in a generated target.
var extraSentences = []string{
	"Let me know if you have any questions.",
	"This is a short update for everyone.",
	"More details will follow soon.",
	"Sorry for the late notice.",
	"Ask me if anything is unclear.",
	"I hope this helps a little.",
	"We talked about this last week.",
}

// tensePairs are present and past forms; a tense corruption turns one
// into the other.
var tensePairs = [][2]string{
	{"is", "was"}, {"are", "were"}, {"has", "had"}, {"will", "would"}, {"called", "calls"},
	{"needs", "needed"}, {"weighs", "weighed"}, {"comes", "came"}, {"stays", "stayed"},
	{"ships", "shipped"}, {"makes", "made"}, {"holds", "held"}, {"costs", "cost"}, {"does", "did"},
}

// registerPairs are a formal wording and a casual one.
var registerPairs = [][2]string{
	{"do not", "don't"}, {"Do not", "Don't"}, {"cannot", "can't"}, {"It is", "It's"}, {"it is", "it's"},
	{"We will", "We'll"}, {"You will", "You'll"}, {"does not", "doesn't"}, {"Thank you", "Thanks"},
	{"We would like", "We want"}, {"Please do not forget", "Don't forget"}, {"Please call", "Call"},
	{"Remember to", "Don't forget to"}, {"You can", "You may"},
}
