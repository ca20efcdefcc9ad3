// The view and the address live in the URL's fragment, so a page can be shared as it is:
//   #/live   #/seller/G…?bucket=hour   #/account/C…   #/float   #/catalog
export const VIEWS = ['live', 'seller', 'account', 'float', 'catalog'] as const;
export type ViewName = (typeof VIEWS)[number];

export interface Route {
  view: ViewName;
  /** The seller's or account's address, when the view has one. */
  address: string | null;
  params: URLSearchParams;
}

const ADDRESS_RE = /^[GC][A-Z2-7]{55}$/;

/** A plausible G… or C… address (the facilitator checks it properly and says so if not). */
export function looksLikeAddress(value: string): boolean {
  return ADDRESS_RE.test(value);
}

export function parseRoute(hash: string): Route {
  const [path = '', query = ''] = hash.replace(/^#\/?/, '').split('?', 2);
  const [name = '', address = ''] = path.split('/');
  const view = (VIEWS as readonly string[]).includes(name) ? (name as ViewName) : 'live';
  return { view, address: address !== '' ? decodeURIComponent(address) : null, params: new URLSearchParams(query) };
}

export function href(view: ViewName, address?: string | null, params?: Record<string, string>): string {
  const query = params ? new URLSearchParams(params).toString() : '';
  return `#/${view}${address ? `/${encodeURIComponent(address)}` : ''}${query ? `?${query}` : ''}`;
}
