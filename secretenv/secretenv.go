// Package secretenv reads secrets (API keys, bearer tokens) from the
// environment variables that flags and configurations name. A secret is
// named, never given, on a command line or in a file, and the most common
// slip is to paste the secret where its variable's name belongs; so a
// value that cannot be a variable name, or looks like a key, is refused
// without being repeated: an error travels to logs and terminals.
package secretenv

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// name matches a plausible environment variable name.
var name = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// LooksLikeSecret reports whether s, given as the name of a variable, is
// rather a secret pasted where the name belongs: not a variable name at
// all, or a long word that is a mix of lower case and digits or has no
// underscore, as keys and tokens are and names (OPENAI_API_KEY) are not.
func LooksLikeSecret(s string) bool {
	if !name.MatchString(s) {
		return true
	}
	if len(s) < 20 {
		return false
	}
	lower := strings.ToUpper(s) != s
	digits := strings.ContainsAny(s, "0123456789")
	return lower && digits || !strings.Contains(s, "_")
}

// ErrLooksLikeSecret is Check's error: the value is not repeated.
var ErrLooksLikeSecret = errors.New("must name the environment variable that holds the secret (letters, digits and _, e.g. CALIBRL_TOKEN); the value given looks like a secret itself and is not shown")

// Check reports a variable name that looks like a secret (LooksLikeSecret).
func Check(varName string) error {
	if LooksLikeSecret(varName) {
		return ErrLooksLikeSecret
	}
	return nil
}

// ErrNotSet is Read's error for a name no environment variable has. The
// name is not repeated: a short secret pasted where its variable's name
// belongs (hunter2, a 16-hex token) looks like a name, and only the
// environment tells them apart.
var ErrNotSet = errors.New("expected the name of a set environment variable that holds the secret (e.g. CALIBRL_TOKEN); no variable of the name given is set, and the value given is not shown, as it may be the secret itself")

// Read returns the value of the variable varName, which must be set and
// non-empty. It never shows what it was given unless that is the name of
// a variable that is set: a value that looks like a secret
// (ErrLooksLikeSecret) or names no set variable (ErrNotSet) is not
// repeated, whatever its shape.
func Read(varName string) (string, error) {
	if err := Check(varName); err != nil {
		return "", err
	}
	v, ok := os.LookupEnv(varName)
	if !ok {
		return "", ErrNotSet
	}
	if v == "" {
		return "", fmt.Errorf("environment variable %s is set but empty", varName)
	}
	return v, nil
}
