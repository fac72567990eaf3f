package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/frayproxy/fray/proxy/report"
)

// actionDir is where fray's action.yml lives, beneath the repository's
// root (the top level holds only what the layout names), and actionUse
// what a workflow writes to use it.
const (
	actionDir = ".github/actions/run"
	actionUse = "frayproxy/fray/" + actionDir + "@v0"
)

// action is what fray's action.yml declares, as GitHub reads it.
type action struct {
	Name   string `yaml:"name"`
	Inputs map[string]struct {
		Required bool   `yaml:"required"`
		Default  string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

// actionStep is one step of the composite action.
type actionStep struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	With  map[string]string `yaml:"with"`
	Shell string            `yaml:"shell"`
	Dir   string            `yaml:"working-directory"`
	Env   map[string]string `yaml:"env"`
	Run   string            `yaml:"run"`
}

func readAction(t *testing.T) action {
	t.Helper()
	b := readFile(t, filepath.Join(root, filepath.FromSlash(actionDir), "action.yml"))
	var a action
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

// expression is a ${{ ... }} of a workflow.
var expression = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// TestActionRunsAsAWorkflowWould runs fray's composite action as GitHub
// would, on the Go SDK's reference server and client: its inputs are
// those users of MCP's conformance action expect, each step's
// expressions are expanded (inputs, github.action_path, runner.temp), its
// run lines run with bash as the runner runs them, GITHUB_PATH and
// GITHUB_OUTPUT work as on a runner, a failed step skips the steps after
// it but those marked always(), and the reports it uploads are there,
// whatever the verdict.
func TestActionRunsAsAWorkflowWould(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fray and the Go SDK pair")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("SKIPPED: bash not found on PATH")
	}
	a := readAction(t)
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q, want composite", a.Runs.Using)
	}
	for _, in := range []string{"upstream", "server", "command", "profile", "baseline", "junit", "report", "html"} {
		if _, ok := a.Inputs[in]; !ok {
			t.Errorf("action.yml has no input %q", in)
		}
	}
	actionPath, err := filepath.Abs(filepath.Join(root, filepath.FromSlash(actionDir)))
	if err != nil {
		t.Fatal(err)
	}
	workspace, temp := t.TempDir(), t.TempDir()
	ctx := within(t, 5*time.Minute)
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(workspace, "bin")+"/", "./examples/gosdk/server", "./examples/gosdk/client")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the Go SDK pair: %v\n%s", err, out)
	}
	port := freePort(t)
	inputs := map[string]string{
		"upstream": fmt.Sprintf("http://127.0.0.1:%d/mcp", port),
		"server":   fmt.Sprintf("bin/server -listen 127.0.0.1:%d", port),
		"command":  `bin/client "$FRAY_URL"`,
		"junit":    "out/fray.xml",
		"report":   "out/fray.json",
		"html":     "out/fray.html",
	}
	for name, in := range a.Inputs {
		if _, ok := inputs[name]; !ok {
			if in.Required {
				t.Fatalf("input %q is required and the test gives none", name)
			}
			inputs[name] = in.Default
		}
	}
	if err := os.Mkdir(filepath.Join(workspace, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	ghPath, ghOutput := filepath.Join(temp, "github_path"), filepath.Join(temp, "github_output")
	expand := func(s string) string {
		return expression.ReplaceAllStringFunc(s, func(e string) string {
			x := expression.FindStringSubmatch(e)[1]
			switch {
			case strings.HasPrefix(x, "inputs."):
				v, ok := inputs[strings.TrimPrefix(x, "inputs.")]
				if !ok {
					t.Errorf("action.yml uses %s, which is not an input", x)
				}
				return v
			case x == "github.action_path":
				return actionPath
			case x == "runner.temp":
				return temp
			}
			t.Errorf("action.yml uses ${{ %s }}, which this test does not know", x)
			return ""
		})
	}
	var uses []string
	failed := false
	for i, st := range a.Runs.Steps {
		switch st.If {
		case "":
			if failed {
				continue
			}
		case "always()":
		default:
			t.Fatalf("step %d: if %q, which this test does not know", i, st.If)
		}
		if st.Uses != "" {
			// setup-go: Go is here; upload-artifact: its paths are checked below.
			uses = append(uses, st.Uses)
			if strings.HasPrefix(st.Uses, "actions/upload-artifact@") {
				for _, p := range strings.Fields(expand(st.With["path"])) {
					if _, err := os.Stat(filepath.Join(workspace, p)); err != nil {
						t.Errorf("the artifact's %s: %v", p, err)
					}
				}
			}
			continue
		}
		if strings.Contains(st.Run, "${{") {
			t.Errorf("step %q pastes an expression into its script; pass it in env", st.Name)
		}
		if st.Shell != "bash" {
			t.Errorf("step %q: shell %q, want bash", st.Name, st.Shell)
		}
		dir := workspace
		if st.Dir != "" {
			dir = expand(st.Dir)
		}
		script := writeFile(t, filepath.Join(temp, fmt.Sprintf("step%d.sh", i)), st.Run)
		path, err := os.ReadFile(ghPath)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		dirs := strings.Fields(string(path))
		slices.Reverse(dirs)
		env := append(os.Environ(), "GITHUB_PATH="+ghPath, "GITHUB_OUTPUT="+ghOutput, "RUNNER_TEMP="+temp, "CI=true",
			"PATH="+strings.Join(append(dirs, os.Getenv("PATH")), string(os.PathListSeparator)))
		for k, v := range st.Env {
			env = append(env, k+"="+expand(v))
		}
		cmd := exec.CommandContext(ctx, bash, "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		t.Logf("step %q: %v\n%s", st.Name, err, out)
		if err != nil {
			failed = true
		}
		if st.ID == "fray" {
			code := cmd.ProcessState.ExitCode()
			r := readReport(t, filepath.Join(workspace, "out", "fray.json"))
			outputs := readFile(t, ghOutput)
			if code != verdictCode(r) || !strings.Contains(string(outputs), fmt.Sprintf("exit-code=%d\n", code)) {
				t.Errorf("the fray step exited %d with verdict %q (want %d); GITHUB_OUTPUT:\n%s", code, r.Verdict, verdictCode(r), outputs)
			}
			if r.Profile != "polling-server" || r.Totals.Resumptions == 0 || r.Command == nil || r.Command.ExitCode != 0 {
				t.Errorf("the report: profile %q, %d resumptions, command %+v; want the Go SDK client's cut call resumed", r.Profile, r.Totals.Resumptions, r.Command)
			}
			if r.Verdict == report.VerdictPass && err != nil {
				t.Errorf("a pass failed the step: %v", err)
			}
		}
	}
	if !slices.ContainsFunc(uses, func(u string) bool { return strings.HasPrefix(u, "actions/setup-go@") }) ||
		!slices.ContainsFunc(uses, func(u string) bool { return strings.HasPrefix(u, "actions/upload-artifact@") }) {
		t.Errorf("the action uses %v; want actions/setup-go and actions/upload-artifact", uses)
	}
	for _, f := range []string{"fray.xml", "fray.json", "fray.html"} {
		if _, err := os.Stat(filepath.Join(workspace, "out", f)); err != nil {
			t.Errorf("no %s after the action: %v", f, err)
		}
	}
}

// TestActionUploadsWhateverTheVerdict: the step that keeps the reports
// runs after a failed fray step, and names every report input.
func TestActionUploadsWhateverTheVerdict(t *testing.T) {
	a := readAction(t)
	for _, st := range a.Runs.Steps {
		if !strings.HasPrefix(st.Uses, "actions/upload-artifact@") {
			continue
		}
		if st.If != "always()" {
			t.Errorf("the upload step runs if %q, want always()", st.If)
		}
		for _, in := range []string{"junit", "report", "html"} {
			if !strings.Contains(st.With["path"], "${{ inputs."+in+" }}") {
				t.Errorf("the upload step does not keep the %s input's file", in)
			}
		}
		return
	}
	t.Error("action.yml uploads no artifact")
}

// TestActionShownInDocs: the README and docs/ci.md show the action used
// from another repository with inputs it has, the required ones given,
// and docs/ci.md's table names every input.
func TestActionShownInDocs(t *testing.T) {
	a := readAction(t)
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	for _, f := range []string{"README.md", filepath.Join("docs", "ci.md")} {
		b := readFile(t, filepath.Join(root, f))
		shown := 0
		for _, m := range block.FindAllStringSubmatch(string(b), -1) {
			if !strings.Contains(m[1], "uses: "+actionUse) {
				continue
			}
			var doc any
			if err := yaml.Unmarshal([]byte(m[1]), &doc); err != nil {
				t.Errorf("%s: a yaml block that uses the action does not parse: %v", f, err)
				continue
			}
			for _, with := range actionUses(doc) {
				shown++
				for k := range with {
					if _, ok := a.Inputs[k]; !ok {
						t.Errorf("%s gives the action an input %q it does not have", f, k)
					}
				}
				for name, in := range a.Inputs {
					if _, ok := with[name]; in.Required && !ok {
						t.Errorf("%s does not give the action its required input %q", f, name)
					}
				}
			}
		}
		if shown == 0 {
			t.Errorf("%s does not show uses: %s", f, actionUse)
		}
		if f == filepath.Join("docs", "ci.md") {
			for name := range a.Inputs {
				if !strings.Contains(string(b), "`"+name+"`") {
					t.Errorf("docs/ci.md does not describe the input %q", name)
				}
			}
		}
	}
}

// actionUses finds, anywhere in a parsed YAML document, the steps that use
// fray's action, and returns their with maps.
func actionUses(doc any) []map[string]any {
	var out []map[string]any
	switch v := doc.(type) {
	case map[string]any:
		if u, _ := v["uses"].(string); u == actionUse {
			with, _ := v["with"].(map[string]any)
			out = append(out, with)
		}
		for _, x := range v {
			out = append(out, actionUses(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, actionUses(x)...)
		}
	}
	return out
}
