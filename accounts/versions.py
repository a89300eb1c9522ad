"""The version of what an account's own pages show of the account (its name, its SSH keys),
for the pages stored in the shared cache (rental.responsecache)."""

from rental.responsecache import versions_bump


def account_version(user_id: int) -> str:
    return f"account:{user_id}"


def account_changed(*, user_id: int) -> None:
    """The account's pages render afresh (rental.responsecache.versions_bump)."""
    versions_bump(account_version(user_id))
