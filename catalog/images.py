"""Container images: how a reference is written, and what a custom environment's description
holds (an image to start, or a requirements file to install at start).

The grammar is the one Docker and every OCI registry accept (distribution's `reference`
package): an optional registry host (with a port), lower-case path components, then a tag, a
digest or both. A reference with neither would mean "latest", which changes under a running
rental's feet: the store asks for one of the two.
"""

import ipaddress
import re
from dataclasses import dataclass
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN = (
    r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*"
)
_REFERENCE = re.compile(
    rf"^(?P<name>(?:{_DOMAIN}(?::[0-9]+)?/)?{_COMPONENT}(?:/{_COMPONENT})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>sha256:[0-9a-f]{64}))?$"
)
# distribution caps the name (registry included) at 255 characters.
MAX_NAME = 255
MAX_REFERENCE = MAX_NAME + 129 + 72
# What tells an image reference from a requirements file: one word holding a registry path,
# a tag or a digest, and none of what requirement lines are made of (version operators,
# extras, markers, URLs).
_LOOKS_LIKE_IMAGE = re.compile(r"^(?!.*://)[^\s=<>~!;\[\]]*[/:@][^\s=<>~!;\[\]]*$")
# A requirement as the host's pip may read it, from its index alone (deploy/host/locagpu-host
# checks the same): a project's name, its [extras], its versions, a marker after ";" whose
# tokens start with no "-", and --hash=sha256:... Nothing pip would read as an option (any
# token starting with "-": -r, -e, --no-binary, --index-url...), a URL, a path, a variable.
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_VERSION = r"(?:===|==|~=|!=|<=|>=|<|>) *[A-Za-z0-9*][A-Za-z0-9.*+!_-]*"
_MARKER_TOKEN = r"""[A-Za-z0-9_.<>=!~"'()][A-Za-z0-9_.<>=!~"'()-]*"""
_REQUIREMENT = re.compile(
    rf"{_NAME}(?: *\[ *{_NAME}(?: *, *{_NAME})* *\])?(?: *{_VERSION}(?: *, *{_VERSION})*)?"
    rf"(?: *; *{_MARKER_TOKEN}(?: +{_MARKER_TOKEN})*)?(?: +--hash=sha(?:256|384|512):[0-9a-f]+)*"
)
# pip's comments: from a "#" that starts the line or follows a space.
_COMMENT = re.compile(r"(?:^|\s)#.*$")

IMAGE_REFERENCE_HELP = _(
    "Write it as registry/name:tag or name@sha256: followed by 64 hexadecimal digits, in "
    "lower case (for example docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime)."
)


@dataclass(frozen=True)
class ImageReference:
    name: str
    tag: str
    digest: str

    @property
    def pinned(self) -> bool:
        return bool(self.digest)


def image_reference_parse(text: str) -> ImageReference:
    """`text` as an image reference with its tag or digest; ValidationError otherwise."""
    match = _REFERENCE.match(text) if len(text) <= MAX_REFERENCE else None
    if match is None or len(match["name"]) > MAX_NAME:
        raise ValidationError(
            _("“%(reference)s” is not an image reference. %(help)s"),
            code="image_reference",
            params={"reference": text[:80], "help": IMAGE_REFERENCE_HELP},
        )
    if not match["tag"] and not match["digest"]:
        raise ValidationError(
            _("Name the image with its tag or its digest. %(help)s"),
            code="image_reference_unpinned",
            params={"help": IMAGE_REFERENCE_HELP},
        )
    return ImageReference(name=match["name"], tag=match["tag"] or "", digest=match["digest"] or "")


def image_pinned_by_digest(text: str) -> None:
    """The store's own environments start the very image that was checked: a digest, always."""
    if text and not image_reference_parse(text).pinned:
        raise ValidationError(
            _("Pin the image by its digest (…@sha256: followed by 64 hexadecimal digits)."),
            code="image_not_pinned",
        )


@dataclass(frozen=True)
class CustomEnvironment:
    """What the customer's description asks for: exactly one of the two is set."""

    image: str = ""
    requirements: str = ""


def _registry_public(reference: ImageReference) -> None:
    """A customer's image comes from a registry of the Internet: the host pulls it, and a
    registry on its loopback or an address of a private network would have it query its own
    services (Docker speaks plain HTTP to loopback registries)."""
    first, _slash, rest = reference.name.partition("/")
    if not rest or not ("." in first or ":" in first or first == "localhost"):
        return  # no registry named: Docker Hub's
    host = first.rsplit(":", 1)[0].lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        refused = host == "localhost" or host.endswith(".localhost")
    else:
        refused = not address.is_global
    if refused:
        raise ValidationError(
            _("The registry “%(registry)s” is not on the Internet: name a public registry."),
            code="image_registry_private",
            params={"registry": first},
        )


def custom_environment_parse(details: str) -> CustomEnvironment:
    """A custom environment's description: an image reference alone on its line, or a
    requirements file installed at start, as requirements_lines writes it. ValidationError
    when the reference is malformed or a line is not a requirement."""
    text = details.strip()
    if _LOOKS_LIKE_IMAGE.match(text):
        _registry_public(image_reference_parse(text))
        return CustomEnvironment(image=text)
    return CustomEnvironment(requirements="\n".join(requirements_lines(text)))


def requirements_lines(text: str) -> list[str]:
    """The requirements of a file as the host's pip is given them: a line continued by a
    final backslash joined to the next, comments and blank lines left out, spaces collapsed;
    each a requirement (_REQUIREMENT). ValidationError naming the customer's line otherwise,
    or when no line is left."""
    lines: list[str] = []
    pending, first = "", 0
    # Windows' line ends are line ends; any other carriage return is refused below (pip, as
    # Python, would start a line there that the host's check never saw).
    given = text.replace("\r\n", "\n").split("\n")
    for number, line in enumerate([*given, ""], start=1):  # "": a last line's continuation
        # Tabs are layout; anything else a terminal or pip would not print is refused, the
        # bidirectional overrides that hide what a line says included.
        if not line.replace("\t", " ").isprintable():
            raise ValidationError(
                _("Line %(line)d of the requirements holds a character that cannot be printed."),
                code="requirements_unprintable",
                params={"line": number},
            )
        first = first or number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        requirement = " ".join(_COMMENT.sub("", pending + line).split())
        if requirement and not _REQUIREMENT.fullmatch(requirement):
            raise ValidationError(
                _(
                    "Line %(line)d is not a requirement pip can fetch from its index: write a "
                    "name, its [extras], its versions (==, >=, ~=…), a marker after ; and "
                    "--hash=sha256:…, or a comment. Options, URLs and paths are refused."
                ),
                code="requirements_line",
                params={"line": first},
            )
        lines += [requirement] if requirement else []
        pending, first = "", 0
    if not lines:
        raise ValidationError(
            _("The requirements name no package to install."), code="requirements_empty"
        )
    return lines


def cuda_supports(highest: Decimal | None, required: Decimal | None) -> bool:
    """Whether a driver whose highest CUDA is `highest` (None: not recorded) runs what needs
    `required` (None: no requirement)."""
    return required is None or (highest is not None and highest >= required)


def cuda_version(value: Decimal | None) -> str:
    """ "12.4" for Decimal("12.4"): as nvidia-smi and the image tags write it."""
    return "" if value is None else f"{value:.1f}"
