package serve

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/task"
)

// createReply posts a create request for taskName and returns the status
// and the whole reply body.
func createReply(t *testing.T, url, taskName string) (int, string) {
	t.Helper()
	resp, err := http.Post(url+"/v1/episodes", "application/json", strings.NewReader(`{"task": "`+taskName+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// No reply shows the server's paths: not its working directory to a
// client that names data by a path ("data=x"), nor where its --data lies
// when that file changed while serving. The client is told what to do.
func TestRepliesShowNoServerPath(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "gsm.jsonl")
	src, err := os.ReadFile("../task/testdata/gsm8k/train.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, src, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := task.UseData("mathchat", data)
	if err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, func(_ *Config, o *Options) { o.Task = task.Lookup })

	status, body := createReply(t, ts.URL, "mathchat:data=x")
	if status != 400 || strings.Contains(body, wd) || !strings.Contains(body, "sha256") {
		t.Errorf("data=x: %d %s; want a 400 that asks for the hash and shows no server folder (%s)", status, body, wd)
	}
	if status, body := createReply(t, ts.URL, "mathchat:data=sha256:"+d.SHA256); status != 201 {
		t.Fatalf("the served data by hash: %d %s", status, body)
	}
	// The file changes while serving; a task not cached yet reads it again.
	if err := os.WriteFile(data, append(src, src...), 0o644); err != nil {
		t.Fatal(err)
	}
	status, body = createReply(t, ts.URL, "mathchat:easy:data=sha256:"+d.SHA256)
	if status != 400 || strings.Contains(body, dir) || strings.Contains(body, wd) || !strings.Contains(body, d.SHA256) {
		t.Errorf("changed data: %d %s; want a 400 naming the hash, not the server's path %s", status, body, data)
	}
}
