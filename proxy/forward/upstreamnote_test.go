package forward_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestUpstreamNotes: a client path that repeats the upstream's base path
// is warned about once, and the upstream's first error status is logged at
// info with the URL fray requested, once.
func TestUpstreamNotes(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	defer up.Close()
	base, rec := front(t, up.URL+"/mcp")
	for range 2 {
		resp := get(t, base+"/mcp?sessionId=secret")
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	doubled := rec.find("the client's path already begins with the upstream's base path, which fray puts in front of it; point the client at fray's / or give the upstream without the path")
	if len(doubled) != 1 || doubled[0]["level"] != "WARN" || doubled[0]["forwarded_path"] != "/mcp/mcp" {
		t.Errorf("doubled-path warnings %v; log:\n%s", doubled, rec.text())
	}
	notes := rec.find("the upstream answered with an error status (first time; later ones are not logged at info)")
	if len(notes) != 1 || notes[0]["level"] != "INFO" || notes[0]["status"] != "404" ||
		notes[0]["requested"] != up.URL+"/mcp/mcp?sessionId=redacted" {
		t.Errorf("error-status notes %v; log:\n%s", notes, rec.text())
	}
	if strings.Contains(rec.text(), "secret") {
		t.Errorf("a query value reached the log:\n%s", rec.text())
	}
}
