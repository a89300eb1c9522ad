"""Named functions a higher app registers for a lower one to call, so the lower app asks its
question (is money there? what else does the page show? who wants this event?) without
importing the apps that answer: the one way the apps depend on each other stays one way.

Apps register in their AppConfig.ready(). A name registered again replaces the first
function, so a ready() that runs twice (tests) registers nothing twice.
"""

from collections.abc import Iterator
from typing import Generic, TypeVar

Hook = TypeVar("Hook")


class Hooks(Generic[Hook]):
    def __init__(self) -> None:
        self._hooks: dict[str, Hook] = {}

    def register(self, name: str, hook: Hook) -> None:
        self._hooks[name] = hook

    def unregister(self, name: str) -> None:
        self._hooks.pop(name, None)

    def items(self) -> list[tuple[str, Hook]]:
        # A copy: a hook that registers another one while the caller iterates is no error.
        return list(self._hooks.items())

    def __iter__(self) -> Iterator[Hook]:
        return iter(list(self._hooks.values()))
