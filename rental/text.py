"""Text people type that documents show: no control characters in, none XML cannot hold out.

An invoice copies the buyer's name, company and address, and its Factur-X XML must parse: XML
1.0 holds no C0 control but tab and line breaks, so one ESC in a company name would leave an
issued (hence unchangeable) invoice that never renders. The forms and the API refuse them
(these validators, on the model fields and the API's own fields); rendering strips whatever
reached a document anyway.
"""

import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

# C0 controls and DEL: meaningless in a name, a VAT number or an address.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# The same, but for the line breaks (and tabs) a multi-line field holds.
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# What XML 1.0 cannot hold (its Char production), surrogates included.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MESSAGE = _("Remove the control characters (such as ESC or a null byte) from this text.")


def refuse_control_characters(value: str) -> None:
    if _CONTROL.search(value or ""):
        raise ValidationError(MESSAGE, code="control_characters")


def refuse_control_characters_but_lines(value: str) -> None:
    if _CONTROL_BUT_LINES.search(value or ""):
        raise ValidationError(MESSAGE, code="control_characters")


def xml_safe(text: str) -> str:
    """`text` without the characters XML cannot hold."""
    return _NOT_XML.sub("", text)
