// Package admin serves fray's JSON admin API over the active profile:
//
//	GET  /profile                 the active profile
//	PUT  /profile                 a new TOML profile in the body, checked, then swapped in
//	POST /faults/{index}/disable  switch a fault off
//	POST /faults/{index}/enable   switch it back on
//	GET  /stats                   decisions per fault
//	GET  /metrics                 Prometheus metrics, once HandleMetrics mounted them
//	GET  /debug/pprof/...         the Go runtime's profiles (heap, goroutine, CPU, ...)
//
// Errors are answered with a status and {"errors": [{"message": ...}]};
// a rejected profile lists every problem with its line and column.
//
// The API changes what fray does to live traffic, so it listens on
// loopback unless told otherwise, and anywhere else only behind a bearer
// token (see Check, Listen and RequireToken).
package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"strconv"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/checks"
)

// Control is what the admin API reads and changes: the profile in force.
// *profiles.Active implements it, and so does an engine, which records
// each change. Each method reads the profile in force once, so that what
// it returns belongs to one profile even while another is swapped in.
// Implementations must be safe for concurrent use.
type Control interface {
	// Snapshot returns the profile in force, its seed and its per-fault
	// counters, read together.
	Snapshot() (*profiles.Profile, uint64, []faults.FaultStats)
	// Swap puts a profile in force; on error nothing changes.
	Swap(p *profiles.Profile) error
	// SetEnabled switches one fault on or off and returns its counters,
	// from the profile it was switched in; it wraps faults.ErrNoFault for
	// an index that profile does not have.
	SetEnabled(index int, on bool) (faults.FaultStats, error)
}

// Handler is the admin API. It is safe for concurrent use; it holds no
// state of its own beyond the Control it was given.
type Handler struct {
	active Control
	mux    *http.ServeMux
}

// New returns the admin API over active, which must not be nil.
func New(active Control) *Handler {
	h := &Handler{active: active, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /profile", h.getProfile)
	h.mux.HandleFunc("PUT /profile", h.putProfile)
	h.mux.HandleFunc("POST /faults/{index}/disable", h.setEnabled(false))
	h.mux.HandleFunc("POST /faults/{index}/enable", h.setEnabled(true))
	h.mux.HandleFunc("GET /stats", h.stats)
	// The runtime's profiles, for a soak whose memory or CPU needs
	// explaining: the named ones (heap, goroutine, allocs, ...; ?gc=1
	// collects first), a CPU profile and an execution trace. Not the
	// command line, which may hold the admin token.
	h.mux.HandleFunc("GET /debug/pprof/{name}", profileHandler)
	h.mux.HandleFunc("GET /debug/pprof/{$}", pprof.Index)
	return h
}

// profileHandler serves the profile the path names; cmdline, which pprof
// would also serve, is not one.
func profileHandler(w http.ResponseWriter, r *http.Request) {
	switch name := r.PathValue("name"); name {
	case "profile":
		pprof.Profile(w, r)
	case "trace":
		pprof.Trace(w, r)
	case "cmdline", "symbol":
		http.NotFound(w, r)
	default:
		pprof.Handler(name).ServeHTTP(w, r)
	}
}

// HandleMetrics serves m at GET /metrics, behind whatever guards the rest of
// the API. Call it before serving.
func (h *Handler) HandleMetrics(m http.Handler) { h.mux.Handle("GET /metrics", m) }

// ServeHTTP routes a request of the admin API.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// ProfileView is the JSON of GET and PUT /profile.
type ProfileView struct {
	Name        string                     `json:"name"`
	Description string                     `json:"description"`
	Seed        uint64                     `json:"seed"`
	File        string                     `json:"file"`
	Checks      map[string]checks.Severity `json:"checks"`
	Faults      []faults.FaultStats        `json:"faults"`
	TOML        string                     `json:"toml"`
}

// ProblemView is one error in an error answer; Line and Col are 0 when
// the problem has no position.
type ProblemView struct {
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
}

// StatsView is the JSON of GET /stats.
type StatsView struct {
	Profile string              `json:"profile"`
	Seed    uint64              `json:"seed"`
	Faults  []faults.FaultStats `json:"faults"`
}

func (h *Handler) view() ProfileView {
	p, seed, stats := h.active.Snapshot()
	sev := p.Checks
	if sev == nil {
		sev = map[string]checks.Severity{}
	}
	return ProfileView{
		Name: p.Name, Description: p.Description, Seed: seed, File: p.File,
		Checks: sev, Faults: stats, TOML: string(p.Text),
	}
}

func (h *Handler) getProfile(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, h.view())
}

func (h *Handler) putProfile(w http.ResponseWriter, r *http.Request) {
	body := http.MaxBytesReader(w, r.Body, profiles.MaxSize)
	p, err := profiles.Parse("profile", body)
	if err == nil {
		err = h.active.Swap(p)
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeProblems(w, http.StatusRequestEntityTooLarge,
				fmt.Errorf("admin: the profile is more than %d bytes, over the limit for a profile; send a smaller one", tooBig.Limit))
			return
		}
		writeProblems(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, h.view())
}

func (h *Handler) setEnabled(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		index, err := strconv.Atoi(r.PathValue("index"))
		if err != nil {
			writeProblems(w, http.StatusBadRequest, fmt.Errorf("fault index %q is not a number", r.PathValue("index")))
			return
		}
		st, err := h.active.SetEnabled(index, on)
		if err != nil {
			writeProblems(w, http.StatusNotFound, err)
			return
		}
		writeJSON(w, http.StatusOK, st)
	}
}

func (h *Handler) stats(w http.ResponseWriter, _ *http.Request) {
	p, seed, stats := h.active.Snapshot()
	writeJSON(w, http.StatusOK, StatsView{Profile: p.Name, Seed: seed, Faults: stats})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away; nothing to do
}

// writeProblems answers with every problem in err.
func writeProblems(w http.ResponseWriter, status int, err error) {
	var out []ProblemView
	var es profiles.Errors
	if errors.As(err, &es) {
		for _, e := range es {
			out = append(out, ProblemView{Message: e.Error(), Path: e.Path, Line: e.Line, Col: e.Col})
		}
	} else {
		out = []ProblemView{{Message: err.Error()}}
	}
	writeJSON(w, status, struct {
		Errors []ProblemView `json:"errors"`
	}{out})
}
