package proxy

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/checks"
	"github.com/frayproxy/fray/proxy/report"
	"github.com/frayproxy/fray/proxy/trace"
	"github.com/frayproxy/fray/proxy/verify"
)

// Check feeds a recorded trace into a verifier set up as the live run's
// was, and returns the same final report: `fray check` and the timeline
// judge a trace here. note says what the caller should know (a profile
// this fray no longer validates). A trace that cannot be read is an error
// wrapping the trace package's.
func Check(rd *trace.Reader) (r report.Report, note string, err error) {
	opts, note, err := VerifyOptions(rd.Header())
	if err != nil {
		return report.Report{}, "", err
	}
	v := verify.New(opts)
	end, err := feed(rd, v)
	if err != nil {
		return report.Report{}, "", err
	}
	return Settle(v, end), note, nil
}

// Judge is Check for a trace read whole (trace.ReadFile): the timeline
// draws the findings of the observations it draws.
func Judge(t *trace.Trace) (r report.Report, note string, err error) {
	opts, note, err := VerifyOptions(t.Header)
	if err != nil {
		return report.Report{}, "", err
	}
	v := verify.New(opts)
	for _, o := range t.Observations {
		v.Observe(o)
	}
	return Settle(v, t.End), note, nil
}

// feed passes every observation of rd to v, in order, and returns how the
// run ended: the end line's account, or for a partial read the last
// observation's time, not drained.
func feed(rd *trace.Reader, v *verify.Verifier) (trace.End, error) {
	var last time.Duration
	for {
		o, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return trace.End{}, err
		}
		last = max(last, o.At)
		v.Observe(o)
	}
	if end, ok := rd.End(); ok {
		return end, nil
	}
	return trace.End{At: last}, nil
}

// ErrProfileText is wrapped by VerifyOptions when the profile a trace
// records does not parse at all.
var ErrProfileText = errors.New("the profile the trace records does not parse")

// VerifyOptions sets a verifier up from a trace's header: the profile's
// name, seed and check severities, from the profile text the trace
// carries and the overrides its header records. A trace outlives the fray that wrote it: when its profile no
// longer passes this fray's validation (a check renamed since), the
// [checks] table is read as it stands, ids this verifier does not know are
// ignored, and note says so.
func VerifyOptions(h trace.Header) (opts verify.Options, note string, err error) {
	if h.ProfileText == "" {
		return verify.Options{Profile: h.Profile, Seed: h.Seed, Severity: severities(nil, h.Checks)}, "", nil
	}
	prof, perr := profiles.Parse(h.Profile+".toml", strings.NewReader(h.ProfileText))
	if perr == nil {
		return verify.Options{Profile: h.Profile, Seed: h.Seed, Severity: severities(prof, h.Checks), Faults: len(prof.Faults), Needs: prof.Needs()}, "", nil
	}
	var doc struct {
		Checks map[string]checks.Severity `toml:"checks"`
		Fault  []map[string]any           `toml:"fault"`
	}
	// A profile too large or too deep (ErrSize) is not decoded at all,
	// even for its [checks].
	if errors.Is(perr, profiles.ErrSize) || toml.Unmarshal([]byte(h.ProfileText), &doc) != nil {
		return verify.Options{}, "", fmt.Errorf("%w:\n%v", ErrProfileText, perr)
	}
	opts = verify.Options{Profile: h.Profile, Seed: h.Seed, Severity: severities(&profiles.Profile{Checks: doc.Checks}, h.Checks), Faults: len(doc.Fault)}
	note = fmt.Sprintf("its profile does not pass this fray's validation; its check severities are used as they stand:\n%v", perr)
	return opts, note, nil
}
