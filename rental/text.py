"""Text people type that documents show: nothing invisible in, nothing XML cannot hold out.

An invoice copies the buyer's name, company and address, and its Factur-X XML must parse: XML
1.0 holds no C0 control but tab and line breaks, so one ESC in a company name would leave an
issued (hence unchangeable) invoice that never renders. Characters XML holds can still make an
issued invoice say something else than it looks: a C1 control shows as a box, a bidi override
turns "ACME SA" into "AS EMCA" in the export, a zero-width space makes two names that look the
same differ, a non-character is no text at all. The forms and the API refuse them all (these
validators, on the model fields and the API's own fields), naming the character; rendering
strips whatever XML cannot hold that reached a document anyway.
"""

import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

# Meaningless in a name, a VAT number or an address: C1 controls (NEL, CSI), the bidi
# embeddings, overrides and isolates (not the marks, LRM and RLM, that Hebrew or Arabic text
# needs), the zero-width characters, surrogates (no character on their own) and the
# non-characters, U+FDD0 to U+FDEF and the last two code points of every plane.
_INVISIBLE = (
    "\x7f-\x9f\u200b-\u200d\u202a-\u202e\u2060\u2066-\u2069\ud800-\udfff\ufdd0-\ufdef\ufeff"
    + "".join(f"{chr(plane << 16 | 0xFFFE)}{chr(plane << 16 | 0xFFFF)}" for plane in range(17))
)
# With the C0 controls.
_CONTROL = re.compile(f"[\x00-\x1f{_INVISIBLE}]")
# The same, but for the line breaks (and tabs) a multi-line field holds.
_CONTROL_BUT_LINES = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f{_INVISIBLE}]")
# What XML 1.0 cannot hold (its Char production), surrogates included.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MESSAGE = _(
    "Remove the invisible or control character U+%(code)s from this text (such as ESC, a null "
    "byte, a zero-width space or a direction override)."
)


def _refuse(pattern: re.Pattern, value: str) -> None:
    found = pattern.search(value or "")
    if found:
        code = f"{ord(found.group()):04X}"
        raise ValidationError(MESSAGE, code="control_characters", params={"code": code})


def refuse_control_characters(value: str) -> None:
    _refuse(_CONTROL, value)


def refuse_control_characters_but_lines(value: str) -> None:
    _refuse(_CONTROL_BUT_LINES, value)


def xml_safe(text: str) -> str:
    """`text` without the characters XML cannot hold."""
    return _NOT_XML.sub("", text)
