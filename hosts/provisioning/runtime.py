"""How a rental runs on its hosts, as their script is told and answers (deploy/host/locagpu-host):
`grant`'s input (the keys, a requirements file to install), its access (the SSH port and login,
the container, its workspace volume, its JupyterLab) and `status`'s container and volume state,
validated here, then stored on the order, so that pages read them and never ask a host. The
JupyterLab token is the owner's secret: it stays out of the order's events (which the API,
webhooks and staff read)."""

from dataclasses import dataclass
from typing import Literal

from django.utils import timezone
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hosts.models import Host
from orders.models import Order

# The line of `grant`'s input after which a requirements file follows the keys.
REQUIREMENTS_MARKER = "[requirements]"
# Fields of an answer that never go into an event.
SECRET_FIELDS = frozenset({"jupyter_token"})
# What a container and a volume are after each verb succeeded (`status` says the same).
STATE_AFTER = {
    "grant": {"container": "running", "volume": "present"},
    "revoke": {"container": "exited", "volume": "present"},
    "purge": {"container": "absent", "volume": "absent"},
}


class AnswerRefused(ValueError):
    """The script answered JSON the store cannot use (a port out of range, a token with
    characters no URL carries as is): worth a retry, then staff."""


class _Answer(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class GrantAnswer(_Answer):
    user: str
    # `container`; `shared` on a development machine; `unix` on a host of accounts per rental.
    mode: str = Field("", max_length=16)
    login: str = Field("", max_length=64)
    # The SSH gateway's port on the host; absent: the host's own sshd.
    port: int | None = Field(None, ge=1, le=65535)
    container: str = Field("", max_length=64)
    volume: str = Field("", max_length=80)
    jupyter_port: int | None = Field(None, ge=1, le=65535)
    jupyter_token: str = Field("", max_length=128, pattern=r"^[A-Za-z0-9_.~-]*$")
    jupyter_scheme: Literal["http", "https", ""] = ""
    # A container's requirements file: installed by this grant, or kept from an earlier one.
    requirements: Literal["installed", "kept", ""] = ""


class StatusAnswer(_Answer):
    container: Literal["running", "exited", "absent"]
    volume: Literal["present", "absent"]


@dataclass(frozen=True)
class Granted:
    """A host of the order, its GPU indices there and what its `grant` answered."""

    host: Host
    indices: list[int]
    answer: GrantAnswer

    @property
    def port(self) -> int:
        return self.answer.port or self.host.ssh_port

    def for_event(self) -> dict:
        fields = self.answer.model_dump(exclude=set(SECRET_FIELDS), exclude_defaults=True)
        return {"host": self.host.name, **fields}


def _validated(model: type[_Answer], answer: dict):
    try:
        return model.model_validate(answer)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise AnswerRefused(problems) from error


@dataclass(frozen=True)
class RentalStart:
    """What a rental's container starts from: an image, and a requirements file installed in
    it at the start (hosts without containers leave it to staff, who confirm it)."""

    image: str
    requirements: str = ""


def grant_input(*, keys: list[str], start: RentalStart) -> str:
    """`grant`'s standard input: the public keys, one a line, then the requirements file after
    its marker (a line no key or requirement is)."""
    text = "\n".join(keys) + "\n"
    return f"{text}{REQUIREMENTS_MARKER}\n{start.requirements}\n" if start.requirements else text


def grant_answer(answer: dict, *, start: RentalStart | None = None) -> GrantAnswer:
    """The answer validated; a container's without its requirements said installed is refused:
    a rental never starts without what the customer asked for."""
    granted = _validated(GrantAnswer, answer)
    if start and start.requirements and granted.mode == "container" and not granted.requirements:
        raise AnswerRefused("requirements: the container's are not said to be installed")
    return granted


def status_answer(answer: dict) -> StatusAnswer:
    return _validated(StatusAnswer, answer)


def access_fields(*, granted: list[Granted], account: str) -> dict:
    """The order's access from its hosts' answers: it logs in to the first (`account`, the
    rental's Unix account, where the answer names no login); the notes give the command for
    each host of an order spanning several."""

    def login(item: Granted) -> str:
        return item.answer.login or account

    first = granted[0]
    every_host = [
        f"{item.host.name}: ssh -p {item.port} {login(item)}@{item.host.ssh_host} "
        f"(GPU {','.join(map(str, item.indices))})"
        for item in granted
    ]
    jupyter = first.answer.jupyter_port is not None and bool(first.answer.jupyter_token)
    states = {item.host.name: state_after("grant", item.answer.mode) for item in granted}
    return {
        "access_host": first.host.ssh_host,
        "access_port": first.port,
        "access_user": login(first),
        "access_notes": "\n".join(every_host) if len(granted) > 1 else "",
        "access_mode": first.answer.mode,
        "rental_container": first.answer.container,
        "rental_volume": first.answer.volume,
        "jupyter_port": first.answer.jupyter_port if jupyter else None,
        "jupyter_token": first.answer.jupyter_token if jupyter else "",
        "jupyter_scheme": (first.answer.jupyter_scheme or "http") if jupyter else "",
        **host_state_fields(states),
    }


def state_after(verb: str, mode: str) -> dict:
    """The state a verb leaves, where its success says it: no container outside container
    mode (rentals granted before answers named their mode had none), the files (its home or
    workspace) standing in for the volume."""
    state = dict(STATE_AFTER[verb])
    if mode != "container":
        state["container"] = "absent"
    return state


def host_state_fields(states: dict[str, dict]) -> dict:
    return {"host_state": states, "host_state_read_at": timezone.now()}


def host_state_record(*, order: Order, states: dict[str, dict]) -> None:
    """Store what the hosts said of the rental's container and volume (a plain UPDATE of
    those fields alone: no status moves with it)."""
    fields = host_state_fields({**order.host_state, **states})
    Order.objects.filter(pk=order.pk).update(**fields)
    for name, value in fields.items():
        setattr(order, name, value)
