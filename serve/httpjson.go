package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// Error types in the OpenAI error shape {"error": {"message", "type"}}.
const (
	errInvalid     = "invalid_request_error"
	errNotFound    = "not_found_error"
	errAuth        = "authentication_error"
	errConflict    = "conflict_error"
	errTooLarge    = "request_too_large"
	errCapacity    = "capacity_error"
	errServer      = "server_error"
	errUnavailable = "not_implemented_error"
)

type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   string `json:"param,omitempty"`
	Code    string `json:"code,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		fmt.Fprintf(&buf, `{"error":{"message":"encode reply: %s","type":"server_error"}}`+"\n", jsonEscape(err.Error()))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeErrorCode(w, status, typ, "", "", msg)
}

// writeErrorCode is writeError with OpenAI's code and param fields. A
// client error no retry can fix carries "x-should-retry: false", which
// the official OpenAI SDKs obey over their own rule (they retry 408, 409,
// 429 and 5xx).
func writeErrorCode(w http.ResponseWriter, status int, typ, code, param, msg string) {
	if status >= 400 && status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests {
		w.Header().Set("x-should-retry", "false")
	}
	writeJSON(w, status, map[string]apiError{"error": {Message: msg, Type: typ, Param: param, Code: code}})
}

// writeInvalid answers a request the server cannot honour as asked.
func writeInvalid(w http.ResponseWriter, e *InvalidRequest) {
	writeErrorCode(w, http.StatusBadRequest, errInvalid, e.Code, e.Param, e.Message)
}

// decode reads one JSON object from the body, bounded by limit bytes.
// Unknown fields are errors, so a misspelt field is reported rather than
// silently ignored. It writes the error reply itself and reports false.
func decode(w http.ResponseWriter, r *http.Request, limit int64, v any, strict bool) bool {
	if !jsonContent(r) {
		writeError(w, http.StatusUnsupportedMediaType, errInvalid, fmt.Sprintf("Content-Type %q: send the body as application/json", r.Header.Get("Content-Type")))
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	dec := json.NewDecoder(r.Body)
	if strict {
		dec.DisallowUnknownFields()
	}
	err := dec.Decode(v)
	if err == nil {
		// Trailing data after the object is a malformed request too.
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			err = errors.New("more than one JSON value in the body")
			var mbe *http.MaxBytesError
			if errors.As(terr, &mbe) {
				err = terr
			}
		}
	}
	if err == nil {
		return true
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, errTooLarge, fmt.Sprintf("request body larger than %d bytes", mbe.Limit))
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, errInvalid, "empty request body: want a JSON object")
	default:
		writeError(w, http.StatusBadRequest, errInvalid, "malformed JSON: "+err.Error())
	}
	return false
}

// jsonContent reports whether a request's body is declared JSON. A body
// without a Content-Type is read as JSON (minimal clients send none); one
// declared as anything else — text/plain, a form — is not parsed as if it
// were.
func jsonContent(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}
