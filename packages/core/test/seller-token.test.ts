// A seller token has one spelling: the MAC covers `svcs1.<payTo>.<expiry>` with the expiry in
// plain decimal, so a token read with any other spelling of its expiry would be a second string
// for the same credential.
import { describe, expect, it } from 'vitest';
import { parseSellerToken, randomKeypair, sellerTokenBody } from '@svc/core';

const PAY_TO = randomKeypair().address;
const MAC = 'A'.repeat(43);

describe('parseSellerToken', () => {
  it('reads a token in its one form, the body being exactly what the MAC covers', () => {
    const body = sellerTokenBody(PAY_TO, 1_900_000_000);
    expect(parseSellerToken(`${body}.${MAC}`)).toEqual({ payTo: PAY_TO, expiresUnix: 1_900_000_000, body, mac: MAC });
  });

  it('refuses an expiry written with a leading zero (another spelling of the same token)', () => {
    expect(parseSellerToken(`svcs1.${PAY_TO}.01900000000.${MAC}`)).toBeNull();
    expect(parseSellerToken(`svcs1.${PAY_TO}.0.${MAC}`)).toBeNull();
  });

  it('refuses whitespace around the token', () => {
    const token = `${sellerTokenBody(PAY_TO, 1_900_000_000)}.${MAC}`;
    for (const spelled of [` ${token}`, `${token} `, `${token}\n`, `\t${token}`])
      expect(parseSellerToken(spelled)).toBeNull();
  });
});
