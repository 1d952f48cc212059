package remote

import (
	"net/url"
	"regexp"
	"strings"
)

// Credentials reach calibrl two ways: a key read from the environment, and
// user-info in a base URL (http://user:pass@host/v1). Neither may ever
// appear in an error, a log line or an HTTP reply, and errors travel far:
// a request's errors name its URL (net/http's do), and calibrl serve
// sends a failed turn's error to its client. So endpoints are named by
// their redacted URL, and every error an endpoint returns is scrubbed of
// user-info and of the endpoint's secrets before it leaves the pool.

// userInfo matches the user-info of any URL in a text ("scheme://…@").
var userInfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s"'@]*@`)

// RedactURL is raw without its user-info and with its query values
// replaced (servers that take ?key=…), for naming an endpoint.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return userInfo.ReplaceAllString(raw, "$1")
	}
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"REDACTED"}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// scrub removes user-info from every URL in s and replaces each secret.
func scrub(s string, secrets []string) string {
	s = userInfo.ReplaceAllString(s, "$1")
	for _, sec := range secrets {
		s = strings.ReplaceAll(s, sec, "REDACTED")
	}
	return s
}

// redactedError is err with a scrubbed message. It unwraps to err, so the
// retry rule can still look at the status code.
type redactedError struct {
	err     error
	secrets []string
}

func (e *redactedError) Error() string { return scrub(e.err.Error(), e.secrets) }
func (e *redactedError) Unwrap() error { return e.err }

func redact(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	return &redactedError{err: err, secrets: secrets}
}

// secretsOf lists what of an endpoint must never be shown: its key and
// the password and user-info of its base URL, raw and escaped. Very short
// strings are left out: replacing "a" everywhere would garble messages,
// and user-info is removed wholesale anyway.
func secretsOf(baseURL, key string) []string {
	var out []string
	add := func(s string) {
		if len(s) >= 4 {
			out = append(out, s)
		}
	}
	add(key)
	if u, err := url.Parse(baseURL); err == nil && u.User != nil {
		add(u.User.String())
		if p, ok := u.User.Password(); ok {
			add(p)
			add(url.QueryEscape(p))
		}
	}
	return out
}
