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

// Read returns the value of the variable varName, which must be set and
// non-empty. Its errors name the variable only when it is a plausible
// name, and never show the value.
func Read(varName string) (string, error) {
	if err := Check(varName); err != nil {
		return "", err
	}
	v, ok := os.LookupEnv(varName)
	if !ok || v == "" {
		return "", fmt.Errorf("environment variable %s is empty or unset", varName)
	}
	return v, nil
}
