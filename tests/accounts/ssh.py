"""SSH keys for tests: made by OpenSSH's own ssh-keygen, as a customer's would be."""

import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def ssh_keygen(*args: str) -> str:
    if shutil.which("ssh-keygen") is None:
        pytest.fail("ssh-keygen is missing: install openssh-client (make deps lists it)")
    done = subprocess.run(["ssh-keygen", *args], capture_output=True, text=True, check=True)
    return done.stdout


def key_pair(directory: Path, kind: str, bits: int | None = None, *, pem: bool = False) -> Path:
    """A new key pair in `directory`; returns the private key's path (the public one is
    the same path with .pub)."""
    path = directory / f"id_{kind}_{bits or 'default'}{'_pem' if pem else ''}"
    size = ["-b", str(bits)] if bits else []
    pem_format = ["-m", "PEM"] if pem else []
    ssh_keygen("-q", "-t", kind, *size, *pem_format, "-N", "", "-C", "ada@laptop", "-f", str(path))
    return path


def public_key_of(private_key_path: Path) -> str:
    return Path(f"{private_key_path}.pub").read_text()


def ssh_keygen_fingerprint(private_key_path: Path) -> str:
    """The SHA256 fingerprint `ssh-keygen -lf` prints for the public key."""
    return ssh_keygen("-lf", f"{private_key_path}.pub").split()[1]


def quick_public_key(comment: str = "test") -> str:
    """A fresh ed25519 public key line, for tests that need many keys and no ssh-keygen."""
    line = (
        Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH)
        .decode()
    )
    return f"{line} {comment}"
