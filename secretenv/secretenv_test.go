package secretenv

import (
	"strings"
	"testing"
)

func TestLooksLikeSecret(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"CALIBRL_TOKEN", false},
		{"OPENAI_API_KEY", false},
		{"my_token", false},
		{"CALIBRL_SERVE_BEARER_TOKEN_V2", false},
		{"TOKENWITHOUTLOWERCASE12345", true},
		{"3f9a1c0e5b7d2468ace13579bdf02468", true}, // openssl rand -hex 16
		{"a3f9a1c0e5b7d2468ace13579bdf0246", true},
		{"sk-proj-abc123", true},
		{"tok en", true},
		{"", true},
	} {
		if got := LooksLikeSecret(c.s); got != c.want {
			t.Errorf("LooksLikeSecret(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}

func TestReadNeverShowsTheSecret(t *testing.T) {
	const secret = "a3f9a1c0e5b7d2468ace13579bdf0246"
	t.Setenv("CALIBRL_SECRETENV_TEST", "")
	for _, name := range []string{secret, "sk-" + secret, secret + "\n"} {
		_, err := Read(name)
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("Read(pasted secret): %v, want an error that does not show it", err)
		}
	}
	if _, err := Read("CALIBRL_SECRETENV_TEST"); err == nil || !strings.Contains(err.Error(), "CALIBRL_SECRETENV_TEST") {
		t.Errorf("Read(empty variable): %v, want an error naming it", err)
	}
	t.Setenv("CALIBRL_SECRETENV_TEST", "v")
	if v, err := Read("CALIBRL_SECRETENV_TEST"); err != nil || v != "v" {
		t.Errorf("Read = %q, %v", v, err)
	}
}
