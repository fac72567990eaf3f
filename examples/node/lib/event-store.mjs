// A small in-memory EventStore for StreamableHTTPServerTransport.
//
// Event ids are "<seq>" where seq is a counter shared by every stream the
// store holds, so ids are unique across all streams of all sessions and the
// stream is found by looking the id up, never by parsing it. (The SDK's
// example store derives the stream from the id by splitting on "_", which
// breaks for the standalone GET stream, whose id is "_GET_stream".)

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
    /** @type {Map<string, string[]>} event ids per stream, in order */
    this.streams = new Map();
    this.onStore = opts.onStore;
  }

  async storeEvent(streamId, message) {
    const seq = ++this.seq;
    const id = String(seq);
    this.events.set(id, { streamId, seq, message });
    let ids = this.streams.get(streamId);
    if (!ids) {
      ids = [];
      this.streams.set(streamId, ids);
    }
    ids.push(id);
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
    for (const id of this.streams.get(last.streamId) ?? []) {
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
