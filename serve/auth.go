package serve

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// auth wraps h with the bearer-token check when a token is configured.
// The comparison takes constant time so the token cannot be guessed a byte
// at a time from response latency.
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	if s.cfg.Token == "" {
		return h
	}
	want := []byte(s.cfg.Token)
	return func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="calibrl"`)
			writeError(w, http.StatusUnauthorized, errAuth, "missing or wrong bearer token")
			return
		}
		h(w, r)
	}
}
