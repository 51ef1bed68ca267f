// A non-JSON answer (an MP3 recording, a CSV export, TwiML, a script, an HTML page), handed over
// unread so that large files stream: read it once, as a stream, bytes or text.

export class Download {
  constructor(readonly response: Response) {}

  get status(): number {
    return this.response.status;
  }
  get headers(): Headers {
    return this.response.headers;
  }
  /** The media type without parameters (`audio/mpeg`, `text/csv` …). */
  get contentType(): string {
    return (this.response.headers.get('content-type') ?? '').split(';')[0].trim();
  }
  /** Content-Length when the server sent it. */
  get size(): number | undefined {
    const length = this.response.headers.get('content-length');
    return length === null ? undefined : Number(length);
  }

  /** The body as a web ReadableStream (Node: `Readable.fromWeb(download.stream())`). */
  stream(): ReadableStream<Uint8Array> {
    const body = this.response.body;
    if (!body) return new ReadableStream({ start: (controller) => controller.close() });
    return body as ReadableStream<Uint8Array>;
  }

  async bytes(): Promise<Uint8Array> {
    return new Uint8Array(await this.response.arrayBuffer());
  }

  text(): Promise<string> {
    return this.response.text();
  }
}
