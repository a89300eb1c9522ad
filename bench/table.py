"""The one table `make bench` prints."""

from dataclasses import dataclass

HEADERS = ("#", "measurement", "result", "ratio (same run)", "target", "verdict", "before")


@dataclass(frozen=True)
class Row:
    number: str
    measurement: str
    result: str
    ratio: str = ""
    target: str = ""
    verdict: str = ""
    before: str = ""  # the same row measured before a change, when the bench knows it

    def cells(self) -> tuple[str, ...]:
        return (
            self.number,
            self.measurement,
            self.result,
            self.ratio,
            self.target,
            self.verdict,
            self.before,
        )


def table_render(rows: list[Row]) -> str:
    lines = [HEADERS, *(row.cells() for row in rows)]
    widths = [max(len(line[column]) for line in lines) for column in range(len(HEADERS))]

    def render(cells) -> str:
        return " | ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True))

    rule = "-+-".join("-" * width for width in widths)
    body = []
    previous = None
    for row in rows:
        if previous is not None and row.number != previous:
            body.append(rule)
        body.append(render(row.cells()).rstrip())
        previous = row.number
    return "\n".join([render(HEADERS).rstrip(), rule, *body])
