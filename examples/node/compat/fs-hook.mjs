// Resolve hook registered by register.mjs: imports of "fs" from inside the
// conformance package resolve to fs-shim.mjs. Everything else is untouched.
const shim = new URL('./fs-shim.mjs', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if (
    (specifier === 'fs' || specifier === 'node:fs') &&
    context.parentURL?.includes('/node_modules/@modelcontextprotocol/conformance/')
  ) {
    return { url: shim, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
