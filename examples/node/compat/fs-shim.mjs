// "fs" as Node 20 has it, plus a globSync that refuses to run (see register.mjs).
import fs from 'node:fs';

export * from 'node:fs';
export default fs;

export function globSync(pattern) {
  throw new Error(`fs.globSync(${JSON.stringify(pattern)}) needs Node 22 or later`);
}
