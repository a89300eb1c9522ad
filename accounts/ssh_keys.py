"""Reading a pasted SSH public key: what is accepted, how it is stored, its fingerprint.

The key is parsed by `cryptography`, then stored in the form `cryptography` writes back
("type base64 comment"): the line the host-side script installs in authorized_keys is one
the store produced itself, not the customer's paste.

A refusal never carries the pasted text (the exception, its message and its repr name the
reason only): a private key pasted by mistake must not end up in a log or an error page.
"""

import base64
import hashlib
from dataclasses import dataclass

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_ssh_public_key,
)
from django.utils.translation import gettext

MIN_RSA_BITS = 3072
ACCEPTED_TYPES = {
    "ssh-ed25519": "ED25519",
    "ecdsa-sha2-nistp256": "ECDSA",
    "ecdsa-sha2-nistp384": "ECDSA",
    "ecdsa-sha2-nistp521": "ECDSA",
    "ssh-rsa": "RSA",
}
# Key types OpenSSH knows that the store does not take: named as such rather than "not a key".
REFUSED_TYPE_PREFIXES = ("ssh-dss", "sk-", "ssh-ed448", "rsa-sha2-")
REFUSED_TYPE_SUFFIX = "-cert-v01@openssh.com"
# Pieces of every private key format a customer may hold: PEM and OpenSSH headers ("BEGIN
# OPENSSH PRIVATE KEY", "BEGIN RSA PRIVATE KEY", "BEGIN ENCRYPTED PRIVATE KEY"...), PuTTY's
# .ppk, and the base64 of OpenSSH's "openssh-key-v1" magic for a body pasted without header.
PRIVATE_KEY_MARKERS = (
    "PRIVATE KEY",
    "PuTTY-User-Key-File",
    "Private-Lines:",
    "b3BlbnNzaC1rZXktdjE",
)
# The longest public key accepted is an RSA 16384-bit one (about 2,800 characters).
MAX_TEXT_LENGTH = 8192
MAX_COMMENT_LENGTH = 100


class SshKeyRefused(Exception):
    """Why a key is refused: a code and the sentence for the customer, in their language."""

    def __init__(self, code: str, **params):
        # Only the code and numbers or the customer's own key name: never the pasted text.
        super().__init__(code)
        self.code, self.params = code, params

    @property
    def message(self) -> str:
        return refusal_message(self.code) % self.params


def refusal_message(code: str) -> str:
    """The sentence for a refusal, translated into the active language."""
    messages = {
        # What `$(cat ~/.ssh/id_ed25519.pub)` sends where that file does not exist.
        "empty_key": gettext(
            "The key is empty: paste the line of your .pub file. No key yet? Create one with "
            "ssh-keygen -t ed25519, then send the content of ~/.ssh/id_ed25519.pub."
        ),
        "private_key": gettext(
            "This is a private key: it was not saved. Keep it to yourself and paste the public "
            "key instead, the line of the file ending in .pub (e.g. ~/.ssh/id_ed25519.pub)."
        ),
        "not_a_key": gettext(
            "This is not an SSH public key. Paste the line of your .pub file: it starts with "
            "ssh-ed25519, ecdsa-sha2-nistp256 (or 384, 521) or ssh-rsa."
        ),
        "one_line": gettext("Paste one key, on a single line, as it is in the .pub file."),
        "unsupported_type": gettext(
            "This type of key is not accepted: use an ed25519, ECDSA or RSA key (RSA of at "
            "least 3072 bits)."
        ),
        "damaged": gettext(
            "This key is incomplete or damaged: copy the whole line of the .pub file again."
        ),
        "rsa_too_short": gettext(
            "This RSA key has %(bits)d bits: at least 3072 are required. Create an ed25519 key "
            "instead (ssh-keygen -t ed25519)."
        ),
        "duplicate": gettext("This key is already on your account, named “%(name)s”."),
        "too_many": gettext(
            "An account holds at most %(count)d SSH keys: delete one before adding another."
        ),
    }
    return messages[code]


@dataclass(frozen=True)
class PublicKey:
    key_type: str  # "ssh-ed25519", "ecdsa-sha2-nistp256", ..., "ssh-rsa"
    line: str  # "type base64 comment", as stored and installed
    comment: str
    fingerprint: str  # "SHA256:...", as `ssh-keygen -l` prints it


def ssh_fingerprint(blob: bytes) -> str:
    """OpenSSH's SHA256 fingerprint: the unpadded base64 of the key blob's SHA-256."""
    digest = base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
    return f"SHA256:{digest}"


def _key_type_refusal(key_type: str) -> SshKeyRefused:
    known = key_type.startswith(REFUSED_TYPE_PREFIXES) or key_type.endswith(REFUSED_TYPE_SUFFIX)
    return SshKeyRefused("unsupported_type" if known else "not_a_key")


def _clean_comment(comment: str) -> str:
    # The line ends up in authorized_keys: printable characters and single spaces only.
    kept = "".join(char for char in comment if char.isprintable() or char.isspace())
    return " ".join(kept.split())[:MAX_COMMENT_LENGTH]


def ssh_public_key_parse(text: str) -> PublicKey:
    """The public key in `text` (one line of a .pub file), or SshKeyRefused saying why not."""
    text = text.strip().lstrip("\ufeff")
    # First, before any other check: a private key is refused as such, whatever its shape.
    if any(marker in text for marker in PRIVATE_KEY_MARKERS):
        raise SshKeyRefused("private_key")
    if not text:
        raise SshKeyRefused("empty_key")
    if len(text) > MAX_TEXT_LENGTH:
        raise SshKeyRefused("not_a_key")
    if "\n" in text or "\r" in text:
        raise SshKeyRefused("one_line")
    parts = text.split(None, 2)
    key_type = parts[0]
    if key_type not in ACCEPTED_TYPES:
        raise _key_type_refusal(key_type)
    if len(parts) < 2:
        raise SshKeyRefused("damaged")
    try:
        key = load_ssh_public_key(f"{key_type} {parts[1]}".encode("ascii"))
    except (ValueError, UnsupportedAlgorithm, UnicodeEncodeError):
        # The library's message quotes the input: it is dropped, the code says enough.
        raise SshKeyRefused("damaged") from None
    if isinstance(key, RSAPublicKey) and key.key_size < MIN_RSA_BITS:
        raise SshKeyRefused("rsa_too_short", bits=key.key_size)
    # cryptography checked that the blob's own type is the line's; its encoding is canonical.
    _type, written_blob = key.public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH).split()
    comment = _clean_comment(parts[2]) if len(parts) > 2 else ""
    return PublicKey(
        key_type=key_type,
        line=" ".join(filter(None, (key_type, written_blob.decode(), comment))),
        comment=comment,
        fingerprint=ssh_fingerprint(base64.b64decode(written_blob)),
    )


def ssh_key_kind(key_type: str) -> str:
    """What `ssh-keygen -l` calls the key's type: ED25519, ECDSA or RSA."""
    return ACCEPTED_TYPES.get(key_type, key_type)
