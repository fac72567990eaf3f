// A small in-memory EventStore for StreamableHTTPServerTransport, one per
// session.
//
// Event ids are "<stream>_<n>": <stream> numbers the store's streams in the
// order their first event came, and <n> counts each stream's events from 1.
// So a stream's ids count by one, as the Go SDK's "<stream>_<n>" do, and a
// resumption that starts past the next number skipped something; ids are
// unique within the store, and the stream is found by looking the id up,
// never by parsing it. (The SDK's example store derives the stream from the
// id by splitting on "_", which breaks for the standalone GET stream, whose
// id is "_GET_stream".)
//
// The SDK names every session's standalone GET stream "_GET_stream": a store
// shared by sessions would replay one session's standalone events to
// another's resumption. serveStreamable gives each session a store of its
// own.

/**
 * @typedef {import('@modelcontextprotocol/sdk/types.js').JSONRPCMessage} JSONRPCMessage
 */
export class MemoryEventStore {
  /**
   * @param {object} [opts]
   * @param {(id: string, streamId: string, message: JSONRPCMessage) => void} [opts.onStore]
   *   called for every stored event, priming events included
   */
  constructor(opts = {}) {
    this.seq = 0;
    /** @type {Map<string, {streamId: string, seq: number, message: JSONRPCMessage}>} */
    this.events = new Map();
    /** @type {Map<string, {no: number, ids: string[]}>} each stream's number and event ids, in order */
    this.streams = new Map();
    this.onStore = opts.onStore;
  }

  async storeEvent(streamId, message) {
    let stream = this.streams.get(streamId);
    if (!stream) {
      stream = { no: this.streams.size + 1, ids: [] };
      this.streams.set(streamId, stream);
    }
    const id = `${stream.no}_${stream.ids.length + 1}`;
    this.events.set(id, { streamId, seq: ++this.seq, message });
    stream.ids.push(id);
    this.onStore?.(id, streamId, message);
    return id;
  }

  async getStreamIdForEventId(eventId) {
    return this.events.get(eventId)?.streamId;
  }

  async replayEventsAfter(lastEventId, { send }) {
    const last = this.events.get(lastEventId);
    if (!last) {
      throw new Error(`unknown Last-Event-ID ${JSON.stringify(lastEventId)}`);
    }
    for (const id of this.streams.get(last.streamId)?.ids ?? []) {
      const ev = this.events.get(id);
      // Priming events are stored as {} so their ids resolve; they carry no
      // message and are not replayed.
      if (ev.seq <= last.seq || Object.keys(ev.message).length === 0) {
        continue;
      }
      await send(id, ev.message);
    }
    return last.streamId;
  }
}
