"""Deposit addresses from a watch-only extended public key (BIP32, m/44'/60'/0'/0/i).

The server only ever holds the account-level public key: it can derive addresses but never
sign. Funds are swept by whoever holds the seed, offline.
"""

from functools import lru_cache

from bip_utils import Bip32Slip10Secp256k1, EthAddr
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

# m/44'/60'/0' of the public test mnemonic "test test ... junk" (anvil's and hardhat's
# default accounts). Everyone knows its private keys: devnet and tests only.
TEST_XPUB = (
    "xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9"
    "sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP"
)
EXTERNAL_CHAIN = 0


def xpub_for(*, is_devnet: bool) -> str:
    if is_devnet:
        return TEST_XPUB
    if not settings.PAYMENTS_XPUB:
        raise ImproperlyConfigured("PAYMENTS_XPUB is not set: no deposit address on real chains.")
    if settings.PAYMENTS_XPUB == TEST_XPUB:
        raise ImproperlyConfigured("PAYMENTS_XPUB is the public test key: its funds are not safe.")
    return settings.PAYMENTS_XPUB


@lru_cache(maxsize=4)
def _external_chain(xpub: str) -> Bip32Slip10Secp256k1:
    account = Bip32Slip10Secp256k1.FromExtendedKey(xpub)
    if not account.IsPublicOnly():
        # A private extended key must never reach the server, even by mistake.
        raise ImproperlyConfigured("The extended key holds a private key: use the xpub only.")
    return account.ChildKey(EXTERNAL_CHAIN)


def deposit_address(*, xpub: str, index: int) -> str:
    """The lower-case 0x address at m/44'/60'/0'/0/index under `xpub`."""
    child = _external_chain(xpub).ChildKey(index)
    return EthAddr.EncodeKey(child.PublicKey().KeyObject()).lower()
