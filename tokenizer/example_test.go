package tokenizer_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/calibrl/calibrl/tokenizer"
)

func Example() {
	texts := []string{
		"user: How many apples are left?\nassistant: How many did you buy?",
		"user: I bought 12 apples and ate 3.\nassistant: Then 9 are left.",
	}
	cfg := tokenizer.DefaultTrainConfig()
	cfg.VocabSize = 300
	tok, err := tokenizer.Train(texts, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := tok.Encode("How many apples?")
	fmt.Println(tok.Decode(ids))

	// Checkpoints keep the tokenizer as tokenizer.json.
	path := filepath.Join(os.TempDir(), "example-tokenizer.json")
	defer os.Remove(path)
	if err := tok.Save(path); err != nil {
		fmt.Println(err)
		return
	}
	back, err := tokenizer.Load(path)
	fmt.Println(err, back.Equal(tok))
	// Output:
	// How many apples?
	// <nil> true
}

func ExampleTokenizer_RenderChat() {
	cfg := tokenizer.DefaultTrainConfig()
	cfg.VocabSize = 262 // bytes and specials only: one token per byte
	tok, _ := tokenizer.Train(nil, cfg)
	ids, roles, err := tok.RenderChat([]tokenizer.Message{
		{Role: "user", Content: "2+2?"},
		{Role: "assistant", Content: "4"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tok.Decode(ids))
	fmt.Println(len(ids), roles)
	fmt.Println(tokenizer.RoleMask(roles, tokenizer.RoleAssistant))

	// A model continues a prompt that opens the next turn, then the reply
	// is read up to <|end|> or <|done|>.
	prompt, _, _ := tok.RenderPrompt([]tokenizer.Message{{Role: "user", Content: "hi"}}, "assistant")
	end, _ := tok.SpecialID(tokenizer.End)
	generated := append(tok.Encode("hello"), end)
	reply := tok.ParseReply(generated)
	fmt.Println(len(prompt), reply.Text, reply.Stop, reply.Done())
	// Output:
	// <|user|>2+2?<|end|><|assistant|>4<|end|>
	// 9 [user user user user user user assistant assistant assistant]
	// [false false false false false false true true true]
	// 5 hello <|end|> false
}
