// Where this facilitator is reached: its public base URL (PUBLIC_URL) and the address it bound, known
// only once the server listens. The demo, /supported and the OpenAPI document read it lazily.
export class BoundAddress {
  #bound = '';

  constructor(private readonly publicUrl: string | undefined) {}

  /** Records the address the server bound (a wildcard host is reached on loopback). */
  listening(address: string, host: string): void {
    const port = new URL(address).port;
    const reach = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    this.#bound = `http://${reach}:${port}`;
  }

  /** The base URL this process reaches itself on ('' before it listens). */
  bound(): string {
    return this.#bound;
  }

  /** The public base URL: PUBLIC_URL, or the bound address. */
  public(): string {
    return this.publicUrl?.replace(/\/+$/, '') ?? this.#bound;
  }
}
