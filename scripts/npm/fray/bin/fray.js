#!/usr/bin/env node
// Runs the fray binary of this platform: the optional package
// @frayproxy/fray-OS-CPU that npm installed beside this one (it picks the
// one whose "os" and "cpu" match). Arguments, standard streams, signals
// and the exit code pass through unchanged.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

const platform = `${process.platform}-${process.arch}`;
const pkg = `@frayproxy/fray-${platform}`;
const exe = process.platform === "win32" ? "fray.exe" : "fray";

let binary;
try {
  binary = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", exe);
} catch {
  process.stderr.write(
    `fray: no fray binary for ${platform}: the package ${pkg} is not installed.\n` +
      "It is an optional dependency of @frayproxy/fray; reinstall without --no-optional (or --omit=optional),\n" +
      "or install fray another way (README.md, Install): a release binary or go install.\n",
  );
  process.exit(5); // fray's exit code for "could not start"
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
// fray stops gracefully at the first SIGINT or SIGTERM and at once at the
// second. Ctrl-C in a terminal already reaches fray (it is in this
// process's group), so SIGINT is only waited out here; a SIGTERM or SIGHUP
// sent to this process alone is passed on.
process.on("SIGINT", () => {});
for (const sig of ["SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}
child.on("error", (err) => {
  process.stderr.write(`fray: could not run ${binary}: ${err.message}\n`);
  process.exit(5);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code);
});
