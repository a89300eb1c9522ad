"""The second factor in tests: an authenticator's codes, and a test client whose
force_login skips the second step as it skips the password."""

import time

from django.test import Client
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.oath import hotp
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.two_factor import two_factor_enabled


def authenticator_for(user) -> TOTPDevice:
    """The user's confirmed authenticator, created if they have none."""
    device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
    return device or TOTPDevice.objects.create(user=user, name="Test phone", confirmed=True)


def totp_code(device: TOTPDevice) -> str:
    """What the phone shows: the code of the current time step, or of the next one if the
    current one was used already (a step's code passes once; the device accepts one step
    ahead for clock drift)."""
    device.refresh_from_db()
    step = (int(time.time()) - device.t0) // device.step + device.drift
    counter = max(step, device.last_t + 1)
    return f"{hotp(device.bin_key, counter, digits=device.digits):0{device.digits}d}"


def second_factor_pass(client: Client, user) -> TOTPDevice:
    """Mark the client's logged-in session as having passed the second factor, as the
    verify page does (staff get an authenticator first)."""
    device = authenticator_for(user)
    session = client.session
    session[DEVICE_ID_SESSION_KEY] = device.persistent_id
    session.save()
    return device


class SecondFactorClient(Client):
    """force_login logs in past both steps: staff (and customers who turned the second
    factor on) get a verified session, so tests of what comes after need no code.
    `second_factor=False` stops after the password, as a real login does."""

    def force_login(self, user, backend=None, *, second_factor: bool = True):
        super().force_login(user, backend)
        if second_factor and (user.is_staff or two_factor_enabled(user=user)):
            second_factor_pass(self, user)


def second_factor_type_in(page, device: TOTPDevice) -> None:
    """In a browser sent to the verify page after the password: type the phone's code."""
    page.wait_for_url("**/account/security/verify/**")
    page.fill("input[name=code]", totp_code(device))
    page.click("form.form button[type=submit]")
