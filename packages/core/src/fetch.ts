// The global fetch, callable as a method. A browser's fetch throws "Illegal invocation" when it is
// called with `this` set to anything but the window — as `this.fetchImpl(url)` does when a client
// keeps the global fetch in a field. Clients default to this instead.
export const globalFetch: typeof fetch = (input, init) => globalThis.fetch(input, init);
