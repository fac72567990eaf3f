package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// npmPlatform is npm's name for the platform fray runs on: "linux-x64".
func npmPlatform(goos, goarch string) string {
	os, cpu := goos, goarch
	if os == "windows" {
		os = "win32"
	}
	if cpu == "amd64" {
		cpu = "x64"
	}
	return os + "-" + cpu
}

// TestNPMPackages builds the release binary and the npm packages as
// scripts/release.sh lays them out for this platform, checks the binary, packs them with npm pack, installs the tarballs
// into a scratch project offline, as a TypeScript project would install
// @frayproxy/fray, and runs npx fray there: --version, then fray run
// against the TypeScript SDK's example server with a client of the
// scratch project, which must give a verdict.
func TestNPMPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release binary")
	}
	node, dir := nodePeers(t, "sdk", "the npm packages were not tried")
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("SKIPPED: npm not found on PATH; the npm packages were not tried")
	}
	npx := filepath.Join(filepath.Dir(npm), "npx")
	ctx := within(t, 8*time.Minute)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	dist, packs, scratch := filepath.Join(tmp, "dist"), filepath.Join(tmp, "packs"), filepath.Join(tmp, "scratch")
	for _, d := range []string{packs, scratch} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmdIn := func(dir string, env []string, name string, args ...string) (string, error) {
		c := exec.CommandContext(ctx, name, args...)
		c.Dir = dir
		c.Env = append(append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false"), env...)
		out, err := c.CombinedOutput()
		return string(out), err
	}
	out, err := cmdIn(root, []string{"DIST=" + dist, "TARGETS=" + runtime.GOOS + "/" + runtime.GOARCH, "VERSION=v0.0.0-npmtest"}, "sh", "scripts/release.sh")
	if err != nil {
		t.Fatalf("scripts/release.sh: %v\n%s", err, out)
	}
	// The release binary, as the README's release line downloads it: its
	// checksum listed, its version and commit stamped in.
	bin := filepath.Join(dist, "fray-v0.0.0-npmtest-"+runtime.GOOS+"-"+runtime.GOARCH)
	if out, err := cmdIn(dist, nil, "sha256sum", "-c", "fray-v0.0.0-npmtest-SHA256SUMS"); err != nil {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}
	if out, err := cmdIn(dist, nil, bin, "--version"); err != nil || !strings.HasPrefix(out, "fray v0.0.0-npmtest ") {
		t.Errorf("%s --version: %v, %q", bin, err, out)
	}
	platform := "fray-" + npmPlatform(runtime.GOOS, runtime.GOARCH)
	var wrapper struct {
		Bin      map[string]string `json:"bin"`
		Optional map[string]string `json:"optionalDependencies"`
	}
	b, err := os.ReadFile(filepath.Join(dist, "npm", "fray", "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &wrapper)
	}
	if err != nil || wrapper.Bin["fray"] == "" || wrapper.Optional["@frayproxy/"+platform] != "0.0.0-npmtest" {
		t.Fatalf("the wrapper's package.json: %v\n%s", err, b)
	}
	if out, err := cmdIn(packs, nil, npm, "pack", "--silent", filepath.Join(dist, "npm", platform), filepath.Join(dist, "npm", "fray")); err != nil {
		t.Fatalf("npm pack: %v\n%s", err, out)
	}
	tarballs := []string{filepath.Join(packs, "frayproxy-"+platform+"-0.0.0-npmtest.tgz"), filepath.Join(packs, "frayproxy-fray-0.0.0-npmtest.tgz")}

	// A scratch project with a client of its own on the TypeScript SDK
	// (linked from examples/node, which npm ci installed), and fray from
	// the tarballs alone: --offline, so nothing comes from a registry.
	writeFile(t, filepath.Join(scratch, "package.json"), `{"name": "scratch", "private": true, "type": "module"}`+"\n")
	writeFile(t, filepath.Join(scratch, "client.mjs"), scratchClient)
	if out, err := cmdIn(scratch, nil, npm, append([]string{"install", "--offline", "--loglevel=error"}, tarballs...)...); err != nil {
		t.Fatalf("npm install --offline of the tarballs: %v\n%s", err, out)
	}
	sdk := filepath.Join(scratch, "node_modules", "@modelcontextprotocol")
	if err := os.MkdirAll(sdk, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk"), filepath.Join(sdk, "sdk")); err != nil {
		t.Fatal(err)
	}

	out, err = cmdIn(scratch, nil, npx, "--offline", "fray", "--version")
	if err != nil || !strings.HasPrefix(out, "fray v0.0.0-npmtest ") {
		t.Fatalf("npx fray --version: %v\n%s", err, out)
	}
	rep := filepath.Join(scratch, "fray.json")
	c := exec.CommandContext(ctx, npx, append(append([]string{"--offline", "fray", "run"}, nodeServer(t, node, dir, "streamable-server.mjs")...),
		"--profile", "polling-server", "--report", rep, "--quiet", "--", node, "client.mjs")...)
	c.Dir = scratch
	stdout, err := c.Output()
	code := c.ProcessState.ExitCode()
	r := readReport(t, rep)
	if code != verdictCode(r) || !strings.Contains(string(stdout), "fray: verdict "+strings.ToUpper(r.Verdict)) {
		t.Fatalf("npx fray run: exit %d (%v) with verdict %q, want %d\nstdout:\n%s", code, err, r.Verdict, verdictCode(r), stdout)
	}
	if !strings.Contains(string(stdout), `client: counted to 4`) {
		t.Errorf("the scratch project's client did not finish its call through fray:\n%s", stdout)
	}
}

// scratchClient is a TypeScript SDK client as a user writes one: it
// calls slow-count at FRAY_URL, whose stream fray cuts under
// polling-server, and prints the result.
const scratchClient = `import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const client = new Client({ name: 'scratch', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.FRAY_URL)));
const result = await client.callTool(
  { name: 'slow-count', arguments: { count: 4, closeAfter: 2 } },
  undefined,
  { onprogress: (p) => console.log('progress', p.progress), resetTimeoutOnProgress: true },
);
console.log('client: ' + result.content[0].text);
await client.close();
`

// writeFile writes s to path, failing the test on an error, and returns
// the path.
func writeFile(t *testing.T, path, s string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readFile returns the file's bytes, failing the test when it cannot.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
