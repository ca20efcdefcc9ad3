// The view and the address live in the URL's fragment, so a page can be shared as it is:
//   #/live   #/seller/G…?bucket=hour   #/account/C…   #/float   #/catalog
import { isAddress } from '@svc/core';

export const VIEWS = ['live', 'seller', 'account', 'float', 'catalog'] as const;
export type ViewName = (typeof VIEWS)[number];

export interface Route {
  view: ViewName;
  /** The seller's or account's address, when the view has one. */
  address: string | null;
  params: URLSearchParams;
}

/**
 * What is wrong with an address, in one sentence, or null when it is one. The same StrKey check
 * the facilitator makes (its checksum included), so a typo is caught here, before any request.
 */
export function addressProblem(value: string): string | null {
  if (isAddress(String(value))) return null;
  const shown = value.length > 24 ? `${value.slice(0, 12)}…${value.slice(-8)}` : value;
  if (value === '') return 'Enter an address: 56 characters starting with G (or C for a smart account).';
  if (!/^[GC][A-Z2-7]{55}$/.test(value))
    return `“${shown}” is not an address: an address is 56 characters (A–Z, 2–7) starting with G, or C for a smart account.`;
  return `“${shown}” is not an address: its checksum does not match (a character is mistyped or missing).`;
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
