// A server-sent-events parser (the WHATWG event-stream format): fed chunks as they arrive, it
// yields each event as soon as its blank line is read. The format is eventsource-parser's; this
// adds the bytes-to-text decoding, the browser's default event name (`message`), and an answer per
// chunk rather than a callback. As the standard has it, an event without a `data` line is not
// dispatched.
import { createParser } from 'eventsource-parser';
import type { EventSourceParser, ParseError } from 'eventsource-parser';

export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

export interface SseParserOptions {
  /**
   * The most characters held while a line or an event is incomplete (default: no limit). Past it,
   * push() throws and the parser takes no more: a stream that never ends its line cannot grow
   * the buyer's memory without bound.
   */
  maxBufferSize?: number;
}

export class SseParser {
  private readonly decoder = new TextDecoder();
  private readonly parser: EventSourceParser;
  private completed: SseEvent[] = [];
  private failure: ParseError | null = null;

  constructor(options: SseParserOptions = {}) {
    this.parser = createParser({
      onEvent: ({ event, data, id }) =>
        this.completed.push({ event: event ?? 'message', data, ...(id === undefined ? {} : { id }) }),
      onError: (error) => {
        // Unknown fields and bad `retry` values are ignored, as a browser ignores them.
        if (error.type === 'max-buffer-size-exceeded') this.failure = error;
      },
      ...(options.maxBufferSize === undefined ? {} : { maxBufferSize: options.maxBufferSize }),
    });
  }

  /** The events completed by this chunk. */
  push(chunk: Uint8Array): SseEvent[] {
    this.check();
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
    this.check();
    const out = this.completed;
    this.completed = [];
    return out;
  }

  /** Throws once the stream overflowed the buffer: nothing it sends is read any more. */
  private check(): void {
    if (this.failure) throw this.failure;
  }
}
