// A fetch wrapper that records what a client transport puts on the wire, so
// the example clients can report reconnections they made themselves.

/**
 * @typedef {{url: string, method: string, lastEventId: string|null, status: number|null, error?: string}} Attempt
 */

/**
 * Returns a fetch that records every request's URL, method, Last-Event-ID header
 * and response status into log.
 *
 * @param {Attempt[]} log
 * @returns {typeof fetch}
 */
export function recordingFetch(log) {
  return async (input, init = {}) => {
    const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
    const entry = {
      url: String(input instanceof Request ? input.url : input),
      method: (init.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase(),
      lastEventId: headers.get('last-event-id'),
      status: null,
    };
    log.push(entry);
    try {
      const res = await fetch(input, init);
      entry.status = res.status;
      return res;
    } catch (err) {
      entry.error = String(err?.message ?? err);
      throw err;
    }
  };
}

/**
 * Arms an overall deadline: after ms, report is called with a timeout error
 * and the process exits 1. The timer does not keep the process alive.
 */
export function deadline(ms, report) {
  const t = setTimeout(() => {
    report(new Error(`timed out after ${ms} ms`));
    process.exit(1);
  }, ms);
  t.unref();
  return t;
}
