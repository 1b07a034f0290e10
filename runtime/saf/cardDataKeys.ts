/**
 * Member names whose values are card data by their name alone — a PAN, a security code, a
 * PIN block, track data — whatever the value looks like. Names are compared normalized:
 * lower case, without `_` or `-` (`card_number`, `cardNumber` and `CARD-NUMBER` are one).
 */

/** Normalized member names that hold card data. */
export const CARD_DATA_KEYS: ReadonlySet<string> = new Set([
  'pan',
  'cardnumber',
  'primaryaccountnumber',
  'cvv',
  'cvv2',
  'cvc',
  'cvc2',
  'securitycode',
  'cardsecuritycode',
  'pin',
  'pinblock',
  'track1',
  'track2',
  'track3',
  'trackdata',
  'track1data',
  'track2data',
  'magstripe',
  'magneticstripe',
]);

/** `key` as the key sets compare it: lower case, without `_` or `-`. */
export const normalizeMemberName = (key: string): string => key.toLowerCase().replace(/[_-]/g, '');

/** Whether a member called `key` holds card data by its name. */
export const isCardDataKey = (key: string): boolean => CARD_DATA_KEYS.has(normalizeMemberName(key));
