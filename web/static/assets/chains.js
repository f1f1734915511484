// The networks money goes in and out by, as the server names them
// (ethereum, bsc, polygon, tron): their names for people, and which
// addresses and transaction hashes they take.
import { t, has } from './i18n.js';

// chainName('bsc') is "BNB Smart Chain (BSC)"; a chain the app has no
// name for shows as the server spells it.
export function chainName(chain) {
  const key = 'withdraw.chain.' + chain;
  return has(key) ? t(key) : String(chain);
}

// isTron tells TRON (base58 addresses, transaction ids of 64 hex digits)
// from the EVM chains (0x addresses with the EIP-55 checksum, 0x hashes).
export function isTron(chain) {
  return chain === 'tron';
}
