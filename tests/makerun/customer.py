"""A customer of `make run`'s web process, over plain HTTP: a cookie jar, forms filled in from
the page they are on (its CSRF token included), every answer kept to be counted."""

import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import lxml.html
import requests


@dataclass
class Answer:
    method: str
    path: str
    status: int
    at: float


@dataclass
class Customer:
    base_url: str
    session: requests.Session = field(default_factory=requests.Session)
    answers: list[Answer] = field(default_factory=list)

    def _keep(self, response: requests.Response) -> requests.Response:
        for hop in [*response.history, response]:
            path = urlsplit(hop.url).path
            self.answers.append(Answer(hop.request.method, path, hop.status_code, time.time()))
        return response

    def get(self, path: str, *, poll: bool = False, **params) -> requests.Response:
        headers = {"HX-Request": "true"} if poll else {}
        url = urljoin(self.base_url, path)
        return self._keep(self.session.get(url, params=params, headers=headers, timeout=30))

    def submit(
        self, page: requests.Response, action: str, *, holding: tuple = (), **values
    ) -> requests.Response:
        """The form of `page` that posts to `action` (a path) and holds the `holding` (name,
        value) pair, with `values` changed (a list for several ticked boxes), sent as the
        browser sends it."""
        document = lxml.html.fromstring(page.content, base_url=page.url)
        found = []
        for form in document.forms:
            data: dict[str, list[str]] = {}
            for name, value in form.form_values():
                data.setdefault(name, []).append(value)
            target = urlsplit(form.get("action") or page.url).path
            if target == action and (not holding or holding[1] in data.get(holding[0], [])):
                found.append((form, data))
        assert found, f"no form to {action} {holding} on {page.url} ({page.status_code})\n" + (
            self.summary()
        )
        form, data = found[0]
        for name, value in values.items():
            data[name] = value if isinstance(value, list) else [str(value)]
        url = urljoin(self.base_url, action)
        method = (form.method or "get").lower()
        if method == "get":
            response = self.session.get(url, params=data, timeout=30)
        else:
            response = self.session.post(url, data=data, timeout=30)
        return self._keep(response)

    def statuses(self) -> Counter:
        return Counter(answer.status for answer in self.answers)

    def failures(self) -> list[Answer]:
        return [answer for answer in self.answers if answer.status >= 500]

    def summary(self) -> str:
        failed = Counter(f"{a.method} {a.path}" for a in self.failures())
        lines = [f"{len(self.answers)} requests, statuses {dict(sorted(self.statuses().items()))}"]
        lines += [f"  {count} x 5xx  {what}" for what, count in failed.most_common()]
        return "\n".join(lines)


def poll_url(page: requests.Response, element_id: str) -> str | None:
    """What the page's element polls (its data-hx-get), if it polls."""
    document = lxml.html.fromstring(page.content)
    found = document.get_element_by_id(element_id, None)
    return found.get("data-hx-get") if found is not None else None


def checkbox_values(page: requests.Response, name: str) -> list[str]:
    document = lxml.html.fromstring(page.content)
    return [box.get("value") for box in document.xpath(f"//input[@name='{name}']")]
